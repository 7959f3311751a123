"""Text cut to a length so that the cut shows: an ellipsis stands where text was dropped."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """The start of ``text``, at most ``limit`` characters, the ellipsis included."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def clip_start(text: str, limit: int) -> str:
    """The end of ``text``, at most ``limit`` characters, the ellipsis included."""
    return text if len(text) <= limit else "…" + text[len(text) - limit + 1 :]
