"""The real claude-agent-acp (pinned in package.json) against the mock Messages API.

Raw JSON-RPC from the test, independent of the project's own client: this proves the
environment (wrapper, bundled CLI, mock) before anything of ours is involved.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_wrapper import AcpStdioClient
from tests.support.mock_anthropic import MockAnthropic, Question, ask_user_question, text

pytestmark = pytest.mark.usefixtures("wrapper_bin")

Session = tuple[AcpStdioClient, str]


@pytest.fixture
async def session(
    wrapper_bin: Path, claude_env: dict[str, str], tmp_path: Path
) -> AsyncIterator[Session]:
    cwd = tmp_path / "work"
    cwd.mkdir()
    client = AcpStdioClient()
    await client.start([str(wrapper_bin)], claude_env, cwd)
    try:
        init = await client.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {"elicitation": {"form": {}}},
                "clientInfo": {"name": "acp_notebook-tests", "version": "0"},
            },
        )
        assert init["protocolVersion"] == 1
        new = await client.request("session/new", {"cwd": str(cwd), "mcpServers": []})
        sid: str = new["sessionId"]
        # New sessions start in "auto" (no permission requests, an extra notice chunk).
        await client.request("session/set_mode", {"sessionId": sid, "modeId": "default"})
        yield client, sid
    finally:
        await client.close()


def prompt(sid: str, words: str) -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": words}]}


def agent_text(client: AcpStdioClient, sid: str) -> str:
    return "".join(
        u["content"]["text"]
        for u in client.updates(sid)
        if u["sessionUpdate"] == "agent_message_chunk" and u["content"]["type"] == "text"
    )


async def test_plain_text_turn(session: Session, mock_api: MockAnthropic) -> None:
    client, sid = session
    mock_api.on_user("Say hello", text("Hello from the mock model"))

    result = await client.request("session/prompt", prompt(sid, "Say hello"))

    assert result["stopReason"] == "end_turn"
    assert agent_text(client, sid) == "Hello from the mock model"
    chunks = [u for u in client.updates(sid) if u["sessionUpdate"] == "agent_message_chunk"]
    assert len(chunks) > 1  # streamed delta by delta, one message id
    assert len({c["messageId"] for c in chunks}) == 1
    assert [r.prompt_text for r in mock_api.main_requests] == ["Say hello"]
    assert mock_api.unmatched == []


async def test_ask_user_question_accepted(session: Session, mock_api: MockAnthropic) -> None:
    client, sid = session
    mock_api.on_user(
        "Pick a color",
        ask_user_question(Question("Which color do you prefer?", "Color", ["Red", "Blue"])),
    )
    mock_api.on_tool_result("AskUserQuestion", text("Red it is"))

    turn = client.start_request("session/prompt", prompt(sid, "Pick a color"))
    ask = await client.next_request("elicitation/create")

    params = ask["params"]
    assert params["mode"] == "form"
    assert params["sessionId"] == sid
    assert params["message"] == "Which color do you prefer?"
    props = params["requestedSchema"]["properties"]
    assert set(props) == {"question_0", "question_0_custom"}
    assert [o["const"] for o in props["question_0"]["oneOf"]] == ["Red", "Blue"]
    tool_calls = [u for u in client.updates(sid) if u["sessionUpdate"] == "tool_call"]
    assert [t["toolCallId"] for t in tool_calls] == [params["toolCallId"]]

    await client.respond(ask["id"], {"action": "accept", "content": {"question_0": "Red"}})

    result = await turn
    assert result["stopReason"] == "end_turn"
    [answer] = mock_api.tool_results("AskUserQuestion")
    assert answer.tool_use_id == params["toolCallId"]
    assert '"Which color do you prefer?"="Red"' in answer.text
    assert not answer.is_error
    assert agent_text(client, sid) == "Red it is"
    assert mock_api.unmatched == []
