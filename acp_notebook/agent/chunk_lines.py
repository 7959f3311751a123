"""Streamed text chunks read without parsing each line whole.

An agent streams an answer as thousands of ``session/update`` lines that differ only
in the chunk's text: the same keys, sessionId and messageId around it, byte for byte.
Once one such line is parsed whole, a line that starts and ends with the same bytes
is read by decoding its text alone, with json's C string scanner. It is the parsed
line with another JSON string in one place: its depth and container count are that
line's, its length was capped by the framer, and a text the scanner does not end
exactly where the known end starts is parsed whole, as any other line.
"""

from __future__ import annotations

import json.decoder
import re
from collections.abc import Callable
from typing import Any

from ..wire.bounded_json import LONE_ESCAPE
from ..wire.chunks import update_chunk_key
from .jsonrpc import Notification, parse

# Streamed chunks are short; a longer line is not worth learning (learning scans it).
MAX_LEARNED = 4096
_TEXT_KEY = b'"text":"'
_STRING_BODY = re.compile(rb'(?:[^"\\]|\\.)*', re.DOTALL)
_PROBE = "?"
# json's C string scanner (typeshed lacks it): the string from just after its opening
# quote, and the index just after its closing quote.
_SCANSTRING: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
# Lines not learned after a failed probe: a line whose last "text" is not the chunk's
# text costs a second parse, at most once in this many.
BACKOFF = 100


def session_update(note: Notification) -> dict[str, Any] | None:
    """The ``update`` object of a ``session/update`` notification; None for any other."""
    params = note.params
    update = params.get("update") if isinstance(params, dict) else None
    return update if note.method == "session/update" and isinstance(update, dict) else None


class ChunkLines:
    """The last chunk line parsed whole, as the bytes before and after its text."""

    def __init__(self) -> None:
        # No line holds a newline: nothing starts with this until a line is learned.
        self.prefix = b"\n"
        self._suffix = b""
        self.key: tuple[str, object] = ("", None)
        self.update: dict[str, Any] = {}  # the learned line's update (its text is not ours)
        self._backoff = 0

    def text(self, line: bytes) -> str | None:
        """The chunk text of ``line``, which starts with ``prefix``; None when it is not
        the learned line with another text."""
        suffix = self._suffix
        if not line.endswith(suffix):
            return None
        # From the text's opening quote to its closing one: both are the learned line's.
        start, end = len(self.prefix) - 1, len(line) - len(suffix) + 1
        raw = line[start:end]
        try:
            # Strict: a surrogate's UTF-8 fails here, and the line is read whole.
            quoted = raw.decode("utf-8")
            text, stop = _SCANSTRING(quoted, 1)
        except (UnicodeDecodeError, ValueError):
            return None
        if stop != len(quoted):
            return None
        # A lone surrogate's escape too: read whole, it becomes U+FFFD. (find, not "in":
        # a third of the time.)
        return None if raw.find(b"\\u") >= 0 and LONE_ESCAPE.search(raw) else text

    def learn(self, line: bytes, note: Notification) -> None:
        """Keep ``line`` (parsed as ``note``) as the template when it is a text chunk."""
        update = session_update(note)
        if update is None or len(line) > MAX_LEARNED:
            return
        key = update_chunk_key(update)
        at = line.rfind(_TEXT_KEY) + len(_TEXT_KEY)
        if key is None or at < len(_TEXT_KEY):
            return
        if self._backoff:
            self._backoff -= 1
            return
        end = _STRING_BODY.match(line, at).end()  # type: ignore[union-attr]
        prefix, suffix = line[:at], line[end:]
        # The string there must be the chunk's text (not another "text" key, not one a
        # duplicate key hides): the line with another string there says so.
        probe = parse(prefix + _PROBE.encode() + suffix)
        probe_update = session_update(probe) if isinstance(probe, Notification) else None
        if (
            probe_update is not None
            and update_chunk_key(probe_update) == key
            and probe_update["content"]["text"] == _PROBE
        ):
            self.prefix, self._suffix, self.key, self.update = prefix, suffix, key, update
        else:
            self._backoff = BACKOFF
