"""The pending-request ledger: the permissions and questions an agent waits on, without I/O.

As h11 keeps HTTP's state machine apart from its sockets, the ledger only decides.
Registering a request gives the event to show and its deadline (or ``Refused``, with
the reply that refuses it); settling one gives the one reply the agent gets and the
one ``*_resolved`` event, and a request settles once: a second settle of its id, like
a settle of an id never registered, raises ``NotFound``. The chat session carries the
decisions out (arms and cancels the deadline's timer, writes the reply, emits the
event). No clock: the time is passed in.

A request may also be the chat's own (``local``): the review of a notebook edit asks the
person like a permission does, and its reply goes back to the chat session, never to
the agent (the agent can neither withdraw it nor reuse its id).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, cast

from ..agent import jsonrpc
from ..wire.contracts import RequestEvent, ResolvedEvent
from .elicitation import AnswerError, validate_answer

PermissionOutcome = Literal["selected", "cancelled", "timeout"]
ElicitationOutcome = Literal["accepted", "declined", "cancelled", "timeout", "completed"]

# Questions and permissions one chat may have open at once; an agent asking more is
# refused at once (thousands of cards would hold the page and the server's memory).
MAX_OPEN_REQUESTS = 32

_OUTCOMES = {"accept": "accepted", "decline": "declined", "cancel": "cancelled"}


class NotFound(LookupError):
    """No pending request with that id (unknown, or already settled)."""


@dataclass(frozen=True)
class Reply:
    """The one JSON-RPC response an agent's request gets: ``result``, or ``error``."""

    rpc_id: jsonrpc.Id
    result: dict[str, Any] | None = None
    error: tuple[int, str] | None = None  # (code, message)
    # The chat's own request (an edit's review): the reply is for the chat session.
    local: bool = False


class Refused(Exception):
    """A request not registered: ``reply`` refuses it; ``notice``, once per burst, is for
    the person (an ``agent_error``)."""

    def __init__(self, reply: Reply, notice: str | None = None) -> None:
        super().__init__(reply.error)
        self.reply = reply
        self.notice = notice


class Settled(NamedTuple):
    """A request ended: the agent's one reply and the one ``*_resolved`` event."""

    reply: Reply
    event: ResolvedEvent


class _Open(NamedTuple):
    rpc_id: jsonrpc.Id
    event: RequestEvent  # as emitted: its options or fields are what an answer may say
    local: bool = False


