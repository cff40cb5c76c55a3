"""One function per route: the request it takes (path, query, body, headers), built the same way
for the sync and the async client, which only differ in how they send it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from .models import (
    ApprovalDecisionInput,
    ClientTool,
    ClientToolsPut,
    CodeModeExecInput,
    NodeConnectInput,
    NodeResultInput,
    PolicyInput,
    PolicyRule,
    ProcessInput,
    SessionPutInput,
    SessionSkillsPut,
    ShellExecInput,
    Skill,
    TenantSkillPut,
    TenantToolPut,
    ToolResult,
    ToolResultsInput,
    WaitInput,
)
from .models.base import ApiModel
from .routes import ROUTES, Route


@dataclass(frozen=True)
class Call:
    route: Route
    path: str
    query: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def call(
    operation_id: str,
    path_params: Mapping[str, str] | None = None,
    *,
    query: Mapping[str, object | None] | None = None,
    body: ApiModel | None = None,
    headers: Mapping[str, str | None] | None = None,
) -> Call:
    route = ROUTES[operation_id]
    path = route.path
    for name, value in (path_params or {}).items():
        path = path.replace("{" + name + "}", _segment(value))
    return Call(
        route,
        path,
        {k: str(v) for k, v in (query or {}).items() if v is not None},
        None if body is None else body.to_json_body(),
        {k: v for k, v in (headers or {}).items() if v is not None},
    )


def _segment(value: str) -> str:
    """An id as one path segment: `/`, `?`, `%` and spaces are encoded, and so is an id made of dots
    only, which a URL library would otherwise resolve as `.`/`..` before the service sees it."""
    if value and set(value) == {"."}:
        return "%2E" * len(value)
    return quote(value, safe="")


def _given(**options: object) -> dict[str, object]:
    """The optional arguments a caller gave: a body leaves the others out rather than sending null."""
    return {name: value for name, value in options.items() if value is not None}


def _idempotency(key: str | None) -> dict[str, str | None]:
    return {"Idempotency-Key": key}


def _model(kind: type[ApiModel], value: ApiModel | Mapping[str, Any]) -> ApiModel:
    return value if isinstance(value, kind) else kind.model_validate(value)


def list_sessions(limit: int | None, cursor: str | None) -> Call:
    return call("listSessions", query={"limit": limit, "cursor": cursor})


def put_session(sid: str, config: SessionPutInput | Mapping[str, Any]) -> Call:
    return call("putSession", {"sid": sid}, body=_model(SessionPutInput, config))


def get_session(sid: str) -> Call:
    return call("getSession", {"sid": sid})


def delete_session(sid: str) -> Call:
    return call("deleteSession", {"sid": sid})


def exec_cell(
    sid: str,
    code: str | None,
    title: str,
    command: str | None,
    restart_safe: bool | None,
    await_results: bool | None,
    idempotency_key: str | None,
) -> Call:
    body = CodeModeExecInput(
        title=title, **_given(code=code, command=command, restart_safe=restart_safe, await_results=await_results)
    )
    return call("exec", {"sid": sid}, body=body, headers=_idempotency(idempotency_key))


def wait(sid: str, run_id: str, idempotency_key: str | None) -> Call:
    return call("wait", {"sid": sid}, body=WaitInput(run_id=run_id), headers=_idempotency(idempotency_key))


def list_runs(sid: str, limit: int | None, cursor: str | None) -> Call:
    return call("listRuns", {"sid": sid}, query={"limit": limit, "cursor": cursor})


def get_run(sid: str, run_id: str) -> Call:
    return call("getRun", {"sid": sid, "runId": run_id})


def abort_run(sid: str, run_id: str) -> Call:
    return call("abortRun", {"sid": sid, "runId": run_id})


def submit_tool_results(sid: str, run_id: str, results: Iterable[ToolResult | Mapping[str, Any]]) -> Call:
    body = ToolResultsInput(results=[_model(ToolResult, r) for r in results])
    return call("submitToolResults", {"sid": sid, "runId": run_id}, body=body)


def put_tools(sid: str, tools: Iterable[ClientTool | Mapping[str, Any]]) -> Call:
    return call("putTools", {"sid": sid}, body=ClientToolsPut(tools=[_model(ClientTool, t) for t in tools]))


def get_tools(sid: str) -> Call:
    return call("getTools", {"sid": sid})


def tool_definitions(sid: str, format: str) -> Call:
    return call("getToolDefinitions", {"sid": sid}, query={"format": format})


def list_tenant_tools() -> Call:
    return call("listTenantTools")


def put_tenant_tool(name: str, tool: TenantToolPut | Mapping[str, Any]) -> Call:
    return call("putTenantTool", {"name": name}, body=_model(TenantToolPut, tool))


def delete_tenant_tool(name: str) -> Call:
    return call("deleteTenantTool", {"name": name})


def list_events(sid: str, after: str | None, limit: int | None) -> Call:
    return call("listEvents", {"sid": sid}, query={"after": after, "limit": limit})


def follow_events(sid: str, after: str | None) -> Call:
    return call("listEvents", {"sid": sid}, query={"after": after}, headers={"Accept": "text/event-stream"})


def transcript(sid: str) -> Call:
    return call("getTranscript", {"sid": sid})


def get_store(sid: str) -> Call:
    return call("getStore", {"sid": sid})


def fleet() -> Call:
    return call("getFleet")


def shell_exec(sid: str, input: ShellExecInput | Mapping[str, Any]) -> Call:
    return call("shellExec", {"sid": sid}, body=_model(ShellExecInput, input))


def process(sid: str, input: ProcessInput | Mapping[str, Any]) -> Call:
    return call("process", {"sid": sid}, body=_model(ProcessInput, input))


def get_policy() -> Call:
    return call("getPolicy")


def put_policy(rules: Iterable[PolicyRule | Mapping[str, Any]], default: str | None) -> Call:
    return call("putPolicy", body=PolicyInput(rules=[_model(PolicyRule, r) for r in rules], **_given(default=default)))


def list_tenant_approvals() -> Call:
    return call("listTenantApprovals")


def list_approvals(sid: str) -> Call:
    return call("listApprovals", {"sid": sid})


def decide_approval(sid: str, approval_id: str, decision: str, reason: str | None) -> Call:
    body = ApprovalDecisionInput(decision=decision, **_given(reason=reason))
    return call("decideApproval", {"sid": sid, "approvalId": approval_id}, body=body)


def list_nodes() -> Call:
    return call("listNodes")


def connect_node(name: str, platform: str, commands: list[str], id: str | None, secret: str | None) -> Call:
    body = NodeConnectInput(name=name, platform=platform, commands=commands, **_given(id=id, secret=secret))
    return call("connectNode", body=body, headers={"Accept": "text/event-stream"})


def answer_node(node_id: str, invocation_id: str, ok: bool, value: Any, error: str | None) -> Call:
    body = NodeResultInput(invocation_id=invocation_id, ok=ok, **_given(value=value, error=error))
    return call("answerNodeInvocation", {"id": node_id}, body=body)


def remove_node(node_id: str) -> Call:
    return call("removeNode", {"id": node_id})


def list_skills() -> Call:
    return call("listSkills")


def put_skill(name: str, description: str, content: str) -> Call:
    return call("putSkill", {"name": name}, body=TenantSkillPut(description=description, content=content))


def delete_skill(name: str) -> Call:
    return call("deleteSkill", {"name": name})


def put_session_skills(sid: str, skills: Iterable[Skill | Mapping[str, Any]]) -> Call:
    return call("putSessionSkills", {"sid": sid}, body=SessionSkillsPut(skills=[_model(Skill, s) for s in skills]))
