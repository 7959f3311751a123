"""The real opencode (``opencode acp``, pinned in package.json) through our bridge.

opencode asks only through ``session/request_permission`` (it has no elicitation call
site; reference §8). The model is the mock Chat Completions API.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from acp_notebook.kernel.chat import Chat
from tests.support.chat_waits import finish, next_pending, ready
from tests.support.mock_openai import MockOpenAI, function_call, text

pytestmark = pytest.mark.usefixtures("opencode_bin")

OpenChat = Callable[..., Chat]


async def test_named_agent_starts(opencode_chat: OpenChat) -> None:
    chat = opencode_chat()
    await ready(chat)
    assert chat.state["agent"]["info"] == {"name": "OpenCode", "version": "1.18.33"}


@pytest.mark.parametrize("decision", ["allow", "reject"])
async def test_permission_round_trip(
    opencode_chat: OpenChat, mock_openai: MockOpenAI, workdir: Path, decision: str
) -> None:
    chat = opencode_chat()
    target = workdir / "out.txt"
    command = {"command": f"echo hi > {target}", "description": "Write out.txt"}
    mock_openai.on_prompt("Write the file", function_call("bash", command, "call_write"))
    mock_openai.on_output("call_write", text("Done"))
    task = asyncio.create_task(chat.ask("Write the file"))
    request = await next_pending(chat, "permission")

    assert request["toolCall"]["kind"] == "execute"
    assert "echo hi" in request["toolCall"]["title"]
    options = {o["optionId"]: o["kind"] for o in request["options"]}
    assert options == {"once": "allow_once", "always": "allow_always", "reject": "reject_once"}
    assert not target.exists()
    (chat.allow if decision == "allow" else chat.reject)(request["requestId"])
    turn = await finish(task)

    [tool] = turn.tool_calls
    if decision == "allow":
        assert turn.ok and turn.text == "Done"
        assert target.read_text() == "hi\n"
        assert tool["status"] == "completed"
        assert mock_openai.outputs("call_write") == ["(no output)"]
    else:
        # opencode ends the turn on a rejection without asking the model again.
        assert turn.stop_reason == "end_turn"
        assert not target.exists()
        assert tool["status"] == "failed"
        assert "rejected permission" in tool["rawOutput"]["error"]
        assert mock_openai.outputs("call_write") == []
    assert mock_openai.unmatched == []
