"""The per-chat history ring that resync replays, bounded in events and bytes; and a resync
as one fold snapshot of the ended turns plus the events after them."""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Container
from typing import Any

from ..wire import fold as folding
from ..wire.chunks import ChunkRun, append_merged
from ..wire.contracts import StreamEvent, is_request

# The agent's statuses whose fields later ones keep (name; capabilities, modes, session).
_KEPT_STATUSES = frozenset({"starting", "ready"})


def state_key(event: StreamEvent) -> str | None:
    """What part of the chat's state ``event`` sets as a whole, if it does; else None."""
    if event["kind"] == "agent_status" and event["status"] in _KEPT_STATUSES:
        return f"status:{event['status']}"
    if event["kind"] in ("edit_policy", "access", "auth"):
        return event["kind"]
    if event["kind"] == "update":
        name = event["update"].get("sessionUpdate")
        if isinstance(name, str) and folding.sets_state(name):
            return f"update:{name}"
    return None


class History:
    """Events in seq order, consecutive chunks of one message merged.

    When a bound is exceeded the oldest events go first; a single message larger
    than the byte bound keeps its most recent text. Of the events gone, the latest
    that set each part of the chat's state (the agent ready, its modes, the plan, the
    usage...) are kept and replayed first: a resync of a long chat still shows its
    agent ready and what it offers.
    """

    def __init__(self, max_events: int = 5000, max_bytes: int = 8 * 1024 * 1024) -> None:
        self.max_events = max(1, max_events)
        self.max_bytes = max(1024, max_bytes)
        self._items: deque[StreamEvent | ChunkRun] = deque()
        self._sizes: deque[int] = deque()
        self.size = 0  # bytes held, about
        self._kept: dict[str, StreamEvent] = {}  # by state_key, of the events trimmed

    def __len__(self) -> int:
        return len(self._items)

    def append(self, event: StreamEvent) -> None:
        grown, new = append_merged(self._items, event)
        if new:
            self._sizes.append(grown)
        else:
            self._sizes[-1] += grown
        self.size += grown
        self._trim()

    def _trim(self) -> None:
        while len(self._items) > self.max_events or (
            self.size > self.max_bytes and len(self._items) > 1
        ):
            gone = self._items.popleft()
            self.size -= self._sizes.popleft()
            if not isinstance(gone, ChunkRun) and (key := state_key(gone)) is not None:
                self._kept.pop(key, None)  # re-inserted last: the dict stays in seq order
                self._kept[key] = gone
        if self.size > self.max_bytes:
            only = self._items[0]
            if isinstance(only, ChunkRun):
                only.keep_tail(self.max_bytes - 1024)
                self.size = self._sizes[0] = only.size + 120

    def events(self) -> list[StreamEvent]:
        return [
            *self._kept.values(),
            *(item.event() if isinstance(item, ChunkRun) else item for item in self._items),
        ]


def snapshot_resync(events: list[StreamEvent], pending: Container[str]) -> dict[str, Any]:
    """``{"snapshot", "events"}`` for ``events`` (a resync's, in order); just
    ``{"events"}`` when no turn has ended among them. ``pending``: the request ids
    still open, whose events are sent again after the snapshot (their cards are the
    client's to draw).

    A long chat's history is mostly finished work: a tool call's twenty progress updates
    fold into one entry. The history up to its last ``turn_ended`` is sent folded; what
    follows (the turn under way) as events, so the client's fold carries on from there
    exactly as if it had folded everything: at a turn's end nothing streams, runs or
    waits, which is all a snapshot does not carry.
    """
    cut = next(
        (i for i in range(len(events) - 1, -1, -1) if events[i]["kind"] == "turn_ended"),
        None,
    )
    if cut is None:
        return {"events": events}
    # Unbounded: the history is bounded already (history_bytes may be over the kernel's).
    state = folding.ChatState(max_items=sys.maxsize, max_weight=sys.maxsize)
    again: list[StreamEvent] = []
    for event in events[: cut + 1]:
        state = folding.fold(state, event)
        if is_request(event) and event["requestId"] in pending:
            again.append(event)
    return {"snapshot": folding.snapshot(state), "events": again + events[cut + 1 :]}
