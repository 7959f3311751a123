"""The per-chat history ring that resync replays: bounded in events and bytes."""

from __future__ import annotations

from collections import deque

from .events import ChunkRun, Event, append_merged


class History:
    """Events in seq order, consecutive chunks of one message merged.

    When a bound is exceeded the oldest events go first; a single message larger
    than the byte bound keeps its most recent text.
    """

    def __init__(self, max_events: int = 5000, max_bytes: int = 8 * 1024 * 1024) -> None:
        self.max_events = max(1, max_events)
        self.max_bytes = max(1024, max_bytes)
        self._items: deque[Event | ChunkRun] = deque()
        self._sizes: deque[int] = deque()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def size(self) -> int:
        return self._bytes

    def append(self, event: Event) -> None:
        grown, new = append_merged(self._items, event)
        if new:
            self._sizes.append(grown)
        else:
            self._sizes[-1] += grown
        self._bytes += grown
        self._trim()

    def _trim(self) -> None:
        while len(self._items) > self.max_events or (
            self._bytes > self.max_bytes and len(self._items) > 1
        ):
            self._items.popleft()
            self._bytes -= self._sizes.popleft()
        if self._bytes > self.max_bytes:
            only = self._items[0]
            if isinstance(only, ChunkRun):
                only.keep_tail(self.max_bytes - 1024)
                self._bytes = self._sizes[0] = only.size + 120

    def events(self) -> list[Event]:
        return [item.event() if isinstance(item, ChunkRun) else item for item in self._items]

    def last_seq(self) -> int:
        if not self._items:
            return 0
        last = self._items[-1]
        return last.seq if isinstance(last, ChunkRun) else int(last["seq"])
