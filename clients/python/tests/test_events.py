"""The event log: a page of events, and a live SSE tail that ends at run.completed."""

from __future__ import annotations

import asyncio
import threading
from contextlib import aclosing

from codemode_client import AsyncCodeModeClient, CodeModeClient, CompletedResult, Event


def test_events_page_shows_the_run(client: CodeModeClient, sid: str) -> None:
    result = client.exec(sid, "return 3", title="three")
    assert isinstance(result, CompletedResult)
    page = client.list_events(sid)
    types = [event.type for event in page.events]
    assert types[-3:] == ["run.requested", "run.started", "run.completed"]
    assert page.events[-1].data["result"]["value"] == 3


def test_sse_follows_a_new_run_until_run_completed(client: CodeModeClient, sid: str) -> None:
    client.put_session(sid, {"agent_id": "python-client"})
    after = client.list_events(sid).events[-1].id
    # The cell runs beside the open stream; whether its events come live or as the replay after
    # `after`, the stream carries each once, in order, and nothing from before `after`.
    runner = threading.Thread(target=lambda: client.exec(sid, "return 5;"))
    runner.start()
    seen: list[Event] = []
    for event in client.follow_events(sid, after=after):
        seen.append(event)
        if event.type == "run.completed":
            break
    runner.join(timeout=30)
    assert [e.type for e in seen] == ["run.requested", "run.started", "run.completed"]
    assert seen[-1].data["result"]["value"] == 5


def test_async_sse_replays_from_the_start_until_run_completed(base_url: str, api_key: str | None, sid: str) -> None:
    async def run() -> list[str]:
        async with AsyncCodeModeClient(base_url, api_key=api_key) as client:
            await client.exec(sid, "return 1+1")
            types: list[str] = []
            async with aclosing(client.follow_events(sid)) as events:
                async for event in events:
                    types.append(event.type)
                    if event.type == "run.completed":
                        break
            return types

    types = asyncio.run(asyncio.wait_for(run(), timeout=30))
    assert types[-3:] == ["run.requested", "run.started", "run.completed"]
