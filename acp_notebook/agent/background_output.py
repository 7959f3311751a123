"""The live output of claude's backgrounded commands, for an ACP v1 client.

Claude's wrapper (claude-agent-acp 0.101.0) follows a backgrounded Bash command's output
file only on its ACP v2 surface. Over v1 the command's tool call gets a placeholder in its
terminal that names the file (``.../tasks/<task id>.output``) and, when the command ends,
``terminal_exit``; no line in between. The agent runs on this machine, so the chat reads
that file itself while the command runs and shows it in the same shape
(``terminal_output`` replaces the placeholder once, ``terminal_output_delta`` appends),
until the exit or the chat's close. Only a file the wrapper named for the task of that very
call is read (its path ends in the call's ``backgroundTaskId``).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Json = Any
# How often a followed file is read, and the most read at once.
POLL = 0.2
READ_CHUNK = 1 << 16
# The wrapper's placeholder: "Output is being written to: <path>. ...".
_PATH = re.compile(r"Output is being written to: (\S+/tasks/([A-Za-z0-9_-]+)\.output)")


class BackgroundOutput:
    """Follows the output files of one chat's backgrounded commands; ``on_update`` emits
    a tool call update."""

    def __init__(self, on_update: Callable[[dict[str, Json]], None]) -> None:
        self._on_update = on_update
        self._task_ids: dict[str, str] = {}  # toolCallId -> its background task id
        self._followers: dict[str, asyncio.Task[None]] = {}
        self._exited: dict[str, asyncio.Event] = {}

    def watch(self, update: Mapping[str, Json]) -> None:
        """A tool call update from the agent: a backgrounded command's task id, the
        placeholder that names its output file, or its exit."""
        tool_call_id = update.get("toolCallId")
        meta = update.get("_meta")
        if not isinstance(tool_call_id, str) or not isinstance(meta, dict):
            return
        claude = meta.get("claudeCode")
        response = claude.get("toolResponse") if isinstance(claude, dict) else None
        task_id = response.get("backgroundTaskId") if isinstance(response, dict) else None
        if isinstance(task_id, str):
            self._task_ids[tool_call_id] = task_id
        if "terminal_exit" in meta and tool_call_id in self._exited:
            self._exited[tool_call_id].set()
        placeholder = meta.get("terminal_output_delta") or meta.get("terminal_output")
        if not isinstance(placeholder, dict) or tool_call_id in self._followers:
            return
        data = placeholder.get("data")
        found = _PATH.search(data) if isinstance(data, str) else None
        if found is None:
            return
        if found.group(2) != self._task_ids.get(tool_call_id):
            return
        terminal_id = placeholder.get("terminal_id", tool_call_id)
        exited = self._exited[tool_call_id] = asyncio.Event()
        self._followers[tool_call_id] = asyncio.create_task(
            self._follow(tool_call_id, terminal_id, Path(found.group(1)), exited)
        )

    async def close(self) -> None:
        """Stop following (the chat closes: the wrapper ends its commands with it)."""
        followers = list(self._followers.values())
        for task in followers:
            task.cancel()
        for task in followers:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._followers.clear()

    async def _follow(
        self, tool_call_id: str, terminal_id: Json, path: Path, exited: asyncio.Event
    ) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        first = True
        offset = 0
        while True:
            ended = exited.is_set()  # after the exit, read on to the file's end
            text, offset = await asyncio.to_thread(_read, path, offset)
            data = decoder.decode(text, final=ended and not text)
            if data:
                key = "terminal_output" if first else "terminal_output_delta"
                first = False
                self._on_update(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": tool_call_id,
                        "_meta": {key: {"terminal_id": terminal_id, "data": data}},
                    }
                )
            if ended and not text:
                return
            if not ended and len(text) < READ_CHUNK:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(exited.wait(), POLL)


def _read(path: Path, offset: int) -> tuple[bytes, int]:
    """What the file holds from ``offset`` (a bounded read), and the offset after it."""
    try:
        with path.open("rb") as f:
            f.seek(offset)
            data = f.read(READ_CHUNK)
    except OSError:
        return b"", offset
    return data, offset + len(data)
