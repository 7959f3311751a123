"""The pending-request ledger on its own: no agent, no loop, no clock.

Every way a request ends gives exactly one reply and one ``*_resolved`` event; a
request never ends twice; the cap refuses the rest and tells the person once a burst.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from acp_notebook.agent import jsonrpc
from acp_notebook.bridge.elicitation import AnswerError
from acp_notebook.bridge.ledger import MAX_OPEN_REQUESTS, Ledger, NotFound, Refused, Reply, Settled
from acp_notebook.wire.contracts import (
    ElicitationRequestEvent,
    PermissionRequestEvent,
    RequestEvent,
)

NOW = 1_700_000_000_000.0
CANCEL_PERMISSION = {"outcome": {"outcome": "cancelled"}}
CANCEL_QUESTION = {"action": "cancel"}
WITHDRAWN = (jsonrpc.REQUEST_CANCELLED, "request cancelled")


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
        "fields": [{"name": "color", "type": "text", "required": True}],
    }


def registered(ledger: Ledger, rpc_id: jsonrpc.Id, event: RequestEvent | None = None) -> str:
    """``event`` (a permission by default) registered as ``rpc_id``: its requestId."""
    shown, _ = ledger.register(rpc_id, event or permission(), NOW)
    return shown["requestId"]


def not_found(ledger: Ledger, request_id: str, rpc_id: object) -> None:
    """No way of settling ``request_id`` (sent as ``rpc_id``) finds it."""
    attempts: list[Callable[[], object]] = [
        lambda: ledger.settle(request_id, "timeout"),
        lambda: ledger.answer_permission(request_id, None),
        lambda: ledger.answer_elicitation(request_id, "cancel", None),
        lambda: ledger.withdraw(rpc_id),
    ]
    for attempt in attempts:
        with pytest.raises(NotFound):
            attempt()


def ended_once(ledger: Ledger, settled: Settled, reply: Reply, **resolved: Any) -> None:
    """``settled`` is the reply and resolved event expected, and its request is gone:
    nothing settles it again."""
    request_id = settled.event["requestId"]
    assert settled.reply == reply
    assert settled.event == {**resolved, "requestId": request_id}
    assert request_id not in ledger
    not_found(ledger, request_id, reply.rpc_id)


def test_registering_gives_the_event_and_its_deadline() -> None:
    ledger = Ledger(answer_timeout=60)
    event, deadline = ledger.register(7, permission(), NOW)
    assert deadline == NOW + 60_000 == event["deadline"]
    assert event["requestId"] in ledger and len(ledger) == 1
    assert ledger.events() == [event] and ledger.ids() == [event["requestId"]]


def test_the_deadline_is_the_time_passed_in_plus_the_answer_timeout() -> None:
    ledger = Ledger(answer_timeout=0.3)
    _, first = ledger.register(1, permission(), 1000.0)
    later, second = ledger.register(2, question(), 5000.5)
    assert first == pytest.approx(1300.0)
    assert second == pytest.approx(5300.5) == later["deadline"]


SELECTED = {"outcome": {"outcome": "selected", "optionId": "allow"}}


@pytest.mark.parametrize(
    ("option", "answer", "resolved"),
    [
        ("allow", SELECTED, {"outcome": "selected", "optionId": "allow"}),
        (None, CANCEL_PERMISSION, {"outcome": "cancelled"}),
    ],
)
def test_a_permission_answered(
    option: str | None, answer: dict[str, Any], resolved: dict[str, Any]
) -> None:
    ledger = Ledger(answer_timeout=60)
    rid = registered(ledger, 1)
    settled = ledger.answer_permission(rid, option, by="ana")
    ended_once(ledger, settled, Reply(1, answer), kind="permission_resolved", by="ana", **resolved)


@pytest.mark.parametrize(
    ("action", "values", "outcome"),
    [
        ("accept", {"color": "red"}, "accepted"),
        ("decline", None, "declined"),
        ("cancel", None, "cancelled"),
    ],
)
def test_a_question_answered(action: str, values: dict[str, str] | None, outcome: str) -> None:
    ledger = Ledger(answer_timeout=60)
    rid = registered(ledger, "q", question())
    settled = ledger.answer_elicitation(rid, action, values, "kernel")
    result: dict[str, Any] = {"action": action}
    if values is not None:
        result["content"] = values
    resolved: dict[str, Any] = {"kind": "elicitation_resolved", "outcome": outcome, "by": "kernel"}
    if values is not None:
        resolved["values"] = values  # as checked: what the answered card's note says
    ended_once(ledger, settled, Reply("q", result), **resolved)


def test_timed_out() -> None:
    ledger = Ledger(answer_timeout=60)
    first, second = registered(ledger, 1), registered(ledger, 2, question())
    late = ledger.settle(first, "timeout")
    ended_once(
        ledger, late, Reply(1, CANCEL_PERMISSION), kind="permission_resolved", outcome="timeout"
    )
    late = ledger.settle(second, "timeout")
    ended_once(
        ledger, late, Reply(2, CANCEL_QUESTION), kind="elicitation_resolved", outcome="timeout"
    )


@pytest.mark.parametrize("make", [permission, question])
def test_withdrawn_by_the_agent(make: Any) -> None:
    ledger = Ledger(answer_timeout=60)
    registered(ledger, "x", make())
    kind = make()["kind"].replace("request", "resolved")
    settled = ledger.withdraw("x")
    ended_once(
        ledger, settled, Reply("x", error=WITHDRAWN), kind=kind, outcome="cancelled", by="agent"
    )


@pytest.mark.parametrize("by", ["teardown", None])
def test_teardown_and_a_cancelled_turn_settle_everything_oldest_first(by: str | None) -> None:
    ledger = Ledger(answer_timeout=60)
    ids = [registered(ledger, 1), registered(ledger, 2), registered(ledger, 3, question())]
    settled = ledger.settle_all(by)
    assert [s.event["requestId"] for s in settled] == ids
    extra = {"by": by} if by else {}
    replies = [Reply(1, CANCEL_PERMISSION), Reply(2, CANCEL_PERMISSION), Reply(3, CANCEL_QUESTION)]
    kinds = ["permission_resolved"] * 2 + ["elicitation_resolved"]
    for one, reply, kind in zip(settled, replies, kinds, strict=True):
        ended_once(ledger, one, reply, kind=kind, outcome="cancelled", **extra)
    assert len(ledger) == 0 and ledger.settle_all() == []


def test_unknown_ids_are_not_found() -> None:
    ledger = Ledger(answer_timeout=60)
    not_found(ledger, "nope", 99)
    rid = registered(ledger, 1)
    # A permission is not answered as a question, nor withdrawn by what is no id.
    with pytest.raises(NotFound):
        ledger.answer_elicitation(rid, "cancel", None)
    for not_an_id in (True, [1], None, 1.5):
        with pytest.raises(NotFound):
            ledger.withdraw(not_an_id)
    assert ledger.ids() == [rid]


def test_a_bad_answer_leaves_the_request_open() -> None:
    ledger = Ledger(answer_timeout=60)
    rid = registered(ledger, 1)
    with pytest.raises(AnswerError, match="unknown option 'maybe'"):
        ledger.answer_permission(rid, "maybe")
    asked = registered(ledger, 2, question())
    with pytest.raises(AnswerError):
        ledger.answer_elicitation(asked, "accept", {})  # color is required
    with pytest.raises(AnswerError):
        ledger.answer_elicitation(asked, "shrug", None)
    assert ledger.ids() == [rid, asked]


def test_a_duplicate_rpc_id_is_refused_while_its_request_is_open() -> None:
    ledger = Ledger(answer_timeout=60)
    rid = registered(ledger, "a")
    with pytest.raises(Refused) as refused:
        ledger.register("a", question(), NOW)
    assert refused.value.reply == Reply(
        "a", error=(jsonrpc.INVALID_REQUEST, "duplicate request id")
    )
    assert refused.value.notice is None and ledger.ids() == [rid]
    ledger.answer_permission(rid, "reject")
    assert registered(ledger, "a", question()) in ledger


def test_the_cap_refuses_the_rest_and_tells_once_a_burst() -> None:
    ledger = Ledger(answer_timeout=60)
    ids = [registered(ledger, n) for n in range(MAX_OPEN_REQUESTS)]
    error = (
        jsonrpc.INVALID_REQUEST,
        f"too many open requests: {MAX_OPEN_REQUESTS} wait for an answer",
    )
    notices = []
    for rpc_id in ("over", "more", "again"):
        with pytest.raises(Refused) as refused:
            ledger.register(rpc_id, permission(), NOW)
        assert refused.value.reply == Reply(rpc_id, error=error)
        notices.append(refused.value.notice)
    assert notices == [
        f"the agent asked more than {MAX_OPEN_REQUESTS} questions and permissions at once;"
        " the ones beyond are refused",
        None,
        None,
    ]
    assert len(ledger) == MAX_OPEN_REQUESTS
    ledger.settle(ids[0], "timeout")
    registered(ledger, "room")  # a place was free: registered, and the burst is over
    with pytest.raises(Refused) as refused:
        ledger.register("next", permission(), NOW)
    assert refused.value.notice is not None
