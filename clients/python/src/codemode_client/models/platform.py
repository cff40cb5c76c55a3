"""Tools, tool definitions, policy and approvals, nodes, skills, shell and the fleet view."""

from __future__ import annotations

from typing import Any, Literal

from .base import ApiModel

Decision = Literal["allow", "deny", "approve"]


class _ToolFields(ApiModel):
    """What a client tool and a tenant tool are registered with (SPEC §5, §18)."""

    description: str
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    endpoint: str | None = None
    replay_safe: bool | None = None
    idempotent: bool | None = None
    timeout_ms: int | None = None


class ClientTool(_ToolFields):
    """A session client tool (SPEC §5): answered through tool-results, or by its ``endpoint``."""

    name: str


class ClientToolsPut(ApiModel):
    tools: list[ClientTool]


class TenantToolPut(_ToolFields):
    """A tool of the whole tenant (SPEC §18), as ``PUT /v1/tools/{name}`` takes it. ``headers`` are
    write-only credential headers: sent with every call of the tool, never shown again."""

    headers: dict[str, str] | None = None


class TenantTool(ClientTool):
    """A tenant tool as the service shows it: its credential headers by name only."""

    header_names: list[str] | None = None


class TenantToolList(ApiModel):
    tools: list[TenantTool]


class TenantToolDeleted(ApiModel):
    name: str
    deleted: bool


class CatalogEntry(ApiModel):
    callable_name: str
    tool_name: str
    label: str | None = None
    description: str
    source: str
    api_path: str | None = None
    input: str | None = None
    output: str | None = None
    replay_safe: bool


class ToolsView(ApiModel):
    catalog: list[CatalogEntry]
    exec_description: str


class PolicyRule(ApiModel):
    tool: str
    decision: Decision


class PolicyInput(ApiModel):
    rules: list[PolicyRule]
    default: Decision | None = None


class Policy(PolicyInput):
    pass


class Approval(ApiModel):
    approval_id: str
    run_id: str
    call_id: str
    tool: str
    input: Any = None
    endpoint: str | None = None
    requested_at: str


class ApprovalList(ApiModel):
    approvals: list[Approval]


class TenantApproval(Approval):
    session_id: str


class TenantApprovalList(ApiModel):
    approvals: list[TenantApproval]


class ApprovalDecisionInput(ApiModel):
    decision: Literal["approve", "deny"]
    reason: str | None = None


class ApprovalDecided(Approval):
    decision: Literal["approve", "deny"]
    reason: str | None = None


class Node(ApiModel):
    id: str
    name: str
    platform: str
    connected: bool
    commands: list[str]
    connected_at: str | None = None
    last_seen_at: str


class NodeList(ApiModel):
    nodes: list[Node]


class NodeConnectInput(ApiModel):
    name: str
    platform: str
    commands: list[str]
    id: str | None = None
    secret: str | None = None


class NodeResultInput(ApiModel):
    invocation_id: str
    ok: bool
    value: Any = None
    error: str | None = None


class NodeResultAccepted(ApiModel):
    accepted: bool


class NodeDeleted(ApiModel):
    id: str
    deleted: bool


class Skill(ApiModel):
    name: str
    description: str
    content: str


class SkillSummary(ApiModel):
    name: str
    description: str


class SkillList(ApiModel):
    skills: list[SkillSummary]


class TenantSkillPut(ApiModel):
    description: str
    content: str


class SessionSkillsPut(ApiModel):
    skills: list[Skill]


class SkillDeleted(ApiModel):
    name: str
    deleted: bool


class ShellExecInput(ApiModel):
    command: str
    title: str | None = None
    workdir: str | None = None
    env: dict[str, str] | None = None
    yield_ms: float | None = None
    background: bool | None = None
    timeout_seconds: float | None = None
    pty: bool | None = None
    await_results: bool | None = None
    host: str | None = None
    node: str | None = None
    elevated: bool | None = None


class ProcessInput(ApiModel):
    action: str
    session_id: str | None = None
    data: str | None = None
    eof: bool | None = None
    keys: list[str] | None = None
    hex: list[str] | None = None
    literal: str | None = None
    text: str | None = None
    bracketed: bool | None = None
    offset: int | None = None
    limit: int | None = None
    timeout: float | str | None = None


class ShellAnswer(ApiModel):
    """A shell answer (SPEC §7): ``text`` for the model, ``details`` (by ``details["status"]``) for code."""

    text: str
    details: dict[str, Any]


class FleetCapacity(ApiModel):
    workers: int
    threads: int
    cell_slots: int
    parked_slots: int


class FleetQueue(ApiModel):
    waiting: int
    active: int
    delayed: int
    oldest_waiting_at: str | None


class FleetWorker(ApiModel):
    worker_id: str
    lease_age_ms: int
    report: dict[str, Any] | None
    runs: dict[str, list[dict[str, Any]]]


class FleetView(ApiModel):
    workers: list[FleetWorker]
    capacity: FleetCapacity
    queue: FleetQueue | None
    unheld: list[dict[str, Any]]
    nodes: list[Node]


class ToolDefinitions(ApiModel):
    """exec and wait as a model API takes them (SPEC §14, §18): one dict per tool in ``format``'s shape."""

    tools: list[dict[str, Any]]


class ApiErrorBody(ApiModel):
    error: str
    code: str
    details: Any = None
