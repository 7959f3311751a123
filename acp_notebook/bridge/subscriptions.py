"""A client's subscription to one chat: a queue of its events that merges runs of text
chunks, never blocks the agent, and resets a client too far behind to a resync.

It knows nothing of the hub: the hub gives it its queue bounds, the chat's resync and
how to leave the chat's subscribers.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import deque
from collections.abc import Callable

from ..wire.chunks import ChunkRun, append_merged
from ..wire.contracts import Frame, StreamEvent

# A subscriber further behind than this is reset to a resync instead (the hub's default).
MAX_QUEUE_EVENTS = 50_000
MAX_QUEUE_BYTES = 32 * 1024 * 1024


class Subscription:
    """One client's view of one chat: a queue that merges chunks and never blocks.

    When the client falls too far behind, the queue is dropped and its next read
    is a full resync: the client loses nothing and the agent waits for no one.

    ``hold``: seconds a frame of text chunks only waits after the frame before, so
    their runs merge (any other event ends the wait). A page paints once a frame
    whatever it receives; a 200,000-chunk answer came in some 450 frames a second,
    each a task for the server, the browser and the kernel.

    ``resync`` gives the chat's resync as it is now ([] once the chat is gone);
    ``detach`` takes the subscription off its chat's subscribers when it closes. The
    defaults are those of a subscription with no chat behind it.
    """

    def __init__(
        self,
        chat_id: str,
        user: str | None,
        reset: bool = False,
        hold: float = 0.0,
        *,
        max_events: int = MAX_QUEUE_EVENTS,
        max_bytes: int = MAX_QUEUE_BYTES,
        resync: Callable[[], list[StreamEvent]] = list,
        detach: Callable[[Subscription], None] = lambda sub: None,
    ) -> None:
        self.chat_id = chat_id
        self.user = user
        self.hold = hold
        # Further behind than either and the queue is dropped for a resync.
        self.max_events, self.max_bytes = max_events, max_bytes
        self._resync, self._detach = resync, detach
        self._items: deque[StreamEvent | ChunkRun] = deque()
        self._bytes = 0
        # A reset first frame is the whole resync, read when it is sent: nothing is
        # missed or sent twice, however long the subscriber takes to read it.
        self._reset = reset
        self._wakeup = asyncio.Event()
        # Set when something other than a run of chunks waits: a held frame goes now.
        self._urgent = asyncio.Event()
        self._sent = -math.inf  # the loop's time of the last frame
        self.closed = False
        self.ended: str | None = None

    def push(self, event: StreamEvent) -> None:
        if self.closed:
            return
        self._wakeup.set()
        if self._reset:
            return
        grown, new = append_merged(self._items, event)
        if new and not isinstance(self._items[-1], ChunkRun):
            self._urgent.set()
        self._bytes += grown
        if len(self._items) > self.max_events or self._bytes > self.max_bytes:
            self._items.clear()
            self._bytes = 0
            self._reset = True
            self._urgent.set()

    def seal(self) -> None:
        """Later chunks start a new queued event instead of merging into the last one.

        A resync's history ends at some seq; a queued run of chunks that began before
        it and grew after would carry text the client already has, under a newer seq.
        Sealed, the run's seq is within the history (the client drops it as seen) and
        what follows is new.
        """
        if self._items and isinstance(self._items[-1], ChunkRun):
            self._items[-1] = self._items[-1].event()

    def pending_frame(self) -> Frame | None:
        """What is queued right now, as one frame; None when nothing is."""
        self._wakeup.clear()
        self._urgent.clear()
        if self._reset:  # nothing is queued while it is set
            self._reset = False
            frame: Frame = {"chatId": self.chat_id, "events": self._resync(), "reset": True}
        elif self._items:
            events = [item.event() if isinstance(item, ChunkRun) else item for item in self._items]
            self._items.clear()
            self._bytes = 0
            frame = {"chatId": self.chat_id, "events": events}
        else:
            return None
        self._sent = asyncio.get_running_loop().time()
        return frame

    async def next_frame(self) -> Frame | None:
        """Wait for events; None once the subscription is closed and drained."""
        while True:
            wait = self._sent + self.hold - asyncio.get_running_loop().time()
            if wait > 0 and self._items and not (self._urgent.is_set() or self.closed):
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._urgent.wait(), wait)
                continue
            frame = self.pending_frame()
            if frame is not None:
                return frame
            if self.closed:
                return None
            await self._wakeup.wait()

    def close(self, why: str | None = None) -> None:
        """No more frames; ``why``: why the chat ended, when it did (``CHAT_GONE_*``)."""
        if not self.closed:
            self.closed = True
            self.ended = why
            self._wakeup.set()
            self._urgent.set()
            self._detach(self)


def replace_subscription(subs: dict[str, Subscription], sub: Subscription) -> None:
    """``sub`` becomes its chat's one subscription in ``subs``; the one before is closed."""
    old = subs.pop(sub.chat_id, None)
    if old is not None:
        old.close()
    subs[sub.chat_id] = sub
