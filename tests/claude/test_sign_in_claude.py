"""The real claude wrapper when nobody is logged in (a fresh HOME, no API key): it offers
its terminal sign-in methods (we advertise ``auth.terminal``) and refuses the turn with
``auth_required``; the chat shows those methods instead of only failing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_notebook.kernel.chat import Chat
from tests.support.agent_chats import drop_env
from tests.support.chat_waits import ask, ready

pytestmark = pytest.mark.usefixtures("wrapper_bin")


async def test_claude_without_a_login_shows_its_sign_in_methods(
    wrapper_bin: Path,
    claude_env: dict[str, str],
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", f"{wrapper_bin.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    drop_env(monkeypatch, "ANTHROPIC_", "CLAUDE_")
    # No key; the mock API's URL stays, so nothing could reach the network anyway.
    env = {k: v for k, v in claude_env.items() if k != "ANTHROPIC_API_KEY"}
    chat = Chat(
        "claude-code", env={**env, "PATH": os.environ["PATH"]}, cwd=str(workdir), transport="local"
    )
    try:
        await ready(chat)  # it opens a session, and asks for the sign-in on the turn
        turn = await ask(chat, "hello")
        assert turn.error is not None
        assert chat.auth_state == "required", chat.state.get("auth")
        methods = {m["id"]: m for m in chat.auth_methods}
        assert set(methods) == {"claude-ai-login", "console-login"}
        console = methods["console-login"]
        assert console["type"] == "terminal"
        # Its own command line, with the method's arguments: never a program it names.
        assert console["command"][-4:] == ["--cli", "auth", "login", "--console"]
        assert Path(console["command"][0]).name == "claude-agent-acp"
        assert chat.state["auth"]["logout"] is True
    finally:
        chat.close()
