"""The per-chat history ring that resync replays: bounded in events and bytes."""

from __future__ import annotations

from collections import deque

from .contracts import StreamEvent
from .events import ChunkRun, append_merged
from .fold import sets_state

# The agent's statuses whose fields later ones keep (name; capabilities, modes, session).
_KEPT_STATUSES = frozenset({"starting", "ready"})


def state_key(event: StreamEvent) -> str | None:
    """What part of the chat's state ``event`` sets as a whole, if it does; else None."""
    if event["kind"] == "agent_status" and event["status"] in _KEPT_STATUSES:
        return f"status:{event['status']}"
    if event["kind"] == "update":
        name = event["update"].get("sessionUpdate")
        if isinstance(name, str) and sets_state(name):
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
