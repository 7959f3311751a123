"""Client faults through the real Hub: double answers, late answers, strangers, bad values,
request bursts, and a client that never reads."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from acp_notebook.bridge import chat_session as session_module
from acp_notebook.bridge.chat_session import SessionConfig
from acp_notebook.bridge.hub import Hub, HubConfig
from acp_notebook.wire import fold as folding
from tests.support.fault_chats import PERSON, Event, FaultChat, drain

OpenChat = Callable[..., Awaitable[FaultChat]]
ACCEPT = {"action": "accept", "values": {"color": "red"}}


async def pending_card(fault_chat: OpenChat, what: str, **session: Any) -> tuple[FaultChat, Event]:
    """A chat with the fault agent, in a turn in which it asks a question or a permission:
    the chat, and the card as its first subscriber saw it."""
    fc = await fault_chat(**session)
    assert (await fc.prompt("ask" if what == "question" else "permission"))["accepted"]
    kind = "elicitation_request" if what == "question" else "permission_request"
    return fc, (await fc.everyone(kind))[0]


def still_pending(fc: FaultChat, req: Event) -> None:
    """The card is still pending: shown on resync, nothing resolved, nothing sent."""
    assert req["requestId"] in fc.session.pending
    resync = fc.session.resync()
    assert any(e.get("requestId") == req["requestId"] for e in resync)
    for rec in fc.recs:
        drain(rec)
        assert not any(e["kind"].endswith("_resolved") for e in rec.events)
    assert fc.answers_written() == []


async def resolved_once_everywhere(fc: FaultChat, req: Event) -> Event:
    kind = req["kind"].replace("request", "resolved")
    await fc.everyone("turn_ended")
    seen = [[e for e in r.events if e["kind"] == kind] for r in fc.recs]
    assert all(len(s) == 1 for s in seen), seen
    return seen[0][0]


async def answered_once(fc: FaultChat, req: Event, **answer: Any) -> Event:
    """The card, still pending, takes ``answer``: resolved once, as everyone sees it, and
    one answer reaches the agent."""
    still_pending(fc, req)
    assert (await fc.answer(req, **answer))["accepted"]
    resolved = await resolved_once_everywhere(fc, req)
    assert len(fc.answers_received()) == 1
    return resolved


@pytest.mark.fault("the same answer sent twice at once ({what})")
@pytest.mark.parametrize("what", ["question", "permission"])
async def test_same_answer_twice(fault_chat: OpenChat, what: str) -> None:
    fc, req = await pending_card(fault_chat, what)
    answer = ACCEPT if what == "question" else {"optionId": "allow"}
    acks = await asyncio.gather(fc.answer(req, **answer), fc.answer(req, **answer))
    codes = sorted(a.get("error", "ok") for a in acks)
    assert codes == sorted(
        ["ok", f"{'ELICITATION' if what == 'question' else 'PERMISSION'}_NOT_FOUND"]
    )
    resolved = await resolved_once_everywhere(fc, req)
    assert resolved["by"] == PERSON
    # Later, again: still NOT_FOUND, and the agent got exactly one answer.
    assert "NOT_FOUND" in (await fc.answer(req, **answer))["error"]
    assert len(fc.answers_received()) == 1 == len(fc.answers_written())


@pytest.mark.fault("an answer after the request timed out ({what})")
@pytest.mark.parametrize("what", ["question", "permission"])
async def test_answer_after_timeout(fault_chat: OpenChat, what: str) -> None:
    fc, req = await pending_card(fault_chat, what, answer_timeout=0.3)
    resolved = await resolved_once_everywhere(fc, req)
    assert resolved["outcome"] == "timeout"
    answer = ACCEPT if what == "question" else {"optionId": "allow"}
    assert "NOT_FOUND" in (await fc.answer(req, **answer))["error"]
    await asyncio.sleep(0.8)  # long past the deadline: it must not answer a second time
    received = fc.answers_received()
    assert len(received) == 1, received
    expected = {"action": "cancel"} if what == "question" else {"outcome": {"outcome": "cancelled"}}
    assert received[0]["result"] == expected  # a cancel, never an approval


@pytest.mark.fault("an answer from another user ({what})")
@pytest.mark.parametrize("what", ["question", "permission"])
async def test_answer_from_another_user(fault_chat: OpenChat, what: str) -> None:
    fc, req = await pending_card(fault_chat, what)
    answer = ACCEPT if what == "question" else {"optionId": "allow"}
    for stranger in ("mallory", None):
        ack = await fc.answer(req, user=stranger, **answer)
        assert ack["error"] == "FORBIDDEN", ack
    assert (await fc.request({"type": "chat:cancel"}, user="mallory"))["error"] == "FORBIDDEN"
    assert (await answered_once(fc, req, **answer))["by"] == PERSON


BAD_VALUES: dict[str, Any] = {
    "wrong type for an enum": {"color": 5},
    "an option that does not exist": {"color": "purple"},
    "a string for an integer": {"color": "red", "count": "3"},
    "a float for an integer": {"color": "red", "count": 2.5},
    "a string for a boolean": {"color": "red", "sure": "yes"},
    "a string for a multi-select": {"color": "red", "tags": "a"},
    "a repeated multi-select value": {"color": "red", "tags": ["a", "a"]},
    "an object as a value": {"color": {"red": True}},
    "too many values": {f"f{i}": "x" for i in range(17)},
    "too many multi-select items": {"color": "red", "tags": ["a"] * 65},
    "too long a text": {"color": "red", "note": "x" * 65_537},
    "an unknown field name": {"color": "red", "nope": "x"},
    "too long a field name": {"color": "red", "n" * 129: "x"},
    "the required field missing": {"note": "hi"},
    "values not an object": ["red"],
}


@pytest.mark.fault("bad answer values: {case}")
@pytest.mark.parametrize("case", list(BAD_VALUES))
async def test_bad_values_keep_the_card_pending(fault_chat: OpenChat, case: str) -> None:
    fc, req = await pending_card(fault_chat, "question")
    ack = await fc.answer(req, action="accept", values=BAD_VALUES[case])
    assert ack["error"] == "INVALID" and ack["detail"], ack
    await answered_once(fc, req, **ACCEPT)
    assert [a["result"] for a in fc.answers_received()] == [
        {"action": "accept", "content": {"color": "red"}}
    ]


RAW_REQUESTS: dict[str, str] = {
    "a request over 2 MB": '{"type":"chat:resync","chatId":"' + "x" * 2_100_000 + '"}',
    "not JSON": "{nope",
    "an integer too big to parse": '{"color": ' + "9" * 5000 + "}",
    "an infinite integer": '{"color": "red", "count": 1e999}',
}


@pytest.mark.fault("malformed answer frames: {case}")
@pytest.mark.parametrize("case", list(RAW_REQUESTS))
async def test_malformed_frames(fault_chat: OpenChat, case: str) -> None:
    fc, req = await pending_card(fault_chat, "question")
    raw = RAW_REQUESTS[case]
    if raw.startswith('{"color"'):
        # An answer whose values are the raw text: only the hub's parser sees them.
        head = json.dumps(
            {
                "type": "chat:elicitation.respond",
                "chatId": fc.chat_id,
                "requestId": req["requestId"],
                "action": "accept",
            }
        )
        raw = head[:-1] + ', "values": ' + raw + "}"
    ack = await fc.hub.handle(raw, user=PERSON)
    assert ack["error"] == "INVALID", ack
    still_pending(fc, req)
    bad_option = await fc.request(
        {"type": "chat:permission.respond", "requestId": req["requestId"], "optionId": "allow"}
    )
    assert bad_option["error"] == "PERMISSION_NOT_FOUND"  # not a permission: no answer sent
    await answered_once(fc, req, **ACCEPT)


@pytest.mark.fault("permission answers that do not fit")
async def test_bad_permission_answers(fault_chat: OpenChat) -> None:
    fc, req = await pending_card(fault_chat, "permission")
    for bad in (
        {"optionId": "allow-always"},  # not offered
        {"optionId": "allow", "cancel": True},
        {},
        {"optionId": 7},
        {"cancel": "yes"},  # not coerced to a cancel
        {"cancel": 1},
        {"optionId": "x" * 300},
    ):
        ack = await fc.answer(req, **bad)
        assert ack["error"] == "INVALID", (bad, ack)
    resolved = await answered_once(fc, req, optionId="reject")
    assert resolved["optionId"] == "reject"
    assert [a["result"] for a in fc.answers_received()] == [
        {"outcome": {"outcome": "selected", "optionId": "reject"}}
    ]


@pytest.mark.fault("wrong-typed fields in other requests")
async def test_wrong_types_in_requests(fault_chat: OpenChat) -> None:
    fc = await fault_chat()
    for bad in (
        {"type": "chat:prompt", "text": 5},
        {"type": "chat:prompt", "text": ""},
        {"type": "chat:resync", "since": "5"},
        {"type": "chat:resync", "since": -1},
        {"type": "chat:set_config", "configId": "c", "value": 1},  # not a boolean
        {"type": "chat:set_mode", "modeId": ["a"]},
        {"type": "chat:cancel", "extra": True},
        {"type": "chat:nope"},
    ):
        ack = await fc.request(bad)
        assert ack["error"] == "INVALID" and ack["detail"], (bad, ack)
    assert not [m for m in fc.received() if m.get("method", "").startswith("session/set")]
    assert (await fc.prompt("fine"))["turn"] == 1
    assert (await fc.everyone("turn_ended"))[0]["stopReason"] == "end_turn"


@pytest.mark.fault("10,000 requests in a burst while a question waits")
async def test_burst_of_requests(fault_chat: OpenChat) -> None:
    fc, req = await pending_card(fault_chat, "question")
    before = len(fc.received())
    bad = {"type": "chat:elicitation.respond", "requestId": req["requestId"], "action": "accept"}
    kinds: list[dict[str, Any]] = [
        {"type": "chat:resync"},
        {**bad, "values": {"color": "mauve"}},
        {"type": "chat:elicitation.respond", "requestId": "nope", "action": "decline"},
        {"type": "chat:prompt", "text": "again"},
    ]
    burst = [
        fc.hub.handle({"chatId": fc.chat_id, "id": i, **kinds[i % len(kinds)]}, user=PERSON)
        for i in range(10_000)
    ]
    started = time.monotonic()
    acks = await asyncio.gather(*burst)
    assert time.monotonic() - started < 60
    assert [a["ack"] for a in acks] == list(range(10_000))
    codes = {a.get("error", "ok") for a in acks}
    assert codes == {"ok", "INVALID", "ELICITATION_NOT_FOUND", "BUSY"}
    # The agent heard nothing of it, and the hub still answers at once.
    assert len(fc.received()) == before
    await answered_once(fc, req, **ACCEPT)


@pytest.mark.fault("10,000 cancels in a burst during a turn")
async def test_burst_of_cancels(fault_chat: OpenChat) -> None:
    fc, req = await pending_card(fault_chat, "question")
    acks = await asyncio.gather(*(fc.cancel() for _ in range(10_000)))
    assert all(a.get("accepted") for a in acks)
    resolved = await resolved_once_everywhere(fc, req)
    assert resolved["outcome"] == "cancelled"
    cancels = [m for m in fc.received() if m.get("method") == "session/cancel"]
    assert len(cancels) == 1  # one cancel reached the agent, not 10,000
    assert [a["result"] for a in fc.answers_received()] == [{"action": "cancel"}]
    ended = await fc.everyone("turn_ended")
    assert ended[0]["stopReason"] == "cancelled"


@pytest.mark.fault("a client that never reads while 200,000 chunks stream")
async def test_client_that_never_reads(fault_chat: OpenChat) -> None:
    config = HubConfig(
        session=SessionConfig(answer_timeout=30),
        max_queue_events=1000,
        max_queue_bytes=256 * 1024,
    )
    hub = Hub(config)
    try:
        fc = await fault_chat(hub=hub)
        stalled = hub.subscribe(fc.chat_id)  # never drained
        count = 200_000
        started = time.monotonic()
        assert (await fc.prompt(f"flood {count}"))["accepted"]
        await fc.everyone("turn_ended", timeout=120)
        elapsed = time.monotonic() - started
        # The agent was never held up by the stalled client (it streamed at full speed).
        assert elapsed < 90, elapsed
        # The stalled queue stayed bounded: it was dropped for a resync.
        assert stalled._reset and not stalled._items and stalled._bytes == 0
        expected = "".join(f"{i} " for i in range(count))
        for rec in fc.recs:
            events = rec.events
            assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
            text = "".join(
                e["update"]["content"]["text"]
                for e in events
                if e["kind"] == "update" and e["update"].get("messageId") == "turn-1"
            )
            assert text == expected
        # When it does read, it gets the whole bounded history: nothing lost.
        frame = stalled.pending_frame()
        assert frame is not None and frame["reset"]
        assert frame["events"] == fc.session.resync()  # the same view a resync ack gives
        text = "".join(
            e["update"]["content"]["text"]
            for e in frame["events"]
            if e["kind"] == "update" and e["update"].get("messageId") == "turn-1"
        )
        assert text == expected
        assert len(json.dumps(frame)) < 8 * 1024 * 1024 + 65536
    finally:
        await hub.close()


@pytest.mark.fault("a reload mid-stream: resync while chunks wait in the page's queue")
async def test_resync_mid_stream_neither_loses_nor_repeats(fault_chat: OpenChat) -> None:
    fc = await fault_chat()
    count = 200_000
    expected = "".join(f"{i} " for i in range(count))
    page = fc.hub.subscribe(fc.chat_id)  # the reloaded page's socket, not yet drained
    assert (await fc.prompt(f"flood {count}"))["accepted"]
    await fc.rec.until(lambda e: e["kind"] == "update")  # the stream is flowing
    ack = await fc.request({"type": "chat:resync"})  # the page's first request
    shown = "".join(e["update"]["content"]["text"] for e in ack["events"] if e["kind"] == "update")
    assert ack["reset"] and 0 < len(shown) < len(expected)  # mid-stream
    await fc.everyone("turn_ended", timeout=60)
    # The page folds the ack, then the frames that follow it, as the widget does.
    state = folding.initial_state()
    for event in ack["events"]:
        state = folding.fold(state, event)
    while (frame := page.pending_frame()) is not None:
        for event in frame["events"]:
            state = folding.fold(state, event)
    texts = [i["text"] for i in folding.snapshot(state)["items"] if i.get("messageId") == "turn-1"]
    assert texts == [expected]


@pytest.mark.fault("the agent never answers a mode or config change")
async def test_a_setting_the_agent_never_answers(
    fault_chat: OpenChat, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_module, "SETTING_TIMEOUT", 0.5)
    fc = await fault_chat("hang", "stream")  # silent after its first chunk
    assert (await fc.prompt("go"))["turn"] == 1
    await fc.everyone("update")
    for request, method in (
        ({"type": "chat:set_mode", "modeId": "plan"}, "session/set_mode"),
        ({"type": "chat:set_config", "configId": "c", "value": "x"}, "session/set_config_option"),
    ):
        async with asyncio.timeout(10):  # it waited for good
            ack = await fc.request(request)
        assert ack["error"] == "BUSY"
        assert ack["detail"] == f"the agent did not answer {method} within 0.5 s"
