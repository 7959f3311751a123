"""Runs of text chunks merged on the hot path: in the session (chunks read together)
and in ``ChunkRun`` (where events wait), without losing, reordering or re-timing any."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_notebook.agent.catalogue import AgentSpec
from acp_notebook.agent.jsonrpc import Notification
from acp_notebook.bridge.chat_session import ChatSession
from acp_notebook.bridge.subscriptions import Subscription
from acp_notebook.wire.chunks import ChunkRun, update_chunk_key
from acp_notebook.wire.contracts import StreamEvent, UpdateEvent


def chunk(i: int, message_id: str = "m1", seq: int | None = None) -> UpdateEvent:
    update = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": message_id,
        "content": {"type": "text", "text": f"{i} "},
    }
    return {"kind": "update", "update": update, "seq": i + 1 if seq is None else seq, "ts": i}


def text(event: Any) -> str:
    value: str = event["update"]["content"]["text"]
    return value


def test_a_long_run_keeps_every_chunk_in_order() -> None:
    events = [chunk(i) for i in range(3 * ChunkRun.BLOCK + 7)]
    key = update_chunk_key(events[0]["update"])
    assert key is not None
    run = ChunkRun(events[0], key)
    assert run.event() is events[0]
    for event in events[1:]:
        run.add(event)
    merged = run.event()
    assert text(merged) == "".join(text(e) for e in events)
    # seq is the last chunk's, ts the first's (a thought's start).
    assert (merged["seq"], merged["ts"]) == (len(events), 0)
    assert run.event() is merged and run.size == len(text(merged))
    run.add(chunk(len(events)))
    assert text(run.event()) == text(merged) + f"{len(events)} "


def test_keep_tail_then_more_chunks() -> None:
    run = ChunkRun(chunk(0), ("agent_message_chunk", "m1"))
    for i in range(1, 1000):
        run.add(chunk(i))
    whole = "".join(f"{i} " for i in range(1000))
    run.keep_tail(100)
    assert text(run.event()) == "…" + whole[-99:] and run.size == 100
    run.add(chunk(1000))
    assert text(run.event()) == "…" + whole[-99:] + "1000 "


def note(**update: Any) -> Notification:
    return Notification("session/update", {"sessionId": "s1", "update": update})


def say(i: int, message_id: str = "m1") -> Notification:
    content = {"type": "text", "text": f"{i} "}
    return note(sessionUpdate="agent_message_chunk", messageId=message_id, content=content)


async def test_session_merges_chunks_read_together() -> None:
    events: list[StreamEvent] = []
    # Never started: the agent's side is played by feeding the session directly.
    session = ChatSession("c1", AgentSpec("fake", ("fake-agent",)), cwd=".", sink=events.append)
    for i in range(500):  # one read's worth: dispatched without yielding to the loop
        session._on_notification(say(i))
    session._on_notification(say(500, message_id="m2"))  # another message: a new run
    session._on_notification(note(sessionUpdate="tool_call", toolCallId="t1", title="x"))
    session._on_notification(say(501, message_id="m2"))
    assert [e["update"]["sessionUpdate"] for e in events] == [
        "agent_message_chunk",
        "agent_message_chunk",
        "tool_call",
    ], "a run ends with the first other event, before it"
    await asyncio.sleep(0)  # the reader yields: what is left goes out
    assert [e["seq"] for e in events] == [1, 2, 3, 4]
    assert text(events[0]) == "".join(f"{i} " for i in range(500))
    assert (events[0]["update"]["messageId"], text(events[1])) == ("m1", "500 ")
    assert (events[3]["update"]["messageId"], text(events[3])) == ("m2", "501 ")
    assert [e["seq"] for e in session.resync()] == [1, 2, 3, 4]


async def test_a_held_subscription_merges_chunks_and_sends_anything_else_at_once() -> None:
    sub = Subscription("c1", None, hold=30)
    sub.push(chunk(0))
    first = await asyncio.wait_for(sub.next_frame(), 5)  # nothing was sent before: at once
    assert first is not None and [text(e) for e in first["events"]] == ["0 "]
    for i in range(1, 50):
        sub.push(chunk(i))
    waiting = asyncio.create_task(sub.next_frame())
    await asyncio.sleep(0.05)
    assert not waiting.done()  # only chunks wait: they are held, and merge meanwhile
    for i in range(50, 100):
        sub.push(chunk(i))
    sub.push({"kind": "turn_ended", "seq": 101, "ts": 0, "turn": 1})
    frame = await asyncio.wait_for(waiting, 5)  # anything else ends the hold
    assert frame is not None
    assert [e["kind"] for e in frame["events"]] == ["update", "turn_ended"]
    assert text(frame["events"][0]) == "".join(f"{i} " for i in range(1, 100))
    sub.push(chunk(100, seq=102))
    waiting = asyncio.create_task(sub.next_frame())
    await asyncio.sleep(0.05)
    assert not waiting.done()
    sub.close()  # closing ends it too, and what was held is still sent
    frame = await asyncio.wait_for(waiting, 5)
    assert frame is not None and [text(e) for e in frame["events"]] == ["100 "]
    assert await asyncio.wait_for(sub.next_frame(), 5) is None


async def test_a_hold_ends_on_its_own() -> None:
    sub = Subscription("c1", None, hold=0.05)
    sub.push(chunk(0))
    assert await asyncio.wait_for(sub.next_frame(), 5) is not None
    sub.push(chunk(1))
    sub.push(chunk(2))
    frame = await asyncio.wait_for(sub.next_frame(), 5)
    assert frame is not None and [text(e) for e in frame["events"]] == ["1 2 "]
