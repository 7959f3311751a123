"""The agent's reads and writes through the client: ``fs/read_text_file`` and
``fs/write_text_file`` (ACP), answered from the chat's ``TextFiles``.

A read gives the file as the person has it (``line`` / ``limit`` honoured, its size
bounded). A write is reviewed like a notebook edit (the same card, with the file's diff)
and then made, only while the file still holds what the card showed. A write of what
the file already holds is answered at once, without a card: opencode sends one for an
edit it has just written itself, after its own permission was allowed. A write the file
access refuses whatever the review (a notebook open in a page) is refused before any card.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..wire.contracts import MAX_FILE_TEXT, MAX_PATH, FileEdit
from ..wire.review import Review
from ..wire.text_files import FileRefused, select_lines
from .ports import TextFiles

READ = "fs/read_text_file"
WRITE = "fs/write_text_file"
METHODS = (READ, WRITE)
# How long a write the person already allowed (the agent's own permission) waits for the
# agent to write the file itself, polling, before the client writes it.
SETTLE = 2.0
SETTLE_POLL = 0.05


def _path(params: Mapping[str, Any]) -> str:
    path = params.get("path")
    if not isinstance(path, str) or not path or len(path) > MAX_PATH:
        raise FileRefused(f"path must be a string of 1 to {MAX_PATH} characters")
    return path


def _count(params: Mapping[str, Any], name: str) -> int | None:
    value = params.get(name)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise FileRefused(f"{name} must be an integer")


async def read_text_file(files: TextFiles, params: Mapping[str, Any]) -> dict[str, Any]:
    """``fs/read_text_file``'s result: ``{"content": ...}``."""
    path = _path(params)
    line, limit = _count(params, "line"), _count(params, "limit")
    opened = await files.read(path)
    if opened.text is None:
        raise FileRefused(f"{opened.path}: no such file")
    return {"content": select_lines(opened.text, line, limit)}


async def write_text_file(
    files: TextFiles,
    params: Mapping[str, Any],
    review: Callable[[FileEdit], Awaitable[Review]],
    allowed: Callable[[str], bool],
) -> dict[str, Any]:
    """``fs/write_text_file``'s result (an empty object) once written; ``review`` asks for
    a card; ``allowed(path)``: the person allowed the agent's own request to change it."""
    path = _path(params)
    content = params.get("content")
    if not isinstance(content, str):
        raise FileRefused("content must be a string")
    if len(content) > MAX_FILE_TEXT:
        raise FileRefused(f"content is {len(content):,} characters; at most {MAX_FILE_TEXT:,}")
    opened = await files.read(path)
    if opened.text == content:
        return {}
    if opened.unwritable is not None:
        raise FileRefused(opened.unwritable)
    if allowed(path):
        # The agent may write it itself right after (opencode does): not twice.
        deadline = time.monotonic() + SETTLE
        while time.monotonic() < deadline:
            await asyncio.sleep(SETTLE_POLL)
            if (await files.read(path)).text == content:
                return {}
        opened = await files.read(path)
    else:
        before = opened.text or ""
        if len(before) > MAX_FILE_TEXT:
            raise FileRefused(f"{opened.path} is too large to review a write to")
        edit: FileEdit = {
            "op": "write",
            "path": opened.path,
            "before": before,
            "after": content,
            "created": opened.text is None,
            "where": opened.where,
        }
        reviewed = await review(edit)
        if not reviewed.accepted:
            raise FileRefused(f"Not written: {reviewed.detail}")
    await files.write(path, opened.text, content)
    return {}
