"""Cells through the sync and the async client: exec, a parked cell and wait, a client tool."""

from __future__ import annotations

import asyncio

from codemode_client import (
    AsyncCodeModeClient,
    CodeModeClient,
    CompletedResult,
    RunView,
    ToolResultsAccepted,
    WaitingResult,
)


def test_sync_exec_completes_with_the_cells_value(client: CodeModeClient, sid: str) -> None:
    result = client.exec(sid, "return 1+1", title="add")
    assert isinstance(result, CompletedResult)
    assert result.value == 2
    assert result.telemetry.counter_scope == "run"


def test_async_exec_completes_with_the_cells_value(base_url: str, api_key: str | None, sid: str) -> None:
    async def run() -> object:
        async with AsyncCodeModeClient(base_url, api_key=api_key) as client:
            return await client.exec(sid, "return 1+1")

    result = asyncio.run(run())
    assert isinstance(result, CompletedResult)
    assert result.value == 2


def test_a_parked_cell_resumes_through_wait(client: CodeModeClient, sid: str) -> None:
    parked = client.exec(sid, 'const got = await yield_control("pause"); return 7;', title="park")
    assert isinstance(parked, WaitingResult)
    assert parked.reason == "yield"
    run = client.get_run(sid, parked.run_id)
    assert isinstance(run, RunView)
    assert run.status == "waiting"
    assert [r.run_id for r in client.list_runs(sid).runs] == [parked.run_id]

    resumed = client.wait(sid, parked.run_id)
    assert isinstance(resumed, CompletedResult)
    assert resumed.value == 7
    assert client.get_run(sid, parked.run_id).status == "completed"


def test_a_client_tool_is_answered_through_tool_results(client: CodeModeClient, sid: str) -> None:
    tools = client.put_tools(sid, [{"name": "ask", "description": "answered by the platform", "replay_safe": True}])
    assert "ask" in [entry.callable_name for entry in tools.catalog]
    parked = client.exec(sid, "const a = await ask({ q: 1 }); return a.answer * 2;", restart_safe=True)
    assert isinstance(parked, WaitingResult)
    assert parked.reason == "pending_tools"
    assert [(call.id, call.tool) for call in parked.pending_tool_calls or []] == [("bridge:callValue:1", "ask")]

    accepted = client.submit_tool_results(
        sid, parked.run_id, [{"id": "bridge:callValue:1", "ok": True, "value": {"answer": 21}}]
    )
    assert accepted == ToolResultsAccepted(accepted=1)
    done = client.wait(sid, parked.run_id)
    assert isinstance(done, CompletedResult)
    assert done.value == 42


def test_async_parked_cell_and_tool_results(base_url: str, api_key: str | None, sid: str) -> None:
    async def run() -> object:
        async with AsyncCodeModeClient(base_url, api_key=api_key) as client:
            await client.put_tools(sid, [{"name": "ask", "description": "answered by the platform"}])
            parked = await client.exec(sid, "return (await ask({})).n + 1;")
            assert isinstance(parked, WaitingResult)
            call = (parked.pending_tool_calls or [])[0]
            await client.submit_tool_results(sid, parked.run_id, [{"id": call.id, "ok": True, "value": {"n": 1}}])
            return await client.wait(sid, parked.run_id)

    result = asyncio.run(run())
    assert isinstance(result, CompletedResult)
    assert result.value == 2
