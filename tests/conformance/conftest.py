"""The real agents' fixtures (each suite's own, imported), and the agent a case runs on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.claude.conftest import claude_chat, claude_env, mock_api, wrapper_bin  # noqa: F401
from tests.codex.conftest import codex_bin, codex_chat  # noqa: F401
from tests.opencode.conftest import opencode_bin, opencode_chat  # noqa: F401
from tests.support.agent_chats import chat_opener

from .drivers import DRIVERS, Driver


@pytest.fixture
def demo_chat() -> Iterator[object]:
    with chat_opener("demo", env={"ACP_DEMO_DELAY": "0"}) as open_chat:
        yield open_chat


@pytest.fixture
def agent(request: pytest.FixtureRequest) -> Driver:
    """The driver of the agent named by the case's ``agent`` parameter; only that agent's
    fixtures are set up (one that is not installed fails the case, never skips it)."""
    name: str = request.param
    driver = DRIVERS[name]
    opener = request.getfixturevalue(driver.fixture)
    mock = request.getfixturevalue(driver.mock) if driver.mock else None
    return driver(opener, mock, request.getfixturevalue("workdir"))
