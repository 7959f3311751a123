"""Agent faults at each point of the lifecycle, through the real Hub and a real subprocess.

For each (fault, point) the invariants of issue 8 are checked: every pending request
resolved exactly once (one answer reached the agent, one ``*_resolved`` reached each
of two subscribers), no auto-approval, a clear error, no orphan process, no unhandled
exception (``clean_logs``), and the chat stays usable or says why not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable

import pytest

from acp_notebook.wire import fold as folding
from tests.support.fault_chats import PERSON, Event, FaultChat, drain
from tests.support.processes import alive, all_gone

OpenChat = Callable[..., Awaitable[FaultChat]]

POINTS = ("initialize", "session_new", "stream", "question", "permission")
# The agent lives on and behaves afterwards.
SURVIVES = ("garbage", "huge", "flood", "deep", "objects", "spawn")
DIES = ("crash", "orphan", "close_stdout")
START_TIMEOUT = 2.0  # for a hang before the session exists
CANCEL_GRACE = 1.0  # for a hang in a turn
FLOOD = 5000


def flood_text(count: int) -> str:
    return "".join(f"{i} " for i in range(count))


def message_text(events: list[Event], message_id: str | None = None) -> str:
    """The agent's text (of one message, or all); garbage updates are skipped."""
    parts = []
    for e in events:
        update = e.get("update") if e["kind"] == "update" else None
        if not isinstance(update, dict) or update.get("sessionUpdate") != "agent_message_chunk":
            continue
        content = update.get("content")
        wanted = message_id is None or update.get("messageId") == message_id
        if wanted and isinstance(content, dict) and isinstance(content.get("text"), str):
            parts.append(content["text"])
    return "".join(parts)


def check_resolved_once(fc: FaultChat) -> dict[str, Event]:
    """Each request every subscriber saw is resolved exactly once there; returns them."""
    resolved: dict[str, Event] = {}
    for rec in fc.recs:
        asked = [e["requestId"] for e in rec.events if e["kind"].endswith("_request")]
        ended = Counter(e["requestId"] for e in rec.events if e["kind"].endswith("_resolved"))
        assert ended == Counter(asked), (asked, ended)
        for e in rec.events:
            if e["kind"].endswith("_resolved"):
                assert resolved.setdefault(e["requestId"], e) == e
    return resolved


def check_no_auto_approval(fc: FaultChat, resolved: dict[str, Event]) -> None:
    """Only the person's own answers approve anything, here and at the agent."""
    approvals = [r for r in resolved.values() if r["outcome"] in ("selected", "accepted")]
    assert all(r.get("by") == PERSON for r in approvals), approvals
    agent_approvals = [
        a
        for a in fc.answers_received()
        if isinstance(a.get("result"), dict)
        and (
            a["result"].get("action") == "accept"
            or a["result"].get("outcome", {}).get("optionId") == "allow"
        )
    ]
    assert len(agent_approvals) <= len(approvals)


def check_folds(fc: FaultChat) -> None:
    """What each subscriber shows: nothing left pending, the agent's end stated."""
    for rec in fc.recs:
        state = folding.initial_state()
        for event in rec.events:
            state = folding.fold(state, event)
        snap = folding.snapshot(state)
        assert not folding.pending_requests(state)
        assert snap["agent"]["status"] == "exited" and not snap["turn"]["active"]
        assert any(i["type"] == "error" for i in snap["items"])


async def check_dead(fc: FaultChat, pid: int, pgid: int) -> Event:
    """A clear error, every process gone, and a prompt says why the chat cannot go on."""
    exited = (await fc.everyone("agent_status", status="exited"))[0]
    assert exited["detail"], exited
    await all_gone([pid, *fc.child_pids()], pgid)
    ack = await fc.prompt("still there?")
    assert ack["error"] == "AGENT_EXITED" and ack["detail"], ack
    return exited


async def check_usable(fc: FaultChat, turn: int) -> None:
    ack = await fc.prompt("still there?")
    assert ack.get("turn") == turn, ack
    ended = await fc.everyone("turn_ended", turn=turn)
    assert ended[0]["stopReason"] == "end_turn"
    assert "echo: still there?" in message_text(fc.rec.events)


