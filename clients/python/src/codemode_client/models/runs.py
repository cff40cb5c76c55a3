"""Code Mode cells (SPEC §2, §3): exec and wait inputs, their results, runs and tool results."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field, TypeAdapter

from .base import ApiModel

RunStatus = Literal["requested", "running", "waiting", "completed", "failed", "expired", "lost"]


class CodeModeExecInput(ApiModel):
    title: str
    code: str | None = None
    command: str | None = None
    restart_safe: bool | None = None
    await_results: bool | None = None


class WaitInput(ApiModel):
    run_id: str


class ToolError(ApiModel):
    message: str
    name: str | None = None


class ToolResult(ApiModel):
    """One answer to a pending client tool call (``pendingToolCalls[].id``)."""

    id: str
    ok: bool
    value: Any = None
    error: str | ToolError | None = None


class ToolResultsInput(ApiModel):
    results: list[ToolResult]


class ToolResultsAccepted(ApiModel):
    accepted: int


class Telemetry(ApiModel):
    catalog_size: int
    search_count: int
    describe_count: int
    call_count: int
    counter_scope: str
    visible_tools: list[Any]
    sources: dict[str, int]


class PendingToolCall(ApiModel):
    id: str
    method: str
    tool: str | None = None
    input: Any = None


class Repair(ApiModel):
    allowed: bool
    remaining_attempts: int
    reason: str


class _ResultBase(ApiModel):
    output: list[dict[str, Any]] | None = None
    replay_safe: bool
    telemetry: Telemetry


class CompletedResult(_ResultBase):
    status: Literal["completed"]
    value: Any = None
    warnings: list[str] | None = None


class WaitingResult(_ResultBase):
    status: Literal["waiting"]
    run_id: str
    reason: Literal["pending_tools", "yield"]
    pending_tool_calls: list[PendingToolCall] | None = None


class FailedResult(_ResultBase):
    """A run that failed. exec and wait answer it with HTTP 200: it is a result, not an exception."""

    status: Literal["failed"]
    error: str
    code: str | None = None
    failure_phase: Literal["input", "guest", "bridge", "host"]
    bridge_dispatch_started: bool
    repair: Repair | None = None


CodeModeResult = Annotated[Union[CompletedResult, WaitingResult, FailedResult], Field(discriminator="status")]
CODE_MODE_RESULT = TypeAdapter(CodeModeResult)


class _RunFields(ApiModel):
    """What a run listing and a run view both say of a run."""

    run_id: str
    session_id: str
    title: str
    status: RunStatus
    restart_safe: bool
    owner: str | None
    epoch: int
    created_at: str
    started_at: str | None
    ended_at: str | None
    parked_at: str | None
    expires_at: str | None
    updated_at: str


class RunSummary(_RunFields):
    replay_safe: bool | None = None


class RunList(ApiModel):
    runs: list[RunSummary]
    next: str | None


class RunView(_RunFields):
    last_result: CodeModeResult | None
