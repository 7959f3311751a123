"""A shell command's output on the real wrapper: we advertise
``_meta.terminal_output_delta``, so claude-agent-acp 0.101.0 reports a Bash call with
``terminal_info``, its output as ``terminal_output_delta`` and ``terminal_exit``; the
fold keeps it as the call's terminal and ``turn.tool_calls`` carries it.

Measured here: over ACP v1 the wrapper sends a command's output only when the command
has ended (a foreground command's output comes with its result; a backgrounded one's
file is followed only for its v2 clients), so the lines of a five-second command arrive
together, with the exit. What streams live is a client terminal (test_client_terminals)
and a backgrounded command, whose file the chat follows itself (test_background_command).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

import pytest

from acp_notebook.kernel.chat import Chat
from tests.support.chat_waits import ask
from tests.support.mock_anthropic import MockAnthropic, text, tool_use

pytestmark = pytest.mark.usefixtures("wrapper_bin")

# A line a second for five seconds.
COMMAND = "for i in 1 2 3 4 5; do echo line $i; sleep 1; done"


def meta(event: dict[str, Any]) -> dict[str, Any]:
    update = event.get("update") or {}
    found = update.get("_meta")
    return found if isinstance(found, dict) else {}


async def test_a_commands_output_lands_in_its_terminal(
    claude_chat: Callable[..., Chat], mock_api: MockAnthropic
) -> None:
    chat = claude_chat()
    chat.on_permission(
        lambda request: next(o["optionId"] for o in request["options"] if o["kind"] == "allow_once")
    )
    mock_api.on_user("Count", tool_use("Bash", {"command": COMMAND, "description": "Count"}))
    mock_api.on_tool_result("Bash", text("Counted"))
    stamped: list[tuple[float, dict[str, Any]]] = []

    async def collect() -> None:
        async for event in chat.events():
            stamped.append((time.monotonic(), event))

    listening = asyncio.create_task(collect())
    await asyncio.sleep(0)  # the listener registers before anything happens
    try:
        turn = await ask(chat, "Count")
    finally:
        listening.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listening
    assert turn.ok and turn.text == "Counted"
    updates = [(at, meta(e)) for at, e in stamped if e["kind"] == "update"]
    shown = next(at for at, m in updates if "terminal_info" in m)
    output = next(at for at, m in updates if "terminal_output_delta" in m)
    ended = next(at for at, m in updates if "terminal_exit" in m)
    # The terminal shows when the command starts; its output comes with its end.
    assert output - shown >= 4.5 and ended - output < 1.0
    (call,) = [c for c in turn.tool_calls if "terminal" in c]
    terminal = call["terminal"]
    assert terminal["output"].splitlines() == [f"line {i}" for i in range(1, 6)]
    assert terminal["exited"] and terminal["exitCode"] in (0, None)
    assert {"type": "terminal", "terminalId": terminal["terminalId"]} in call["content"]
