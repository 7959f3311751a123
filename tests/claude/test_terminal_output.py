"""A shell command's output streams into the chat on the real wrapper: we advertise
``_meta.terminal_output_delta``, so claude-agent-acp reports a Bash call with
``terminal_info`` and its output as ``terminal_output_delta`` updates, then
``terminal_exit``; ``turn.tool_calls`` carries the output."""

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


async def test_a_commands_lines_arrive_as_it_prints_them(
    claude_chat: Callable[..., Chat], mock_api: MockAnthropic
) -> None:
    chat = claude_chat()
    chat.on_permission(lambda request: "allow")
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
    updates = [(at, e) for at, e in stamped if e["kind"] == "update"]
    deltas = [(at, e) for at, e in updates if "terminal_output_delta" in meta(e)]
    exits = [at for at, e in updates if "terminal_exit" in meta(e)]
    assert deltas and exits, [meta(e) for _, e in updates]
    first = next(at for at, e in deltas if "line 1" in meta(e)["terminal_output_delta"]["data"])
    # The first line is in the events while the command still runs: 2 s before its end.
    assert exits[-1] - first >= 2.0
    (call,) = [c for c in turn.tool_calls if "terminal" in c]
    terminal = call["terminal"]
    assert terminal["output"] == "".join(f"line {i}\n" for i in range(1, 6))
    assert terminal["exited"] and terminal["exitCode"] in (0, None)