@pytest.mark.fault("{fault} at {point}")
@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("fault", (*SURVIVES, *DIES, "hang"))
async def test_agent_fault(fault_chat: OpenChat, fault: str, point: str) -> None:
    fc = await fault_chat(
        fault,
        point,
        env={"FAULT_FLOOD": str(FLOOD)},
        start_timeout=START_TIMEOUT,
        cancel_grace=CANCEL_GRACE,
    )
    pid = fc.session.conn.pid
    assert pid is not None
    early = point in ("initialize", "session_new")
    req: Event | None = None
    if not early:
        assert fc.session.status == "ready"
        assert (await fc.prompt("go"))["turn"] == 1
        if point in ("question", "permission"):
            kind = "elicitation_request" if point == "question" else "permission_request"
            req = (await fc.everyone(kind))[0]

    if fault in SURVIVES:
        assert fc.session.status == "ready"
        await fc.everyone("agent_status", status="ready")
        if point == "stream":
            await fc.everyone("turn_ended", turn=1)
            assert message_text(fc.rec.events, "m") == "before the fault after the fault"
        elif req is not None:
            answer = (
                {"action": "accept", "values": {"color": "green", "tags": ["a", "c"]}}
                if point == "question"
                else {"optionId": "allow"}
            )
            assert (await fc.answer(req, **answer))["accepted"]
            resolved = await fc.everyone(req["kind"].replace("request", "resolved"))
            assert resolved[0]["by"] == PERSON
            await fc.everyone("turn_ended", turn=1)
            received = fc.answers_received()
            assert len(received) == 1, received
            expected = (
                {"action": "accept", "content": {"color": "green", "tags": ["a", "c"]}}
                if point == "question"
                else {"outcome": {"outcome": "selected", "optionId": "allow"}}
            )
            assert received[0]["result"] == expected
        if fault == "flood":
            for rec in fc.recs:
                assert message_text(rec.events, "flood") == flood_text(FLOOD)
        if fault in ("huge", "objects"):
            # The person is told what the agent did wrong, once.
            for rec in fc.recs:
                told = [e["message"] for e in rec.events if e["kind"] == "agent_error"]
                assert len(told) == 1 and "limit 16 MiB" in told[0], told
        if fault == "deep":  # three lines, each lost and said so
            for rec in fc.recs:
                told = [e["message"] for e in rec.events if e["kind"] == "agent_error"]
                assert (
                    told
                    == [
                        "the agent sent a line that could not be read (nested deeper than 64"
                        " levels); it is skipped"
                    ]
                    * 3
                ), told
        await check_usable(fc, 1 if early else 2)
    elif fault in DIES:
        exited = await check_dead(fc, pid, pid)
        if fault == "crash":
            assert exited["exitCode"] == 3 and "crashing at" in exited["stderrTail"]
        if fault == "orphan":
            assert fc.child_pids(), "the agent left a child behind"
        if not early:
            ended = await fc.everyone("turn_ended", turn=1)
            assert ended[0]["error"]
        if req is not None:
            resolved = await fc.everyone(req["kind"].replace("request", "resolved"))
            assert resolved[0]["outcome"] == "cancelled" and "by" not in resolved[0]
            assert fc.answers_received() == []  # nobody was left to answer
    else:  # hang
        if early:
            exited = await check_dead(fc, pid, pid)
            assert "did not start within" in exited["detail"]
        else:
            # Stop works on a hung agent: the pending request is cancelled and the turn ends.
            assert (await fc.cancel())["accepted"]
            if req is not None:
                resolved = await fc.everyone(req["kind"].replace("request", "resolved"))
                assert resolved[0]["outcome"] == "cancelled"
            ended = await fc.everyone("turn_ended", turn=1)
            assert "did not end the turn" in ended[0]["error"]
            received = fc.answers_received()
            assert len(received) == (req is not None), received
            assert sum(m.get("method") == "session/cancel" for m in fc.received()) == 1
            # The chat takes a new prompt; the hung agent never ends it, teardown does.
            assert (await fc.prompt("again"))["turn"] == 2
            await fc.hub.close_chat(fc.chat_id)
            await all_gone([pid], pid)
            for rec in fc.recs:
                drain(rec)
                last = [e for e in rec.events if e["kind"] == "turn_ended"][-1]
                assert last["turn"] == 2 and last.get("error"), last

    if fault == "spawn":  # one in the group, one in a session of its own, one daemon
        assert len(fc.child_pids()) == 3 and all(map(alive, fc.child_pids()))
    await fc.hub.close_chat(fc.chat_id)
    for rec in fc.recs:
        drain(rec)
    check_no_auto_approval(fc, check_resolved_once(fc))
    check_folds(fc)
    await all_gone([pid, fc.session.conn.agent_pid or pid, *fc.child_pids()], pid)
    assert fc.answers_written() == fc.answers_received()
