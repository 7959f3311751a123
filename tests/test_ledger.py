"""The pending-request ledger on its own: no agent, no loop, no clock.

Every way a request ends gives exactly one reply and one ``*_resolved`` event; a
request never ends twice; the cap refuses the rest and tells the person once a burst.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest

from acp_notebook.agent import jsonrpc
from acp_notebook.bridge.elicitation import AnswerError
from acp_notebook.bridge.ledger import (
    MAX_OPEN_REQUESTS,
    Ledger,
    NotFound,
    Opened,
    Refused,
    Reply,
    Settled,
)
from acp_notebook.wire.contracts import ElicitationRequestEvent, PermissionRequestEvent

NOW = 1_700_000_000_000.0


def permission() -> PermissionRequestEvent:
    return {
        "kind": "permission_request",
        "toolCall": {},
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ],
    }


def question() -> ElicitationRequestEvent:
    return {
        "kind": "elicitation_request",
        "message": "Favourite colour?",
        "fields": [
            {"name": "color", "type": "text", "required": True},
        ],
    }


def opened(ledger: Ledger, rpc_id: jsonrpc.Id) -> str:
    """A permission opened as ``rpc_id``; its requestId."""
    result = ledger.open(rpc_id, permission(), NOW)
    assert isinstance(result, Opened)
    return result.request_id


def test_opening_gives_the_event_and_its_deadline() -> None:
    ledger = Ledger(answer_timeout=60)
    result = ledger.open(7, permission(), NOW)
    assert isinstance(result, Opened)
    assert result.deadline == NOW + 60_000
    assert result.event["requestId"] == result.request_id
    assert result.event["deadline"] == result.deadline
    assert result.request_id in ledger and len(ledger) == 1
    assert ledger.events() == [result.event] and ledger.ids() == [result.request_id]


RequestMaker = Callable[[], PermissionRequestEvent | ElicitationRequestEvent]
# What an ending gives: the requests it settled.
Ending = Callable[[Ledger, str], list[Settled]]
# Each way a request ends: (name, its request, the ending, the reply, the resolved event).
ENDINGS: list[tuple[str, RequestMaker, Ending, Reply, dict[str, object]]] = [
    (
        "selected",
        permission,
        lambda ledger, rid: [ledger.answer_permission(rid, "allow", by="ana")],
        Reply(1, {"outcome": {"outcome": "selected", "optionId": "allow"}}),
        {"kind": "permission_resolved", "outcome": "selected", "optionId": "allow", "by": "ana"},
    ),
    (
        "permission cancelled",
        permission,
        lambda ledger, rid: [ledger.answer_permission(rid, None, by="ana")],
        Reply(1, {"outcome": {"outcome": "cancelled"}}),
        {"kind": "permission_resolved", "outcome": "cancelled", "by": "ana"},
    ),
    (
        "permission timed out",
        permission,
        lambda ledger, rid: [ledger.settle(rid, "timeout")],
        Reply(1, {"outcome": {"outcome": "cancelled"}}),
        {"kind": "permission_resolved", "outcome": "timeout"},
    ),
    (
        "permission withdrawn",
        permission,
        lambda ledger, rid: [ledger.withdraw(1)],
        Reply(1, error=(jsonrpc.REQUEST_CANCELLED, "request cancelled")),
        {"kind": "permission_resolved", "outcome": "cancelled", "by": "agent"},
    ),
    (
        "permission torn down",
        permission,
        lambda ledger, rid: ledger.settle_all(by="teardown"),
        Reply(1, {"outcome": {"outcome": "cancelled"}}),
        {"kind": "permission_resolved", "outcome": "cancelled", "by": "teardown"},
    ),
    (
        "answered",
        question,
        lambda ledger, rid: [ledger.answer_elicitation(rid, "accept", {"color": "red"}, "kernel")],
        Reply(1, {"action": "accept", "content": {"color": "red"}}),
        {"kind": "elicitation_resolved", "outcome": "accepted", "by": "kernel"},
    ),
    (
        "declined",
        question,
        lambda ledger, rid: [ledger.answer_elicitation(rid, "decline", None)],
        Reply(1, {"action": "decline"}),
        {"kind": "elicitation_resolved", "outcome": "declined"},
    ),
    (
        "question cancelled",
        question,
        lambda ledger, rid: [ledger.answer_elicitation(rid, "cancel", None)],
        Reply(1, {"action": "cancel"}),
        {"kind": "elicitation_resolved", "outcome": "cancelled"},
    ),
    (
        "question timed out",
        question,
        lambda ledger, rid: [ledger.settle(rid, "timeout")],
        Reply(1, {"action": "cancel"}),
        {"kind": "elicitation_resolved", "outcome": "timeout"},
    ),
    (
        "question withdrawn",
        question,
        lambda ledger, rid: [ledger.withdraw(1)],
        Reply(1, error=(jsonrpc.REQUEST_CANCELLED, "request cancelled")),
        {"kind": "elicitation_resolved", "outcome": "cancelled", "by": "agent"},
    ),
    (
        "turn cancelled",
        question,
        lambda ledger, rid: ledger.settle_all(),
        Reply(1, {"action": "cancel"}),
        {"kind": "elicitation_resolved", "outcome": "cancelled"},
    ),
]


@pytest.mark.parametrize(
    ("make", "end", "reply", "resolved"),
    [case[1:] for case in ENDINGS],
    ids=[case[0] for case in ENDINGS],
)
def test_every_ending_gives_one_reply_and_one_resolved_event(
    make: RequestMaker, end: Ending, reply: Reply, resolved: dict[str, object]
) -> None:
    ledger = Ledger(answer_timeout=60)
    result = ledger.open(1, make(), NOW)
    assert isinstance(result, Opened)
    [settled] = end(ledger, result.request_id)
    assert settled.request_id == result.request_id
    assert settled.reply == reply
    assert settled.event == {**resolved, "requestId": result.request_id}
    assert result.request_id not in ledger and ledger.events() == []
    # It ended: no ending gives it a second reply (they raise NotFound or settle nothing).
    for _, _, again, _, _ in ENDINGS:
        with contextlib.suppress(NotFound):
            assert again(ledger, result.request_id) == []


def test_unknown_and_settled_ids_are_not_found() -> None:
    ledger = Ledger(answer_timeout=60)
    with pytest.raises(NotFound):
        ledger.settle("nope", "timeout")
    with pytest.raises(NotFound):
        ledger.answer_permission("nope", None)
    with pytest.raises(NotFound):
        ledger.answer_elicitation("nope", "cancel", None)
    with pytest.raises(NotFound):
        ledger.withdraw(99)
    rid = opened(ledger, 1)
    # A permission is not answered as a question, nor withdrawn by an id that is no id.
    with pytest.raises(NotFound):
        ledger.answer_elicitation(rid, "cancel", None)
    for not_an_id in (True, [1], None, 1.5):
        with pytest.raises(NotFound):
            ledger.withdraw(not_an_id)
    assert rid in ledger
    ledger.settle(rid, "timeout")
    with pytest.raises(NotFound):
        ledger.settle(rid, "timeout")
    assert ledger.settle_all() == []


def test_a_bad_answer_leaves_the_request_open() -> None:
    ledger = Ledger(answer_timeout=60)
    rid = opened(ledger, 1)
    with pytest.raises(AnswerError, match="unknown option 'maybe'"):
        ledger.answer_permission(rid, "maybe")
    asked = ledger.open(2, question(), NOW)
    assert isinstance(asked, Opened)
    with pytest.raises(AnswerError):
        ledger.answer_elicitation(asked.request_id, "accept", {})  # color is required
    with pytest.raises(AnswerError):
        ledger.answer_elicitation(asked.request_id, "shrug", None)
    assert ledger.ids() == [rid, asked.request_id]


def test_a_duplicate_rpc_id_is_refused_while_its_request_is_open() -> None:
    ledger = Ledger(answer_timeout=60)
    rid = opened(ledger, "a")
    refused = ledger.open("a", question(), NOW)
    assert refused == Refused(Reply("a", error=(jsonrpc.INVALID_REQUEST, "duplicate request id")))
    assert ledger.ids() == [rid]
    ledger.answer_permission(rid, "reject")
    assert isinstance(ledger.open("a", question(), NOW), Opened)


def test_the_cap_refuses_the_rest_and_tells_once_a_burst() -> None:
    ledger = Ledger(answer_timeout=60)
    ids = [opened(ledger, n) for n in range(MAX_OPEN_REQUESTS)]
    refusal = Reply(
        MAX_OPEN_REQUESTS,
        error=(
            jsonrpc.INVALID_REQUEST,
            f"too many open requests: {MAX_OPEN_REQUESTS} wait for an answer",
        ),
    )
    first = ledger.open(MAX_OPEN_REQUESTS, permission(), NOW)
    assert first == Refused(
        refusal,
        f"the agent asked more than {MAX_OPEN_REQUESTS} questions and permissions at once;"
        " the ones beyond are refused",
    )
    assert ledger.open(MAX_OPEN_REQUESTS, permission(), NOW) == Refused(refusal)
    assert len(ledger) == MAX_OPEN_REQUESTS
    ledger.settle(ids[0], "timeout")
    opened(ledger, "room")  # a place was free: opened, and the burst is over
    refused = ledger.open("next", permission(), NOW)
    assert isinstance(refused, Refused) and refused.notice is not None


def test_teardown_settles_everything_oldest_first() -> None:
    ledger = Ledger(answer_timeout=60)
    ids = [opened(ledger, 1), opened(ledger, 2)]
    asked = ledger.open(3, question(), NOW)
    assert isinstance(asked, Opened)
    ids.append(asked.request_id)
    settled = ledger.settle_all(by="teardown")
    assert [s.request_id for s in settled] == ids
    assert [s.reply.rpc_id for s in settled] == [1, 2, 3]
    assert [s.event["kind"] for s in settled] == [
        "permission_resolved",
        "permission_resolved",
        "elicitation_resolved",
    ]
    assert all(
        s.event["outcome"] == "cancelled" and s.event.get("by") == "teardown" for s in settled
    )
    assert len(ledger) == 0 and ledger.settle_all() == []


def test_the_deadline_is_the_time_passed_in_plus_the_answer_timeout() -> None:
    ledger = Ledger(answer_timeout=0.3)
    first = ledger.open(1, permission(), 1000.0)
    later = ledger.open(2, question(), 5000.5)
    assert isinstance(first, Opened) and isinstance(later, Opened)
    assert first.deadline == pytest.approx(1300.0)
    assert later.deadline == pytest.approx(5300.5) and later.event["deadline"] == later.deadline
