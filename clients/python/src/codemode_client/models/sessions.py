"""Sessions (SPEC §2): their configuration, listing, event log, transcript and store."""

from __future__ import annotations

from typing import Any, Literal

from .base import ApiModel
from .platform import Policy, PolicyInput
from .runs import CodeModeResult


class CodeModeLimits(ApiModel):
    timeout_ms: int | None = None
    memory_limit_bytes: int | None = None
    max_output_bytes: int | None = None
    max_snapshot_bytes: int | None = None
    max_pending_tool_calls: int | None = None
    snapshot_ttl_seconds: int | None = None
    search_default_limit: int | None = None
    max_search_limit: int | None = None
    results_ttl_seconds: int | None = None


class ShellSettings(ApiModel):
    background_ms: int | None = None
    timeout_seconds: int | None = None
    cleanup_ms: int | None = None
    max_output_chars: int | None = None
    pending_max_output_chars: int | None = None
    input_wait_idle_ms: int | None = None
    notify_on_exit: bool | None = None
    notify_on_exit_empty_success: bool | None = None


class SessionPutInput(ApiModel):
    agent_id: str | None = None
    code_mode: CodeModeLimits | None = None
    shell: ShellSettings | None = None
    policy: PolicyInput | None = None
    agents: bool | None = None
    repair_attempts: int | None = None
    notify_url: str | None = None


class SessionConfig(ApiModel):
    session_id: str
    agent_id: str | None
    code_mode: CodeModeLimits
    shell: ShellSettings
    policy: Policy | None = None
    agents: bool
    repair_attempts: int
    notify_url: str | None


class SessionCounts(ApiModel):
    runs: int
    events: int
    transcript_entries: int


class SessionView(SessionConfig):
    counts: SessionCounts
    created_at: str
    updated_at: str


class SessionDeleted(ApiModel):
    session_id: str
    deleted: bool
    aborted_runs: list[str]


class SessionRunCounts(ApiModel):
    running: int
    parked: int


class SessionSummary(ApiModel):
    session_id: str
    agent_id: str | None
    created_at: str
    updated_at: str
    runs: SessionRunCounts


class SessionList(ApiModel):
    sessions: list[SessionSummary]
    next: str | None


class Event(ApiModel):
    """One entry of a session's event log; ``type`` is e.g. ``run.completed`` (SPEC §2)."""

    id: str
    type: str
    run_id: str | None = None
    at: str
    data: dict[str, Any]


class EventPage(ApiModel):
    events: list[Event]
    next: str | None


class TranscriptEntry(ApiModel):
    kind: Literal["input", "result"]
    call: Literal["exec", "wait"]
    run_id: str | None
    at: str
    input: Any = None
    result: CodeModeResult | None = None


class Transcript(ApiModel):
    entries: list[TranscriptEntry]


class StoreView(ApiModel):
    values: dict[str, Any]
