"""The asyncio client: one method per ``/v1`` route (see ``routes.ROUTES``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

import anyio
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


class AsyncCodeModeClient:
    """Typed async client of the Code Mode API. Non-2xx answers raise ``CodeModeApiError`` subclasses::

    async with AsyncCodeModeClient("http://127.0.0.1:3000", api_key="...") as client:
        result = await client.exec("s1", "return 1+1")
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http_client or httpx.AsyncClient(base_url=self.base_url, timeout=timeout)
        self._headers = default_headers(api_key)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncCodeModeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def list_sessions(self, *, limit: int | None = None, cursor: str | None = None) -> SessionList:
        """The tenant's sessions, newest activity first; pass ``next`` as ``cursor`` for the next page."""
        return await self._send(calls.list_sessions(limit, cursor))

    async def put_session(self, session_id: str, config: SessionPutInput | Mapping[str, Any]) -> SessionConfig:
        """Creates or reconfigures a session; answers the clamped configuration."""
        return await self._send(calls.put_session(session_id, config))

    async def get_session(self, session_id: str) -> SessionView:
        return await self._send(calls.get_session(session_id))

    async def delete_session(self, session_id: str) -> SessionDeleted:
        """Deletes the session after aborting its parked runs."""
        return await self._send(calls.delete_session(session_id))

    async def exec(
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
        return await self._send(
            calls.exec_cell(session_id, code, title, command, restart_safe, await_results, idempotency_key)
        )

    async def wait(self, session_id: str, run_id: str, *, idempotency_key: str | None = None) -> CodeModeResult:
        """Resumes a parked run (after its tool results, a yield, or an approval)."""
        return await self._send(calls.wait(session_id, run_id, idempotency_key))

    async def list_runs(self, session_id: str, *, limit: int | None = None, cursor: str | None = None) -> RunList:
        return await self._send(calls.list_runs(session_id, limit, cursor))

    async def get_run(self, session_id: str, run_id: str) -> RunView:
        return await self._send(calls.get_run(session_id, run_id))

    async def abort_run(self, session_id: str, run_id: str) -> CodeModeResult:
        """The aborted run's final result; ``ConflictError`` if it had already ended."""
        return await self._send(calls.abort_run(session_id, run_id))

    async def submit_tool_results(
        self, session_id: str, run_id: str, results: Iterable[ToolResult | Mapping[str, Any]]
    ) -> ToolResultsAccepted:
        """Answers pending client tool calls of a parked run; the next ``wait`` sees them."""
        return await self._send(calls.submit_tool_results(session_id, run_id, results))

    async def put_tools(self, session_id: str, tools: Iterable[ClientTool | Mapping[str, Any]]) -> ToolsView:
        """Replaces the session's client tools."""
        return await self._send(calls.put_tools(session_id, tools))

    async def get_tools(self, session_id: str) -> ToolsView:
        return await self._send(calls.get_tools(session_id))

    async def tool_definitions(self, session_id: str, format: str = "openai") -> ToolDefinitions:
        """exec and wait in a model API's shape: ``openai``, ``openai-responses``, ``anthropic`` or ``mcp``."""
        return await self._send(calls.tool_definitions(session_id, format))

    async def list_tenant_tools(self) -> TenantToolList:
        """The tenant's tools (SPEC §18), by name; credential headers by name only."""
        return await self._send(calls.list_tenant_tools())

    async def put_tenant_tool(self, name: str, tool: TenantToolPut | Mapping[str, Any]) -> TenantTool:
        """Create or replace a tool of the whole tenant (operator keys); ``headers`` are write-only."""
        return await self._send(calls.put_tenant_tool(name, tool))

    async def delete_tenant_tool(self, name: str) -> TenantToolDeleted:
        """Remove a tenant tool (operator keys)."""
        return await self._send(calls.delete_tenant_tool(name))

    async def list_events(self, session_id: str, *, after: str | None = None, limit: int | None = None) -> EventPage:
        return await self._send(calls.list_events(session_id, after, limit))

    async def transcript(self, session_id: str) -> Transcript:
        return await self._send(calls.transcript(session_id))

    async def get_store(self, session_id: str) -> StoreView:
        return await self._send(calls.get_store(session_id))

    async def fleet(self) -> FleetView:
        """Live workers, the cell queue and the tenant's own live runs per worker."""
        return await self._send(calls.fleet())

    async def shell_exec(self, session_id: str, command: str, **options: Any) -> ShellAnswer:
        """Shell ``exec`` (SPEC §7); a failed command is ``details["status"] == "failed"``, not an exception."""
        return await self._send(calls.shell_exec(session_id, ShellExecInput(command=command, **options)))

    async def process(self, session_id: str, action: str, **options: Any) -> ShellAnswer:
        """Shell ``process`` actions on background sessions (poll, write, kill, list …)."""
        return await self._send(calls.process(session_id, ProcessInput(action=action, **options)))

    async def get_policy(self) -> Policy:
        return await self._send(calls.get_policy())

    async def put_policy(
        self, rules: Iterable[PolicyRule | Mapping[str, Any]], *, default: str | None = None
    ) -> Policy:
        """The tenant's tool policy (operator keys)."""
        return await self._send(calls.put_policy(rules, default))

    async def list_tenant_approvals(self) -> TenantApprovalList:
        return await self._send(calls.list_tenant_approvals())

    async def list_approvals(self, session_id: str) -> ApprovalList:
        return await self._send(calls.list_approvals(session_id))

    async def decide_approval(
        self, session_id: str, approval_id: str, decision: str, *, reason: str | None = None
    ) -> ApprovalDecided:
        """``approve`` or ``deny`` a pending tool call; the next ``wait`` acts on it."""
        return await self._send(calls.decide_approval(session_id, approval_id, decision, reason))

    async def list_nodes(self) -> NodeList:
        return await self._send(calls.list_nodes())

    async def answer_node(
        self, node_id: str, invocation_id: str, ok: bool, *, value: Any = None, error: str | None = None
    ) -> NodeResultAccepted:
        """A node's answer to one invocation."""
        return await self._send(calls.answer_node(node_id, invocation_id, ok, value, error))

    async def remove_node(self, node_id: str) -> NodeDeleted:
        return await self._send(calls.remove_node(node_id))

    async def list_skills(self) -> SkillList:
        return await self._send(calls.list_skills())

    async def put_skill(self, name: str, description: str, content: str) -> Skill:
        return await self._send(calls.put_skill(name, description, content))

    async def delete_skill(self, name: str) -> SkillDeleted:
        return await self._send(calls.delete_skill(name))

    async def put_session_skills(self, session_id: str, skills: Iterable[Skill | Mapping[str, Any]]) -> SkillList:
        return await self._send(calls.put_session_skills(session_id, skills))

    async def follow_events(self, session_id: str, *, after: str | None = None) -> AsyncIterator[Event]:
        """Live tail of the session's events over SSE, from ``after`` (unset: from the first event).

        When the server closes the stream (a restart), it is reopened after the last event seen, so
        nothing is skipped or repeated. Python closes an async generator left early only when it is
        collected: iterate it inside ``contextlib.aclosing(...)`` so the stream, one of the tenant's
        few (SPEC §10), is released as the loop ends."""
        while True:
            async for message in self._stream(calls.follow_events(session_id, after)):
                event = Event.model_validate_json(message.data)
                after = event.id
                yield event
            await anyio.sleep(RECONNECT_SECONDS)

    async def connect_node(
        self, name: str, platform: str, commands: list[str], *, id: str | None = None, secret: str | None = None
    ) -> AsyncIterator[SseMessage]:
        """A node's connection (SPEC §15): the events the API sends it (``paired``, then ``invoke``) until it ends."""
        async for message in self._stream(calls.connect_node(name, platform, commands, id, secret)):
            yield message

    async def _send(self, call: Call) -> Any:
        try:
            response = await self._http.request(**self._args(call))
        except httpx.TransportError as error:
            raise connection_error(self.base_url, error) from error
        return read_answer(call, response)

    async def _stream(self, call: Call) -> AsyncIterator[SseMessage]:
        parser = SseParser()
        try:
            async with self._http.stream(**self._args(call), timeout=STREAM_TIMEOUT) as response:
                if not response.is_success:
                    await response.aread()
                check_stream(self.base_url, response)
                async for chunk in response.aiter_text():
                    for message in parser.push(chunk):
                        yield message
        except httpx.TransportError as error:
            raise connection_error(self.base_url, error) from error

    def _args(self, call: Call) -> dict[str, Any]:
        args = request_args(call)
        args["headers"] = {**self._headers, **args["headers"]}
        return args