class Ledger:
    """The requests one chat's agent waits on, by ``requestId``, oldest first."""

    def __init__(self, answer_timeout: float, limit: int = MAX_OPEN_REQUESTS) -> None:
        self.answer_timeout = answer_timeout  # seconds an unanswered request stays open
        self.limit = limit
        self._open: dict[str, _Open] = {}
        self._told_open = False  # the person was told of requests refused over the cap

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._open

    def __len__(self) -> int:
        return len(self._open)

    def ids(self) -> list[str]:
        return list(self._open)

    def local_ids(self) -> list[str]:
        """The chat's own requests still open, oldest first."""
        return [rid for rid, entry in self._open.items() if entry.local]

    def events(self) -> list[RequestEvent]:
        """The events of the requests still open, oldest first."""
        return [entry.event for entry in self._open.values()]

    def get(self, request_id: str) -> RequestEvent | None:
        """The event of an open request, or None."""
        entry = self._open.get(request_id)
        return None if entry is None else entry.event

    # ------------------------------------------------------------ registering

    def register(
        self, rpc_id: jsonrpc.Id, event: RequestEvent, now: float, *, local: bool = False
    ) -> tuple[RequestEvent, float]:
        """Keep the agent's request ``rpc_id`` (``local``: the chat's own), arrived at
        ``now`` (ms since the epoch), open as ``event``; returns it (given its
        ``requestId`` and ``deadline``) and the deadline."""
        if self._request_id(rpc_id, local) is not None:
            raise Refused(
                Reply(rpc_id, error=(jsonrpc.INVALID_REQUEST, "duplicate request id"), local=local)
            )
        if len(self._open) >= self.limit:
            refusal = Reply(
                rpc_id,
                error=(
                    jsonrpc.INVALID_REQUEST,
                    f"too many open requests: {self.limit} wait for an answer",
                ),
                local=local,
            )
            if self._told_open:  # once per burst, not once per request
                raise Refused(refusal)
            self._told_open = True
            raise Refused(
                refusal,
                f"the agent asked more than {self.limit} questions and permissions"
                " at once; the ones beyond are refused",
            )
        self._told_open = False
        request_id = str(uuid.uuid4())
        deadline = now + self.answer_timeout * 1000
        event["requestId"] = request_id
        event["deadline"] = deadline
        self._open[request_id] = _Open(rpc_id, event, local)
        return event, deadline

    def _request_id(self, rpc_id: object, local: bool = False) -> str | None:
        """The open request the agent (``local``: the chat) sent as ``rpc_id`` (a scan:
        at most ``limit``)."""
        return next(
            (
                rid
                for rid, entry in self._open.items()
                if entry.rpc_id == rpc_id and entry.local == local
            ),
            None,
        )

    # ------------------------------------------------------------ settling

    def answer_permission(
        self, request_id: str, option_id: str | None, by: str | None = None
    ) -> Settled:
        """Select ``option_id``, or cancel when it is None (``AnswerError``: no such option)."""
        event = self._event(request_id, "permission_request")
        assert event["kind"] == "permission_request"  # as _event checked: for mypy
        if option_id is not None and all(o["optionId"] != option_id for o in event["options"]):
            raise AnswerError(f"unknown option {option_id!r}")
        outcome = "selected" if option_id is not None else "cancelled"
        return self.settle(request_id, outcome, by, option_id=option_id)

    def answer_elicitation(
        self,
        request_id: str,
        action: str,
        values: Mapping[str, Any] | None,
        by: str | None = None,
    ) -> Settled:
        """Accept (with ``values``), decline or cancel (``AnswerError``: not a valid answer)."""
        event = self._event(request_id, "elicitation_request")
        assert event["kind"] == "elicitation_request"  # as _event checked: for mypy
        url = event.get("url") is not None
        result = validate_answer(event["fields"], action, values, url=url)
        return self.settle(request_id, _OUTCOMES[action], by, result=result)

    def withdraw(self, rpc_id: object) -> Settled:
        """The agent withdrew its request ``rpc_id`` (``$/cancel_request``)."""
        # A list is no id, true is not id 1: neither names a request.
        request_id = self._request_id(rpc_id) if jsonrpc.valid_id(rpc_id) else None
        if request_id is None:
            raise NotFound(repr(rpc_id))
        return self.settle(request_id, "cancelled", "agent", withdrawn=True)

    def settle_all(self, by: str | None = None) -> list[Settled]:
        """Cancel every open request, oldest first (a cancelled turn, the agent gone, teardown)."""
        return [self.settle(request_id, "cancelled", by) for request_id in list(self._open)]

    def settle(
        self,
        request_id: str,
        outcome: str,
        by: str | None = None,
        *,
        option_id: str | None = None,
        result: dict[str, Any] | None = None,
        withdrawn: bool = False,
    ) -> Settled:
        """The one place a request ends: one reply, one ``*_resolved``.

        ``outcome`` is the resolved event's; ``option_id`` a selected permission's option,
        ``result`` an answered question's reply; ``withdrawn``: the agent took it back,
        and is told so with an error.
        """
        entry = self._open.pop(request_id, None)
        if entry is None:
            raise NotFound(request_id)
        event: ResolvedEvent
        if entry.event["kind"] == "permission_request":
            answer: dict[str, Any] = {"outcome": {"outcome": "cancelled"}}
            event = {
                "kind": "permission_resolved",
                "requestId": request_id,
                "outcome": cast(PermissionOutcome, outcome),
            }
            if option_id is not None:  # selected
                answer = {"outcome": {"outcome": "selected", "optionId": option_id}}
                event["optionId"] = option_id
        else:
            answer = result if result is not None else {"action": "cancel"}
            event = {
                "kind": "elicitation_resolved",
                "requestId": request_id,
                "outcome": cast(ElicitationOutcome, outcome),
            }
            content = result.get("content") if result is not None else None
            if isinstance(content, dict):  # checked against the fields: the card's note says it
                event["values"] = content
        if by:
            event["by"] = by
        reply = (
            Reply(entry.rpc_id, error=(jsonrpc.REQUEST_CANCELLED, "request cancelled"))
            if withdrawn
            else Reply(entry.rpc_id, answer, local=entry.local)
        )
        return Settled(reply, event)

    def _event(self, request_id: str, kind: str) -> RequestEvent:
        entry = self._open.get(request_id)
        if entry is None or entry.event["kind"] != kind:
            raise NotFound(request_id)
        return entry.event
