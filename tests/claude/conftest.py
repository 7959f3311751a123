"""Fixtures for tests against the real claude-agent-acp wrapper and the mock Messages API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import require_wrapper, wrapper_env
from .mock_anthropic import MockAnthropic


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
