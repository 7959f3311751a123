"""An MCP server's question, through claude's wrapper, our bridge and the Python API.

``Chat(..., mcp_servers=[...])`` mounts tests/support/elicitation_mcp_server.py in ``session/new``;
the model (mocked) calls its tool, the tool asks through MCP elicitation, the wrapper
forwards that as ``elicitation/create`` and our answer must reach the tool: the tool
writes what it got to a file, and returns it to the model.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.kernel.chat import CANCEL, DECLINE, Action, Chat, ChatError
from tests.support import elicitation_mcp_server
from tests.support.chat_waits import TIMEOUT, finish, next_pending
from tests.support.elicitation_mcp_server import MESSAGE
from tests.support.mock_anthropic import MockAnthropic, text, tool_search, tool_use

pytestmark = pytest.mark.usefixtures("wrapper_bin")

OpenChat = Callable[..., Chat]

SERVER = Path(elicitation_mcp_server.__file__)
TOOL = "mcp__picker__pick_color"  # how Claude Code names tool pick_color of server picker
PROMPT = "Use the picker"


def picker(log: Path) -> dict[str, Any]:
    return {
        "name": "picker",
        "command": sys.executable,
        "args": [str(SERVER)],
        "env": [{"name": "PICKER_LOG", "value": str(log)}],
    }


def script_model(mock: MockAnthropic) -> None:
    # MCP tools are deferred: the model loads the tool with ToolSearch before calling it.
    mock.on_user(PROMPT, tool_search(TOOL))
    mock.on_tool_result("ToolSearch", tool_use(TOOL, {}))
    mock.on_tool_result(TOOL, text("Thanks"))


@pytest.fixture
def picker_chat(
    claude_chat: OpenChat, mock_api: MockAnthropic, tmp_path: Path
) -> tuple[Chat, Path]:
    """A chat with the picker MCP server mounted, the model scripted to call it; the log
    of what the picker received."""
    log = tmp_path / "picker.jsonl"
    chat = claude_chat(mcp_servers=[picker(log)])
    script_model(mock_api)
    return chat, log


def returned(mock: MockAnthropic) -> str:
    """What the MCP tool returned to the model (the CLI wraps it as ``{"result": ...}``)."""
    [result] = mock.tool_results(TOOL)
    assert not result.is_error, result.text
    said: str = json.loads(result.text)["result"]
    return said


def received(log: Path) -> list[dict[str, Any]]:
    """What the MCP tool got, one record per call."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def test_mcp_question_accepted(
    picker_chat: tuple[Chat, Path], mock_api: MockAnthropic
) -> None:
    chat, log = picker_chat
    permissions: list[dict[str, Any]] = []

    def allow(request: dict[str, Any]) -> str:
        permissions.append(request)
        return "allow-once"

    # In `default` mode the wrapper asks before the MCP tool runs.
    chat.on_permission(allow)
    task = asyncio.create_task(chat.ask(PROMPT))
    request = await next_pending(chat, "elicitation")

    [permission] = permissions
    assert permission["toolCall"]["_meta"]["claudeCode"]["mcpServer"]["name"] == "picker"
    assert request["message"] == MESSAGE
    fields = {f["name"]: f for f in request["fields"]}
    assert [o["value"] for o in fields["color"]["options"]] == ["Red", "Blue"]
    assert fields["color"]["required"] and fields["confirm"]["type"] == "boolean"
    # The forwarded form names no tool call; the bridge ties it to the MCP tool still
    # running, so the card can say where it comes from.
    assert request["toolCallId"] == permission["toolCall"]["toolCallId"]
    assert chat.state["toolCalls"][request["toolCallId"]]["title"] == TOOL
    # The server's `required` list holds: an incomplete answer is refused, the card stays.
    with pytest.raises(ChatError) as refused:
        chat.answer(request["requestId"], {"color": "Blue"})
    assert refused.value.code == "INVALID"
    assert received(log) == []

    chat.answer(request["requestId"], {"color": "Blue", "confirm": True})
    turn = await finish(task)

    got = {"action": "accept", "content": {"color": "Blue", "confirm": True}}
    assert received(log) == [got]
    assert turn.ok and turn.text == "Thanks"
    assert returned(mock_api) == "picker received " + json.dumps(got, sort_keys=True)
    assert mock_api.unmatched == []


@pytest.mark.parametrize(("answer", "action"), [(DECLINE, "decline"), (CANCEL, "cancel")])
async def test_mcp_question_declined_or_cancelled(
    picker_chat: tuple[Chat, Path], mock_api: MockAnthropic, answer: Action, action: str
) -> None:
    chat, log = picker_chat
    chat.on_permission(lambda request: "allow-once")
    chat.on_elicitation(lambda request: answer)

    async with asyncio.timeout(TIMEOUT):
        turn = await chat.ask(PROMPT)

    # Reference §7: a decline reaches the MCP server as decline, a cancel as cancel.
    assert received(log) == [{"action": action}]
    assert turn.ok and turn.text == "Thanks"
    [question] = chat.state["elicitations"].values()
    assert question["outcome"] == {"decline": "declined", "cancel": "cancelled"}[action]
    assert returned(mock_api) == "picker received " + json.dumps({"action": action})


async def test_rejected_mcp_tool_never_asks(
    picker_chat: tuple[Chat, Path], mock_api: MockAnthropic
) -> None:
    chat, log = picker_chat
    chat.on_permission(lambda request: "reject")

    async with asyncio.timeout(TIMEOUT):
        turn = await chat.ask(PROMPT)

    assert turn.ok
    assert chat.state["elicitations"] == {}
    assert received(log) == []
    [result] = mock_api.tool_results(TOOL)
    assert result.is_error
