"""Stream events on the hot path: plain dicts, and merging runs of text chunks.

A long answer arrives as thousands of ``agent_message_chunk`` updates. Where
events wait (the history ring, a slow client's queue) consecutive chunks of one
message are merged into one event. ``ChunkRun`` collects their texts in a list
and joins once, so merging n chunks costs O(n), not O(n^2).
"""

from __future__ import annotations

import json
from typing import Any

Event = dict[str, Any]

CHUNK_KINDS = frozenset({"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"})


def chunk_key(event: Event) -> tuple[str, object] | None:
    """(kind, messageId) when ``event`` is a mergeable text chunk, else None."""
    if event.get("kind") != "update":
        return None
    update = event.get("update")
    if not isinstance(update, dict):
        return None
    kind = update.get("sessionUpdate")
    if kind not in CHUNK_KINDS:
        return None
    content = update.get("content")
    if not isinstance(content, dict) or content.get("type") != "text":
        return None
    if not isinstance(content.get("text"), str) or set(content) - {"type", "text"}:
        return None  # annotations or other extras: keep it whole
    return kind, update.get("messageId")


class ChunkRun:
    """Consecutive text chunks of one message, joined into one event on demand."""

    __slots__ = ("_first", "_parts", "key", "seq", "size")

    def __init__(self, event: Event, key: tuple[str, object]) -> None:
        self._first = event
        self._parts: list[str] = [event["update"]["content"]["text"]]
        self.key = key
        self.seq: int = event["seq"]
        self.size = len(self._parts[0])

    def add(self, event: Event) -> None:
        text: str = event["update"]["content"]["text"]
        self._parts.append(text)
        self.seq = event["seq"]
        self.size += len(text)

    def event(self) -> Event:
        if len(self._parts) == 1:
            return self._first
        text = "".join(self._parts)
        self._parts = [text]  # join once, even if asked again
        merged = dict(self._first)
        merged["seq"] = self.seq  # ts stays the first chunk's: a thought's start
        merged["update"] = {**self._first["update"], "content": {"type": "text", "text": text}}
        self._first = merged
        return merged

    def keep_tail(self, limit: int) -> None:
        """Drop the start of the text so it fits ``limit`` characters."""
        text = self.event()["update"]["content"]["text"]
        if len(text) > limit:
            text = "…" + text[len(text) - limit + 1 :]
            self._first = {
                **self._first,
                "update": {**self._first["update"], "content": {"type": "text", "text": text}},
            }
            self._parts = [text]
            self.size = len(text)


def event_size(event: Event) -> int:
    """Approximate encoded size; chunks are sized by their text to stay cheap."""
    key = chunk_key(event)
    if key is not None:
        return len(event["update"]["content"]["text"]) + 120
    return len(json.dumps(event, separators=(",", ":"), ensure_ascii=False, default=str))


MAX_STRING = 256 * 1024
MAX_ITEMS = 2000
MAX_DEPTH = 24


def bound(value: Any, depth: int = 0) -> Any:
    """A copy of untrusted JSON with long strings, long lists and deep nesting cut."""
    if isinstance(value, str):
        return value if len(value) <= MAX_STRING else value[:MAX_STRING] + "…"
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    if depth >= MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {
            str(k)[:MAX_STRING]: bound(v, depth + 1) for k, v in list(value.items())[:MAX_ITEMS]
        }
    if isinstance(value, list):
        return [bound(v, depth + 1) for v in value[:MAX_ITEMS]]
    return None
