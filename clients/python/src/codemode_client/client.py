"""The synchronous client: one method per ``/v1`` route (see ``routes.ROUTES``)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import httpx

from . import calls
from .calls import Call
from .models import (
    ApprovalDecided,
    ApprovalList,
    ClientTool,
    CodeModeResult,
    Event,
    EventPage,
    FleetView,
    NodeDeleted,
    NodeList,
    NodeResultAccepted,
    Policy,
    PolicyRule,
    ProcessInput,
    RunList,
    RunView,
    SessionConfig,
    SessionDeleted,
    SessionList,
    SessionPutInput,
    SessionView,
    ShellAnswer,
    ShellExecInput,
    Skill,
    SkillDeleted,
    SkillList,
    StoreView,
    TenantApprovalList,
    TenantTool,
    TenantToolDeleted,
    TenantToolList,
    TenantToolPut,
    ToolDefinitions,
    ToolResult,
    ToolResultsAccepted,
    ToolsView,
    Transcript,
)
from .sse import SseMessage, SseParser
from .transport import (
    DEFAULT_TIMEOUT,
    RECONNECT_SECONDS,
    STREAM_TIMEOUT,
    check_stream,
    connection_error,
    default_headers,
    read_answer,
    request_args,
)


class CodeModeClient:
    """Typed client of the Code Mode API. Non-2xx answers raise ``CodeModeApiError`` subclasses::

    with CodeModeClient("http://127.0.0.1:3000", api_key="...") as client:
        result = client.exec("s1", "return 1+1")
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http_client or httpx.Client(base_url=self.base_url, timeout=timeout)
        self._headers = default_headers(api_key)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> CodeModeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def list_sessions(self, *, limit: int | None = None, cursor: str | None = None) -> SessionList:
        """The tenant's sessions, newest activity first; pass ``next`` as ``cursor`` for the next page."""
        return self._send(calls.list_sessions(limit, cursor))

    def put_session(self, session_id: str, config: SessionPutInput | Mapping[str, Any]) -> SessionConfig:
        """Creates or reconfigures a session; answers the clamped configuration."""
        return self._send(calls.put_session(session_id, config))

    def get_session(self, session_id: str) -> SessionView:
        return self._send(calls.get_session(session_id))

    def delete_session(self, session_id: str) -> SessionDeleted:
        """Deletes the session after aborting its parked runs."""
        return self._send(calls.delete_session(session_id))

    def exec(
        self,
        session_id: str,
        code: str | None = None,
        *,
        title: str = "exec",
        command: str | None = None,
        restart_safe: bool | None = None,
        await_results: bool | None = None,
        idempotency_key: str | None = None,
    ) -> CodeModeResult:
        """Runs a cell. A failed cell is a ``FailedResult`` (HTTP 200), not an exception."""
        return self._send(
            calls.exec_cell(session_id, code, title, command, restart_safe, await_results, idempotency_key)
        )

    def wait(self, session_id: str, run_id: str, *, idempotency_key: str | None = None) -> CodeModeResult:
        """Resumes a parked run (after its tool results, a yield, or an approval)."""
        return self._send(calls.wait(session_id, run_id, idempotency_key))

    def list_runs(self, session_id: str, *, limit: int | None = None, cursor: str | None = None) -> RunList:
        return self._send(calls.list_runs(session_id, limit, cursor))

    def get_run(self, session_id: str, run_id: str) -> RunView:
        return self._send(calls.get_run(session_id, run_id))

    def abort_run(self, session_id: str, run_id: str) -> CodeModeResult:
        """The aborted run's final result; ``ConflictError`` if it had already ended."""
        return self._send(calls.abort_run(session_id, run_id))

    def submit_tool_results(
        self, session_id: str, run_id: str, results: Iterable[ToolResult | Mapping[str, Any]]
    ) -> ToolResultsAccepted:
        """Answers pending client tool calls of a parked run; the next ``wait`` sees them."""
        return self._send(calls.submit_tool_results(session_id, run_id, results))

    def put_tools(self, session_id: str, tools: Iterable[ClientTool | Mapping[str, Any]]) -> ToolsView:
        """Replaces the session's client tools."""
        return self._send(calls.put_tools(session_id, tools))

    def get_tools(self, session_id: str) -> ToolsView:
        return self._send(calls.get_tools(session_id))

    def tool_definitions(self, session_id: str, format: str = "openai") -> ToolDefinitions:
        """exec and wait in a model API's shape: ``openai``, ``openai-responses``, ``anthropic`` or ``mcp``."""
        return self._send(calls.tool_definitions(session_id, format))

    def list_tenant_tools(self) -> TenantToolList:
        """The tenant's tools (SPEC §18), by name; credential headers by name only."""
        return self._send(calls.list_tenant_tools())

    def put_tenant_tool(self, name: str, tool: TenantToolPut | Mapping[str, Any]) -> TenantTool:
        """Create or replace a tool of the whole tenant (operator keys); ``headers`` are write-only."""
        return self._send(calls.put_tenant_tool(name, tool))

    def delete_tenant_tool(self, name: str) -> TenantToolDeleted:
        """Remove a tenant tool (operator keys)."""
        return self._send(calls.delete_tenant_tool(name))

    def list_events(self, session_id: str, *, after: str | None = None, limit: int | None = None) -> EventPage:
        return self._send(calls.list_events(session_id, after, limit))

    def transcript(self, session_id: str) -> Transcript:
        return self._send(calls.transcript(session_id))

    def get_store(self, session_id: str) -> StoreView:
        return self._send(calls.get_store(session_id))

    def fleet(self) -> FleetView:
        """Live workers, the cell queue and the tenant's own live runs per worker."""
        return self._send(calls.fleet())

    def shell_exec(self, session_id: str, command: str, **options: Any) -> ShellAnswer:
        """Shell ``exec`` (SPEC §7); a failed command is ``details["status"] == "failed"``, not an exception."""
        return self._send(calls.shell_exec(session_id, ShellExecInput(command=command, **options)))

    def process(self, session_id: str, action: str, **options: Any) -> ShellAnswer:
        """Shell ``process`` actions on background sessions (poll, write, kill, list …)."""
        return self._send(calls.process(session_id, ProcessInput(action=action, **options)))

    def get_policy(self) -> Policy:
        return self._send(calls.get_policy())

    def put_policy(self, rules: Iterable[PolicyRule | Mapping[str, Any]], *, default: str | None = None) -> Policy:
        """The tenant's tool policy (operator keys)."""
        return self._send(calls.put_policy(rules, default))

    def list_tenant_approvals(self) -> TenantApprovalList:
        return self._send(calls.list_tenant_approvals())

    def list_approvals(self, session_id: str) -> ApprovalList:
        return self._send(calls.list_approvals(session_id))

    def decide_approval(
        self, session_id: str, approval_id: str, decision: str, *, reason: str | None = None
    ) -> ApprovalDecided:
        """``approve`` or ``deny`` a pending tool call; the next ``wait`` acts on it."""
        return self._send(calls.decide_approval(session_id, approval_id, decision, reason))

    def list_nodes(self) -> NodeList:
        return self._send(calls.list_nodes())

    def answer_node(
        self, node_id: str, invocation_id: str, ok: bool, *, value: Any = None, error: str | None = None
    ) -> NodeResultAccepted:
        """A node's answer to one invocation."""
        return self._send(calls.answer_node(node_id, invocation_id, ok, value, error))

    def remove_node(self, node_id: str) -> NodeDeleted:
        return self._send(calls.remove_node(node_id))

    def list_skills(self) -> SkillList:
        return self._send(calls.list_skills())

    def put_skill(self, name: str, description: str, content: str) -> Skill:
        return self._send(calls.put_skill(name, description, content))

    def delete_skill(self, name: str) -> SkillDeleted:
        return self._send(calls.delete_skill(name))

    def put_session_skills(self, session_id: str, skills: Iterable[Skill | Mapping[str, Any]]) -> SkillList:
        return self._send(calls.put_session_skills(session_id, skills))

    def follow_events(self, session_id: str, *, after: str | None = None) -> Iterator[Event]:
        """Live tail of the session's events over SSE, from ``after`` (unset: from the first event).

        When the server closes the stream (a restart), it is reopened after the last event seen, so
        nothing is skipped or repeated; stop by leaving the loop."""
        while True:
            for message in self._stream(calls.follow_events(session_id, after)):
                event = Event.model_validate_json(message.data)
                after = event.id
                yield event
            time.sleep(RECONNECT_SECONDS)

    def connect_node(
        self, name: str, platform: str, commands: list[str], *, id: str | None = None, secret: str | None = None
    ) -> Iterator[SseMessage]:
        """A node's connection (SPEC §15): the events the API sends it (``paired``, then ``invoke``) until it ends."""
        for message in self._stream(calls.connect_node(name, platform, commands, id, secret)):
            yield message

    def _send(self, call: Call) -> Any:
        try:
            response = self._http.request(**self._args(call))
        except httpx.TransportError as error:
            raise connection_error(self.base_url, error) from error
        return read_answer(call, response)

    def _stream(self, call: Call) -> Iterator[SseMessage]:
        parser = SseParser()
        try:
            with self._http.stream(**self._args(call), timeout=STREAM_TIMEOUT) as response:
                if not response.is_success:
                    response.read()
                check_stream(self.base_url, response)
                for chunk in response.iter_text():
                    for message in parser.push(chunk):
                        yield message
        except httpx.TransportError as error:
            raise connection_error(self.base_url, error) from error

    def _args(self, call: Call) -> dict[str, Any]:
        args = request_args(call)
        args["headers"] = {**self._headers, **args["headers"]}
        return args
