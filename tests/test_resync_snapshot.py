"""chat:resync with snapshot: ended turns folded on the server, the rest as events."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_notebook.bridge.history import snapshot_resync
from acp_notebook.bridge.hub import Hub
from acp_notebook.wire import fold as folding


def _chunk(seq: int, text: str, message: str) -> dict[str, Any]:
    content = {"type": "text", "text": text}
    update = {"sessionUpdate": "agent_message_chunk", "messageId": message, "content": content}
    return {"kind": "update", "seq": seq, "update": update}


def _fold(events: list[dict[str, Any]], state: Any = None) -> dict[str, Any]:
    state = state or folding.initial_state()
    for event in events:
        state = folding.fold(state, event)
    return folding.snapshot(state)


EVENTS: list[dict[str, Any]] = [
    {"kind": "agent_status", "seq": 1, "status": "ready", "agent": "demo", "sessionId": "s"},
    {"kind": "turn_started", "seq": 2, "turn": 1, "prompt": "one"},
    _chunk(3, "first ", "m1"),
    _chunk(4, "answer", "m1"),
    {"kind": "turn_ended", "seq": 5, "turn": 1, "stopReason": "end_turn"},
    {"kind": "turn_started", "seq": 6, "turn": 2, "prompt": "two"},
    {"kind": "permission_request", "seq": 7, "requestId": "p1", "options": []},
    _chunk(8, "second", "m2"),
]


def test_the_history_up_to_the_last_ended_turn_is_one_snapshot() -> None:
    resync = snapshot_resync(EVENTS, pending={"p1"})
    assert resync["snapshot"] == _fold(EVENTS[:5])
    assert resync["events"] == EVENTS[5:]
    # Folding the rest onto the snapshot's state ends where folding everything does.
    state = folding.initial_state()
    for event in EVENTS[:5]:
        state = folding.fold(state, event)
    assert _fold(resync["events"], state) == _fold(EVENTS)


def test_a_request_still_pending_from_an_ended_turn_is_sent_again() -> None:
    events = [*EVENTS[:4], EVENTS[6], EVENTS[4]]
    resync = snapshot_resync(events, pending={"p1"})
    assert resync["events"] == [EVENTS[6]]
    assert snapshot_resync(events, pending=set())["events"] == []


def test_no_ended_turn_no_snapshot() -> None:
    assert snapshot_resync(EVENTS[:4], pending=set()) == {"events": EVENTS[:4]}


async def test_the_hub_folds_a_turn_when_it_ends_not_when_a_page_asks() -> None:
    hub = Hub()
    try:
        chat_id = await hub.open_chat("demo", env={"ACP_DEMO_DELAY": "0"})
        await hub.chats[chat_id].start_task
        assert hub.chats[chat_id].session.status == "ready"
        chat = hub.chats[chat_id]
        ack = await hub.handle(
            {"type": "chat:prompt", "chatId": chat_id, "text": "history 50", "id": 1}
        )
        assert ack["accepted"]
        for _ in range(1000):  # the turn takes a few ms; 10 s at most
            if chat.resync is not None:
                break
            await asyncio.sleep(0.01)
        assert chat.resync is not None, "not folded when the turn ended"
        seq, folded = chat.resync
        assert seq == chat.session.last_seq  # folded at the turn's end, nothing since
        asked = await hub.handle(
            {"type": "chat:resync", "chatId": chat_id, "snapshot": True, "id": 2}
        )
        assert asked["snapshot"] is folded["snapshot"]
        assert asked["snapshot"] == _fold(chat.session.resync())
        assert [i["type"] for i in asked["snapshot"]["items"]].count("tool") == 2
    finally:
        await hub.close()


def test_the_snapshot_holds_the_whole_history_past_the_kernels_bounds() -> None:
    # A server whose history_bytes is over the kernel fold's bound: a resync still
    # shows every item of the history (the fold's bounds are the kernel's).
    big = "x" * (folding.MAX_WEIGHT + 1000)
    events = [
        {"kind": "turn_started", "seq": 1, "turn": 1, "prompt": "one"},
        _chunk(2, big, "m1"),
        *(
            {
                "kind": "update",
                "seq": seq,
                "update": {"sessionUpdate": "tool_call", "toolCallId": f"c{seq}"},
            }
            for seq in range(3, folding.MAX_ITEMS + 100)
        ),
        {"kind": "turn_ended", "seq": folding.MAX_ITEMS + 100, "turn": 1},
    ]
    snap = snapshot_resync(events, pending=set())["snapshot"]
    assert "dropped" not in snap and snap["items"][1]["text"] == big
    assert len(snap["items"]) == folding.MAX_ITEMS + 99
