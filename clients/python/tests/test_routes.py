"""The other /v1 route groups, each answered and parsed into its model by the live service:
sessions, tool definitions, abort, policy and approvals, skills, nodes, shell, fleet, stream quota."""

from __future__ import annotations

import asyncio
import json
import re
import uuid

import pytest

from codemode_client import (
    AsyncCodeModeClient,
    CodeModeClient,
    CompletedResult,
    ConflictError,
    FailedResult,
    NotFoundError,
    RateLimitError,
    WaitingResult,
)


def test_a_session_is_configured_listed_read_and_deleted(client: CodeModeClient, sid: str) -> None:
    config = client.put_session(sid, {"agent_id": "py-agent", "code_mode": {"timeout_ms": 5000}})
    assert (config.session_id, config.agent_id, config.code_mode.timeout_ms) == (sid, "py-agent", 5000)
    client.exec(sid, "return 1")
    view = client.get_session(sid)
    assert (view.counts.runs, view.counts.transcript_entries) == (1, 2)
    assert [entry.kind for entry in client.transcript(sid).entries] == ["input", "result"]
    assert client.get_store(sid).values == {}
    assert sid in [s.session_id for s in client.list_sessions(limit=100).sessions]
    deleted = client.delete_session(sid)
    assert (deleted.session_id, deleted.deleted, deleted.aborted_runs) == (sid, True, [])
    with pytest.raises(NotFoundError):
        client.get_session(sid)


def test_tool_definitions_in_each_model_api_shape(client: CodeModeClient, sid: str) -> None:
    assert [t["function"]["name"] for t in client.tool_definitions(sid, "openai").tools] == ["exec", "wait"]
    assert [t["name"] for t in client.tool_definitions(sid, "anthropic").tools] == ["exec", "wait"]
    assert "inputSchema" in client.tool_definitions(sid, "mcp").tools[0]
    responses = client.tool_definitions(sid, "openai-responses").tools
    assert [(t["type"], t["name"]) for t in responses] == [("function", "exec"), ("function", "wait")]


def test_a_tenant_tool_is_stored_listed_seen_by_sessions_and_removed(client: CodeModeClient, sid: str) -> None:
    name = f"py_tool_{uuid.uuid4().hex[:8]}"
    schema = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    stored = client.put_tenant_tool(name, {"description": "Order by id", "input_schema": schema})
    assert (stored.name, stored.description, stored.header_names) == (name, "Order by id", None)
    assert name in [t.name for t in client.list_tenant_tools().tools]
    assert name in [e.tool_name for e in client.get_tools(sid).catalog]
    assert client.delete_tenant_tool(name).deleted is True
    assert name not in [t.name for t in client.list_tenant_tools().tools]


def test_aborting_a_parked_run_then_again_is_a_conflict(client: CodeModeClient, sid: str) -> None:
    parked = client.exec(sid, "await yield_control(); return 1")
    assert isinstance(parked, WaitingResult)
    aborted = client.abort_run(sid, parked.run_id)
    assert isinstance(aborted, FailedResult)
    assert (aborted.code, aborted.error) == ("aborted", "code mode execution aborted")
    with pytest.raises(ConflictError) as caught:
        client.abort_run(sid, parked.run_id)
    assert (caught.value.status, caught.value.error) == (409, "run has already ended.")


def test_an_approved_client_tool_call_comes_back_as_pending(base_url: str, api_key: str | None, sid: str) -> None:
    async def run() -> object:
        async with AsyncCodeModeClient(base_url, api_key=api_key) as client:
            await client.put_session(sid, {"policy": {"rules": [{"tool": "ask", "decision": "approve"}]}})
            await client.put_tools(sid, [{"name": "ask", "description": "needs an approval"}])
            # exec stays open while the call waits for its approval (SPEC §11).
            cell = asyncio.create_task(client.exec(sid, "return (await ask({})).n;"))
            approvals = []
            while not approvals:
                await asyncio.sleep(0.1)
                approvals = (await client.list_approvals(sid)).approvals
            assert sid in [a.session_id for a in (await client.list_tenant_approvals()).approvals]
            decided = await client.decide_approval(sid, approvals[0].approval_id, "approve", reason="fine")
            assert (decided.tool, decided.decision, decided.reason) == ("ask", "approve", "fine")
            parked = await asyncio.wait_for(cell, 30)
            assert isinstance(parked, WaitingResult)
            call = (parked.pending_tool_calls or [])[0]
            await client.submit_tool_results(sid, parked.run_id, [{"id": call.id, "ok": True, "value": {"n": 4}}])
            return await client.wait(sid, parked.run_id)

    result = asyncio.run(asyncio.wait_for(run(), 60))
    assert isinstance(result, CompletedResult)
    assert result.value == 4


def test_the_tenant_policy_reads_and_writes_back(client: CodeModeClient) -> None:
    policy = client.get_policy()
    assert client.put_policy(policy.rules, default=policy.default) == policy


def test_skills_of_the_tenant_and_of_a_session(client: CodeModeClient, sid: str) -> None:
    name = f"py-skill-{uuid.uuid4().hex[:8]}"
    stored = client.put_skill(name, "how to deploy", "# Deploy\nrun it")
    assert (stored.name, stored.content) == (name, "# Deploy\nrun it")
    assert name in [s.name for s in client.list_skills().skills]
    assert (
        client.put_session_skills(sid, [{"name": "local", "description": "d", "content": "c"}]).skills[0].name
        == "local"
    )
    assert client.delete_skill(name).deleted is True


def test_a_node_pairs_over_sse_and_is_removed(client: CodeModeClient) -> None:
    name = f"py-node-{uuid.uuid4().hex[:8]}"
    stream = client.connect_node(name, "linux", ["echo"])
    paired = next(stream)
    assert paired.event == "paired"
    node_id = json.loads(paired.data)["id"]
    assert [(n.name, n.connected) for n in client.list_nodes().nodes if n.id == node_id] == [(name, True)]
    with pytest.raises(ConflictError):
        client.answer_node(node_id, "inv_unknown", True, value=1)
    assert client.remove_node(node_id).deleted is True
    assert [m.event for m in stream] == ["removed"]


def test_shell_exec_and_process(client: CodeModeClient, sid: str) -> None:
    answer = client.shell_exec(sid, "echo hi")
    assert (answer.details["status"], answer.details["exitCode"], answer.details["aggregated"]) == (
        "completed",
        0,
        "hi",
    )
    assert client.process(sid, "list").details == {"status": "completed", "sessions": []}


def test_the_fleet_shows_a_live_worker(client: CodeModeClient) -> None:
    fleet = client.fleet()
    assert len(fleet.workers) >= 1
    assert fleet.capacity.workers == len(fleet.workers)


def test_too_many_open_streams_is_a_rate_limit_with_retry_after(client: CodeModeClient, sid: str) -> None:
    client.exec(sid, "return 1")
    streams = []
    try:
        with pytest.raises(RateLimitError) as caught:
            for _ in range(64):
                streams.append(client.follow_events(sid))
                next(streams[-1])
        assert caught.value.code == "tenant_limit"
        assert re.fullmatch(
            r"tenant event stream quota reached \(\d+ open at once\); close a stream first\.", caught.value.error
        )
        assert caught.value.details == {"limit": "streams"}
        assert caught.value.retry_after is not None and caught.value.retry_after >= 1
    finally:
        for stream in streams:
            stream.close()
