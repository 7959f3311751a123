"""The prompt queue through the hub and a real demo-agent subprocess: a prompt during a
turn is queued, changed, sent in order as turns end, steered into the running turn, and
a cancel empties the queue saying so. And the agent's slash commands."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

from acp_notebook.bridge.hub import Hub
from acp_notebook.kernel.transcript import compact
from acp_notebook.wire.contracts import MAX_QUEUE, stream_event
from acp_notebook.wire.fold import fold, initial_state, snapshot
from tests.support.hub_chats import Recorder, open_demo


async def send(hub: Hub, chat_id: str, text: str) -> dict[str, Any]:
    return await hub.handle({"type": "chat:prompt", "chatId": chat_id, "text": text, "id": 1})


async def change(hub: Hub, chat_id: str, op: str, turn: int, **more: Any) -> dict[str, Any]:
    message = {"type": "chat:queue", "chatId": chat_id, "op": op, "turn": turn, **more}
    return await hub.handle(message, user="alice", name="Alice")


def queued(event: dict[str, Any]) -> list[tuple[int, str]]:
    return [(q["turn"], q["prompt"]) for q in event["prompts"]]


async def test_prompts_during_a_turn_queue_and_go_out_in_order(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    first = await send(hub, chat_id, "ask-user")  # waits for an answer: a long turn
    assert (first["turn"], first.get("queued")) == (1, None)
    ask = await rec.kind("elicitation_request")
    for n, text in ((2, "hello two"), (3, "hello three"), (4, "hello four")):
        ack = await send(hub, chat_id, text)
        assert (ack["turn"], ack["queued"]) == (n, True)
    event = await rec.until(lambda e: e["kind"] == "queue" and len(e["prompts"]) == 3)
    assert queued(event) == [(2, "hello two"), (3, "hello three"), (4, "hello four")]

    assert (await change(hub, chat_id, "move", 4, index=0))["accepted"]
    assert (await change(hub, chat_id, "edit", 2, text="plan"))["accepted"]
    assert (await change(hub, chat_id, "remove", 3))["accepted"]
    removed = await rec.kind("queue", reason="removed")
    assert (removed["removed"], removed["by"]) == ([3], "Alice")
    assert queued(removed) == [(4, "hello four"), (2, "plan")]
    # A turn no longer queued (never was, removed, or started) cannot be changed.
    for turn in (1, 3, 99):
        bad = await change(hub, chat_id, "remove", turn)
        assert bad["error"] == "INVALID" and f"turn {turn} is not queued" in bad["detail"]
    bad = await change(hub, chat_id, "move", 2)
    assert bad["error"] == "INVALID" and "index" in bad["detail"]

    answer = {"type": "chat:elicitation.respond", "chatId": chat_id, "action": "decline"}
    assert (await hub.handle({**answer, "requestId": ask["requestId"]}))["accepted"]
    await rec.kind("turn_ended", turn=2)
    started = [(e["turn"], e["prompt"]) for e in rec.of("turn_started")]
    assert started == [(1, "ask-user"), (4, "hello four"), (2, "plan")]
    assert [e["turn"] for e in rec.of("turn_ended")] == [1, 4, 2]
    # Each queued prompt left the queue as its turn started, the queue event first.
    kinds = [e["kind"] for e in rec.events if e["kind"] in ("queue", "turn_started")]
    assert kinds[-4:] == ["queue", "turn_started", "queue", "turn_started"]
    assert rec.events[-1]["kind"] == "turn_ended" and not hub.chats[chat_id].session.queue
    for event in rec.events:
        stream_event.validate_python(event)
    state = initial_state()
    for event in rec.events:
        fold(state, event)  # type: ignore[arg-type]
    assert snapshot(state)["queue"] == []


async def test_a_cancel_empties_the_queue_and_says_so(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    await send(hub, chat_id, "slow")
    await send(hub, chat_id, "hello")
    await send(hub, chat_id, "think")
    await rec.until(lambda e: e["kind"] == "update" and "tick 1" in str(e["update"]))
    assert (await hub.handle({"type": "chat:cancel", "chatId": chat_id}))["accepted"]
    dropped = await rec.kind("queue", reason="cancelled")
    assert (dropped["prompts"], dropped["removed"]) == ([], [2, 3])
    assert (await rec.kind("turn_ended", turn=1))["stopReason"] == "cancelled"
    # Nothing of the queue runs after the cancel; the next prompt is the next turn.
    assert (await send(hub, chat_id, "hello"))["turn"] == 4
    await rec.kind("turn_ended", turn=4)
    assert [e["turn"] for e in rec.of("turn_started")] == [1, 4]


async def test_the_queue_is_bounded(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    await send(hub, chat_id, "slow")
    for _ in range(MAX_QUEUE):
        assert (await send(hub, chat_id, "hello"))["queued"]
    full = await send(hub, chat_id, "hello")
    assert full["error"] == "BUSY" and f"{MAX_QUEUE} prompts are queued" in full["detail"]
    await hub.handle({"type": "chat:cancel", "chatId": chat_id})
    await rec.kind("turn_ended", turn=1)


async def test_a_queued_prompt_steers_the_running_turn(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    assert hub.chats[chat_id].session.can_steer  # the demo advertises claude's meta
    await send(hub, chat_id, "slow")
    await rec.until(lambda e: e["kind"] == "update" and "tick 2" in str(e["update"]))
    assert (await send(hub, chat_id, "go faster"))["turn"] == 2
    assert (await change(hub, chat_id, "steer", 2))["accepted"]
    steered = await rec.kind("queue", steered=2)
    assert (steered["prompts"], steered["by"]) == ([], "Alice")
    await rec.until(lambda e: e["kind"] == "update" and "(steered: go faster)" in str(e["update"]))
    # The steered prompt is part of the running turn: both end when it does.
    first = await rec.kind("turn_ended", turn=1)
    second = await rec.kind("turn_ended", turn=2)
    assert first["stopReason"] == second["stopReason"] == "end_turn"
    assert [e["turn"] for e in rec.of("turn_started")] == [1]
    state = initial_state()
    for event in rec.events:
        fold(state, event)  # type: ignore[arg-type]
    users = [i["text"] for i in snapshot(state)["items"] if i["type"] == "user"]
    assert users == ["slow", "go faster"]
    # No turn runs now: nothing to steer.
    await send(hub, chat_id, "ask-user")
    await rec.kind("elicitation_request")
    assert (await send(hub, chat_id, "later"))["turn"] == 4
    await hub.handle({"type": "chat:cancel", "chatId": chat_id})
    await rec.kind("turn_ended", turn=3)
    bad = await change(hub, chat_id, "steer", 4)
    assert bad["error"] == "INVALID" and "turn 4 is not queued" in bad["detail"]


async def test_the_demo_offers_its_slash_commands(hub: Hub) -> None:
    chat_id = await hub.open_chat("demo", env={"ACP_DEMO_DELAY": "0", "ACP_DEMO_COMMANDS": "1"})
    rec = Recorder(hub.subscribe(chat_id))
    event = await rec.until(
        lambda e: (
            e["kind"] == "update" and e["update"]["sessionUpdate"] == "available_commands_update"
        )
    )
    names = [c["name"] for c in event["update"]["availableCommands"]]
    assert names == ["slow", "plan", "stream", "think"]
    # A command is sent as prompt text, as ACP says.
    await send(hub, chat_id, "/think")
    await rec.kind("turn_ended", turn=1)
    assert "Done thinking" in rec.text()


async def test_the_agents_exit_empties_the_queue_and_runs_none_of_it(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    await send(hub, chat_id, "ask-user")
    await rec.kind("elicitation_request")
    await send(hub, chat_id, "hello")
    await send(hub, chat_id, "think")
    os.killpg(hub.chats[chat_id].session.conn.pid or 0, signal.SIGKILL)
    dropped = await rec.kind("queue", reason="exited")
    assert (dropped["prompts"], dropped["removed"]) == ([], [2, 3])
    await rec.kind("turn_ended", turn=1)
    await rec.kind("agent_status", status="exited")
    await asyncio.sleep(0.2)  # nothing more starts
    assert [e["turn"] for e in rec.of("turn_started")] == [1]


def test_a_saved_transcript_keeps_no_queue() -> None:
    state = initial_state()
    fold(state, {"kind": "turn_started", "seq": 1, "turn": 1, "prompt": "first"})
    fold(state, {"kind": "queue", "seq": 2, "prompts": [{"turn": 2, "prompt": "x" * 10_000}]})
    assert snapshot(state)["queue"] == [{"turn": 2, "prompt": "x" * 10_000}]
    assert "queue" not in compact(snapshot(state))
