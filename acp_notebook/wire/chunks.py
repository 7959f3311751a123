"""Stream events on the hot path: plain dicts, and merging runs of text chunks.

A long answer arrives as thousands of ``agent_message_chunk`` updates. The chunks an
agent's pipe gave in one read become one update before they are events
(``ChunkBatch``); where events wait (the history ring, a slow client's queue)
consecutive chunks of one message are merged into one event (``ChunkRun``). Both
collect texts and join them once, so merging n chunks costs O(n), not O(n^2). This is
the one place text chunks are merged.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from .clip import clip_start
from .contracts import StreamEvent, UpdateEvent

CHUNK_KINDS = frozenset({"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"})
# A text chunk up to this long may be merged with its neighbours unbounded (ChunkBatch).
MAX_CHUNK = 65536


def update_chunk_key(update: dict[str, Any]) -> tuple[str, object] | None:
    """(sessionUpdate, messageId) when a session/update ``update`` is a mergeable text
    chunk, else None."""
    kind = update.get("sessionUpdate")
    if kind not in CHUNK_KINDS:
        return None
    content = update.get("content")
    # Exactly {type: text, text: str}: annotations or other extras keep it whole.
    if (
        not isinstance(content, dict)
        or len(content) != 2
        or content.get("type") != "text"
        or not isinstance(content.get("text"), str)
    ):
        return None
    return kind, update.get("messageId")


def with_text(update: dict[str, Any], text: str) -> dict[str, Any]:
    """A text chunk's ``update`` with ``text`` as its content."""
    return {**update, "content": {"type": "text", "text": text}}


class ChunkBatch:
    """The text chunks of one message read in one go, not yet an event.

    A fast agent writes thousands of chunks per pipe read. The chat session emits them
    as one update once the reader yields to the loop (or before any other event), so
    each chunk after a run's first costs a list append instead of an event through the
    history, the hub and every client.
    """

    def __init__(self) -> None:
        self._key: tuple[str, object] | None = None
        self._update: dict[str, Any] = {}
        self._texts: list[str] = []

    def __bool__(self) -> bool:
        return bool(self._texts)

    def merge(self, key: tuple[str, object], text: str) -> bool:
        """Add ``text`` when it is the next chunk of the run; False when it is not (the
        run before is to be taken first, then this chunk ``start``ed)."""
        if key != self._key or len(text) > MAX_CHUNK:
            return False
        self._texts.append(text)
        return True

    def start(self, key: tuple[str, object], update: dict[str, Any], text: str) -> bool:
        """Start a run with this chunk (the batch is empty); False when ``text`` is too long
        to merge: it is an update of its own (``with_text``)."""
        if len(text) > MAX_CHUNK:
            return False
        self._key, self._update, self._texts = key, update, [text]
        return True

    def take(self) -> dict[str, Any] | None:
        """The run as one update, and an empty batch; None when it is empty."""
        if not self._texts:
            return None
        update = with_text(self._update, "".join(self._texts))
        self._key, self._update, self._texts = None, {}, []
        return update


class ChunkRun:
    """Consecutive text chunks of one message, joined into one event on demand.

    The texts are kept as pieces; every ``BLOCK`` chunks are joined into one string,
    so a run of a million chunks holds a few thousand strings, not a million (each
    small string costs some 50 bytes on top of its text).
    """

    BLOCK = 256

    __slots__ = ("_head", "_merged", "_pieces", "_small", "key", "seq", "size")

    def __init__(self, event: UpdateEvent, key: tuple[str, object]) -> None:
        self._head = event  # its fields (and ts: a thought's start) are the merged event's
        self._merged: UpdateEvent | None = event  # None once a chunk was added since
        text: str = event["update"]["content"]["text"]
        self._pieces = [text]
        self._small = 1  # pieces at the end that are single chunks, not blocks
        self.key = key
        self.seq = event["seq"]
        self.size = len(text)

    def add(self, event: UpdateEvent) -> None:
        text: str = event["update"]["content"]["text"]
        pieces = self._pieces
        pieces.append(text)
        self._small += 1
        if self._small == self.BLOCK:
            pieces[-self.BLOCK :] = ["".join(pieces[-self.BLOCK :])]
            self._small = 0
        self._merged = None
        self.seq = event["seq"]
        self.size += len(text)

    def event(self) -> UpdateEvent:
        if self._merged is None:
            text = "".join(self._pieces)
            self._pieces, self._small = [text], 0  # join once, even if asked again
            self._merged = self._with_text(text)
        return self._merged

    def _with_text(self, text: str) -> UpdateEvent:
        merged = self._head.copy()
        merged["seq"] = self.seq
        merged["update"] = with_text(self._head["update"], text)
        return merged

    def keep_tail(self, limit: int) -> None:
        """Drop the start of the text so it fits ``limit`` characters."""
        text = self.event()["update"]["content"]["text"]
        if len(text) > limit:
            text = clip_start(text, limit)
            self._pieces = [text]
            self._merged = self._with_text(text)
            self.size = len(text)


def append_merged(items: deque[StreamEvent | ChunkRun], event: StreamEvent) -> tuple[int, bool]:
    """Append ``event``, merged into the last item when both are chunks of one message.

    Returns about the bytes it added (a chunk is sized by its text, to stay cheap) and
    whether it is a new item (not merged).
    """
    if event["kind"] != "update" or (key := update_chunk_key(event["update"])) is None:
        items.append(event)
        return len(json.dumps(event, separators=(",", ":"), ensure_ascii=False, default=str)), True
    last = items[-1] if items else None
    if isinstance(last, ChunkRun) and last.key == key:
        before = last.size
        last.add(event)
        return last.size - before, False
    run = ChunkRun(event, key)
    items.append(run)
    return run.size + 120, True
