"""Continuing a claude-code conversation after its agent process is gone, on the real
wrapper and the mock Messages API: the model's next request carries the earlier turns;
and forking, listing, closing and deleting its sessions."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from acp_notebook import delete_session, sessions
from acp_notebook.kernel.chat import Chat
from tests.support.chat_waits import ask, ready
from tests.support.mock_anthropic import MockAnthropic, text

pytestmark = pytest.mark.usefixtures("wrapper_bin")


async def remembering(claude_chat: Callable[..., Chat], mock_api: MockAnthropic) -> Chat:
    """A claude chat whose one turn was "Remember the number 4817"."""
    chat = claude_chat()
    await ready(chat)
    mock_api.on_user("Remember the number 4817", text("Noted: 4817."))
    assert (await ask(chat, "Remember the number 4817")).text == "Noted: 4817."
    return chat


async def test_chat_resume_remembers_the_earlier_turns(
    claude_chat: Callable[..., Chat],
    claude_env: dict[str, str],
    mock_api: MockAnthropic,
    workdir: Path,
) -> None:
    first = await remembering(claude_chat, mock_api)
    capabilities = first.state["agent"]["capabilities"]
    assert capabilities["loadSession"] is True
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


async def test_fork_list_close_and_delete(
    claude_chat: Callable[..., Chat],
    mock_api: MockAnthropic,
    claude_env: dict[str, str],
    workdir: Path,
) -> None:
    """Fork, list, close and delete on the real wrapper: the session methods call no
    model (the mock answers the one turn)."""
    first = await remembering(claude_chat, mock_api)
    offered = first.state["agent"]["capabilities"]["sessionCapabilities"]
    assert {"list", "fork", "close", "delete"} <= set(offered)
    source = first.state["agent"]["sessionId"]

    forked = first.fork()  # session/fork in first's agent; loaded by a new one
    try:
        await ready(forked)
        fork = forked.state["agent"]["sessionId"]
        assert fork != source
        texts = [(i["type"], i.get("text", "")) for i in forked.state["items"]]
        assert ("user", "Remember the number 4817") in texts, texts
    finally:
        started = time.monotonic()
        forked.close()  # session/close first: answered, or given up after 2 s
        assert time.monotonic() - started < 15
    first.close()

    env = {**claude_env, "PATH": os.environ["PATH"]}
    listed = {s.session_id for s in sessions("claude-code", str(workdir), env=env)}
    assert {source, fork} <= listed
    delete_session("claude-code", fork, str(workdir), env=env)
    listed = {s.session_id for s in sessions("claude-code", str(workdir), env=env)}
    assert source in listed and fork not in listed
