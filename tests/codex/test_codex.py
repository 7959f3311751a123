"""The real codex-acp (pinned in package.json) through our bridge and Python API.

Codex runs against the mock Responses API; each case checks what the model got back
(the ``function_call_output`` of the next request) and what landed on disk.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from acp_notebook.kernel.chat import Chat, Turn
from tests.support.chat_waits import finish, next_pending, ready
from tests.support.mock_openai import MockOpenAI, function_call, text

pytestmark = pytest.mark.usefixtures("codex_bin")

OpenChat = Callable[..., Chat]

# Codex starts each turn with a notice of its own for a model it has no metadata for.
NOTICE = "Warning: Model metadata for `mock-model` not found."


def reply_of(turn: Turn) -> str:
    """The model's answer: the turn's text after Codex's notice."""
    notice, _, answer = turn.text.partition("\n\n")
    assert notice.startswith(NOTICE), turn.text
    return answer.strip()


async def test_session_starts_with_codex_modes(codex_chat: OpenChat) -> None:
    chat = codex_chat(mode="read-only")
    await ready(chat)
    assert chat.state["agent"]["info"]["name"] == "@agentclientprotocol/codex-acp"
    modes = chat.state["modes"]
    assert modes["currentModeId"] == "read-only"
    assert {"read-only", "workspace-write", "agent"} <= {m["id"] for m in modes["availableModes"]}


@pytest.mark.parametrize("decision", ["allow", "reject"])
async def test_permission_round_trip(
    codex_chat: OpenChat, mock_openai: MockOpenAI, workdir: Path, decision: str
) -> None:
    chat = codex_chat(mode="read-only")
    target = workdir / "out.txt"
    command = {
        "cmd": f"echo hi > {target}",
        "sandbox_permissions": "require_escalated",
        "justification": "Write out.txt?",
    }
    mock_openai.on_prompt("Write the file", function_call("exec_command", command, "call_write"))
    mock_openai.on_output("call_write", text("Done"))
    task = asyncio.create_task(chat.ask("Write the file"))
    request = await next_pending(chat, "permission")

    assert request["toolCall"]["kind"] == "execute"
    assert "echo hi" in request["toolCall"]["title"]
    kinds = {o["kind"] for o in request["options"]}
    assert {"allow_once", "reject_once"} <= kinds
    assert not target.exists()
    (chat.allow if decision == "allow" else chat.reject)(request["requestId"])
    turn = await finish(task)

    [tool] = turn.tool_calls
    if decision == "allow":
        assert turn.ok and reply_of(turn) == "Done"
        assert target.read_text() == "hi\n"
        assert tool["status"] == "completed"
        [output] = mock_openai.outputs("call_write")
        assert "exited with code 0" in output
    else:
        # Codex's only reject option is "No, and tell Codex what to do differently": the
        # command does not run and the turn stops, waiting for the user's next prompt.
        assert turn.stop_reason == "cancelled"
        assert not target.exists()
        assert tool["status"] == "failed"
        assert mock_openai.outputs("call_write") == []
    assert mock_openai.unmatched == []


QUESTION = {
    "id": "color",
    "header": "Color",
    "question": "Which color?",
    "options": [
        {"label": "Red", "description": "A warm color"},
        {"label": "Blue", "description": "A cool color"},
    ],
}


async def test_request_user_input_form(codex_chat: OpenChat, mock_openai: MockOpenAI) -> None:
    chat = codex_chat()
    await ready(chat)
    # Codex offers request_user_input in plan mode only.
    chat.set_config("collaboration_mode", "plan")
    ask = function_call("request_user_input", {"questions": [QUESTION]}, "call_ask")
    mock_openai.on_prompt("Ask me", ask)
    mock_openai.on_output("call_ask", text("Blue noted"))
    task = asyncio.create_task(chat.ask("Ask me"))
    request = await next_pending(chat, "elicitation")

    assert request["message"] == "Codex needs your input to continue."
    assert request["toolCallId"] == "call_ask"
    fields = {f["name"]: f for f in request["fields"]}
    assert set(fields) == {"color", "color_note"}
    assert fields["color"]["required"] is True
    assert [o["value"] for o in fields["color"]["options"]] == [
        "Red",
        "Blue",
        "None of the above",
    ]
    chat.answer(request["requestId"], {"color": "Blue"})
    turn = await finish(task)

    assert turn.ok and reply_of(turn) == "Blue noted"
    [output] = mock_openai.outputs("call_ask")
    assert json.loads(output) == {"answers": {"color": {"answers": ["Blue"]}}}
    assert mock_openai.unmatched == []
