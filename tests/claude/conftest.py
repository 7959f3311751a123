"""Fixtures for tests against the real claude-agent-acp wrapper and the mock Messages API."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from acp_notebook.kernel.chat import Chat
from tests.support.agent_chats import chat_opener, drop_env
from tests.support.claude_wrapper import require_wrapper, wrapper_env
from tests.support.mock_anthropic import MockAnthropic


@pytest.fixture
def wrapper_bin() -> Path:
    """The wrapper's bin; a module opts in with ``pytestmark = usefixtures("wrapper_bin")``
    and then fails, never skips, when ``npm ci`` was not run in tests/claude."""
    return require_wrapper()


@pytest.fixture
def mock_api() -> Iterator[MockAnthropic]:
    with MockAnthropic() as mock:
        yield mock


@pytest.fixture
def claude_env(tmp_path: Path, mock_api: MockAnthropic) -> dict[str, str]:
    """The wrapper's env: a scratch HOME (the CLI writes ~/.claude there) and the mock API."""
    home = tmp_path / "home"
    home.mkdir()
    return wrapper_env(home, mock_api.url)


# ---------------------------------------------------------------- our Chat on the wrapper


@pytest.fixture
def claude_chat(
    wrapper_bin: Path,
    claude_env: dict[str, str],
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Callable[..., Chat]]:
    """Opens ``Chat("claude-code", ...)`` in local mode: the named agent, resolved the way a
    notebook resolves it (``claude-agent-acp`` on PATH), on the mock API. Closed at the end.
    """
    monkeypatch.setenv("PATH", f"{wrapper_bin.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    # (IS_SANDBOX, set on some CI boxes, is dropped by the claude-code agent spec itself:
    # the tests keep it to prove that.)
    drop_env(monkeypatch, "ANTHROPIC_", "CLAUDE_")
    env = {**claude_env, "PATH": os.environ["PATH"]}
    with chat_opener("claude-code", env=env, cwd=str(workdir)) as open_chat:
        yield open_chat
