"""Continuing a claude-code conversation after its agent process is gone, on the real
wrapper and the mock Messages API: the model's next request carries the earlier turns."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from acp_notebook import sessions
from acp_notebook.kernel.chat import Chat
from tests.support.chat_waits import ask, ready
from tests.support.mock_anthropic import MockAnthropic, text

pytestmark = pytest.mark.usefixtures("wrapper_bin")


async def test_chat_resume_remembers_the_earlier_turns(
    claude_chat: Callable[..., Chat],
    claude_env: dict[str, str],
    mock_api: MockAnthropic,
    workdir: Path,
) -> None:
    first = claude_chat()
    await ready(first)
    capabilities = first.state["agent"]["capabilities"]
    assert capabilities["loadSession"] is True
    mock_api.on_user("Remember the number 4817", text("Noted: 4817."))
    assert (await ask(first, "Remember the number 4817")).text == "Noted: 4817."
    session_id = first.state["agent"]["sessionId"]
    first.close()  # the agent process ends; claude keeps the session under $HOME

    env = {**claude_env, "PATH": os.environ["PATH"]}
    listed = sessions("claude-code", str(workdir), env=env)
    assert session_id in [s.session_id for s in listed]

    again = Chat.resume(session_id, "claude-code", cwd=str(workdir), env=env, transport="local")
    try:
        await ready(again)
        assert again.state["agent"]["sessionId"] == session_id
        # session/load replayed the conversation: the new chat shows it.
        items = again.state["items"]
        texts = [(i["type"], i.get("text", "")) for i in items]
        assert ("user", "Remember the number 4817") in texts, texts
        assert any(kind == "agent" and "Noted: 4817." in t for kind, t in texts), texts

        mock_api.on_user("Which number?", text("It was 4817."))
        turn = await ask(again, "Which number?")
        assert turn.text == "It was 4817."
        # The model was sent the earlier turns: the agent remembered.
        last = [r for r in mock_api.main_requests if "Which number?" in r.prompt_texts][-1]
        history = repr(last.messages)
        assert "Remember the number 4817" in history and "Noted: 4817." in history
    finally:
        again.close()
