from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.bridge.chat_session import SessionConfig
from acp_notebook.bridge.hub import Hub, HubConfig
from tests.support.mock_openai import MockOpenAI

Event = dict[str, Any]

# The browser fixtures (server, browser, page) are shared by tests/browser and tests/faults.
pytest_plugins = ["tests.browser.fixtures"]


@pytest.fixture(autouse=True, scope="session")
def demo_sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every demo agent of the run (servers and kernels inherit it) stores its sessions
    here, not in the user's data directory."""
    path = tmp_path_factory.mktemp("demo-sessions")
    saved = os.environ.get("ACP_DEMO_SESSIONS")
    os.environ["ACP_DEMO_SESSIONS"] = str(path)
    yield path
    if saved is None:
        del os.environ["ACP_DEMO_SESSIONS"]
    else:
        os.environ["ACP_DEMO_SESSIONS"] = saved


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Chromium tests last: Playwright's sync API keeps an event loop running in the
    # main thread until the session ends, so no async test can start after the first.
    items.sort(key=lambda item: "page" in getattr(item, "fixturenames", ()))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A real agent's cwd: files the tests have the model write land here."""
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def mock_openai() -> Iterator[MockOpenAI]:
    """The OpenAI APIs (Responses, Chat Completions) that codex and opencode call, mocked."""
    with MockOpenAI() as mock:
        yield mock


@pytest.fixture
async def hub() -> AsyncIterator[Hub]:
    h = Hub(HubConfig(session=SessionConfig(answer_timeout=30)))
    yield h
    await h.close()
