"""What the real-agent suites (tests/claude, tests/codex, tests/opencode) share: the
npm-installed binary each needs, an environment free of what would steer the agent
from outside the test, and a chat opener that closes what it opened."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.kernel.chat import Chat


def installed(path: Path, suite: str, what: str) -> Path:
    """``path``, installed by ``npm ci`` in tests/``suite``; fails (never skips) when missing."""
    if not path.exists():
        pytest.fail(
            f"{path} is missing: run `npm ci` in tests/{suite} (installs {what})", pytrace=False
        )
    return path


def drop_env(monkeypatch: pytest.MonkeyPatch, *prefixes: str) -> None:
    """The bridge starts agents with this process's env under the chat's own: drop the
    variables (by prefix) that would configure the agent from outside the test."""
    for key in list(os.environ):
        if key.startswith(prefixes):
            monkeypatch.delenv(key)


@contextlib.contextmanager
def chat_opener(agent: str, **fixed: Any) -> Iterator[Callable[..., Chat]]:
    """Opens ``Chat(agent, **fixed, **options)`` in local mode; closes them all at the end."""
    chats: list[Chat] = []

    def open_chat(**options: Any) -> Chat:
        chat = Chat(agent, transport="local", **fixed, **options)
        chats.append(chat)
        return chat

    try:
        yield open_chat
    finally:
        for chat in chats:
            chat.close()
