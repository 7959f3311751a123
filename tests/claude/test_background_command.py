"""A backgrounded Bash command (``run_in_background``) on the real wrapper over ACP v1.

Measured with claude-agent-acp 0.101.0: the wrapper follows a background command's
output file only for sessions that report background work, which only its ACP v2 surface
makes (``SessionBackgroundWork.reported``); a v1 client gets the result's placeholder,
which names the output file, and ``terminal_exit`` when the command ends, with no line
of its output. The chat follows that file itself (agent/background_output.py), so the
lines show as the command prints them. Claude Code spares background commands on an
interrupt: a cancel leaves the command running, closing the chat ends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.agent.reaper import descendants
from acp_notebook.kernel.chat import Chat
from tests.claude.test_terminal_output import meta
from tests.support.chat_waits import ask
from tests.support.mock_anthropic import MockAnthropic, text, tool_use

pytestmark = pytest.mark.usefixtures("wrapper_bin")

# A line a second for five seconds, and one for thirty (to outlive a cancel).
COMMAND = "for i in 1 2 3 4 5; do echo line $i; sleep 1; done"
LONG = "for i in $(seq 1 30); do echo slow $i; sleep 1; done"


def background(command: str) -> dict[str, Any]:
    return {"command": command, "description": "Count", "run_in_background": True}


def counting_chat(claude_chat: Callable[..., Chat], mock_api: MockAnthropic, command: str) -> Chat:
    """A chat whose model backgrounds ``command`` when asked to count; allowed to run it."""
    chat = claude_chat()
    chat.on_permission(
        lambda request: next(o["optionId"] for o in request["options"] if o["kind"] == "allow_once")
    )
    mock_api.on_user("Count", tool_use("Bash", background(command)))
    return chat


def running(command: str) -> list[int]:
    """Our descendants running ``command`` (the wrapper's shell has it in its arguments)."""
    found = []
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):
            if command.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return found


async def test_a_background_commands_lines_show_as_it_prints(
    claude_chat: Callable[..., Chat], mock_api: MockAnthropic
) -> None:
    chat = counting_chat(claude_chat, mock_api, COMMAND)
    mock_api.on(lambda r: True, text("Started"))
    stamped: list[tuple[float, dict[str, Any]]] = []

    async def collect() -> None:
        async for event in chat.events():
            stamped.append((time.monotonic(), meta(event)))

    listening = asyncio.create_task(collect())
    await asyncio.sleep(0)
    try:
        turn = await ask(chat, "Count")
        deadline = time.monotonic() + 15
        while not any("terminal_exit" in m for _, m in stamped) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await asyncio.sleep(1)  # the file's end, read after the exit
    finally:
        listening.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listening
    assert turn.ok and turn.text == "Started"
    outputs = [
        (at, key, m[key]["data"])
        for at, m in stamped
        for key in ("terminal_output", "terminal_output_delta")
        if key in m
    ]
    ended = next(at for at, m in stamped if "terminal_exit" in m)
    # The wrapper's placeholder names the output file; the chat's reading of it replaces
    # the placeholder, then appends; the first line comes seconds before the exit.
    (_, _, placeholder), *followed = outputs
    assert "running in background" in placeholder and ".output" in placeholder
    assert followed[0][1] == "terminal_output"
    assert all(key == "terminal_output_delta" for _, key, _ in followed[1:])
    first_line = next(at for at, _, data in followed if "line 1" in data)
    assert ended - first_line >= 2.0
    # Claude Code ends the file with a line of its own: "[exited with code 0]".
    lines = "".join(data for _, _, data in followed).splitlines()
    assert lines[:5] == [f"line {i}" for i in range(1, 6)]


async def test_a_cancel_spares_a_background_command_and_closing_ends_it(
    claude_chat: Callable[..., Chat], mock_api: MockAnthropic
) -> None:
    chat = counting_chat(claude_chat, mock_api, LONG)
    mock_api.on_user("Wait", tool_use("Bash", {"command": "sleep 20", "description": "Wait"}))
    mock_api.on(lambda r: True, text("Started"))
    assert (await ask(chat, "Count")).ok
    assert running(LONG)
    chat.send_prompt("Wait")
    deadline = time.monotonic() + 10
    while not running("sleep 20") and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    chat.cancel()
    await asyncio.sleep(2)
    assert running(LONG)  # Claude Code spares background commands on an interrupt
    chat.close()
    deadline = time.monotonic() + 10
    while running(LONG) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not running(LONG)
