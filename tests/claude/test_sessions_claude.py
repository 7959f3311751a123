"""Forking, listing, closing and deleting claude-code sessions on the real wrapper (the
mock Messages API answers the one turn; the session methods call no model)."""

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


async def test_fork_list_close_and_delete(
    claude_chat: Callable[..., Chat],
    claude_env: dict[str, str],
    mock_api: MockAnthropic,
    workdir: Path,
) -> None:
    first = claude_chat()
    await ready(first)
    offered = first.state["agent"]["capabilities"]["sessionCapabilities"]
    assert {"list", "fork", "close", "delete"} <= set(offered)
    mock_api.on_user("Remember the number 4817", text("Noted: 4817."))
    assert (await ask(first, "Remember the number 4817")).text == "Noted: 4817."
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
