from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.bridge.chat_session import SessionConfig
from acp_notebook.bridge.hub import Hub, HubConfig
from acp_notebook.bridge.subscriptions import Subscription

from .mock_openai import MockOpenAI

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


class Recorder:
    """Collects one subscription's events and waits for the ones a test expects."""

    def __init__(self, sub: Subscription) -> None:
        self.sub = sub
        self.events: list[Event] = []
        self.frames = 0

    async def until(self, pred: Callable[[Event], bool], timeout: float = 15.0) -> Event:
        for event in self.events:
            if pred(event):
                return event
        async with asyncio.timeout(timeout):
            while True:
                frame = await self.sub.next_frame()
                assert frame is not None, "subscription closed"
                self.frames += 1
                if frame.get("reset"):
                    self.events = []
                self.events.extend(frame["events"])
                for event in frame["events"]:
                    if pred(event):
                        return event

    async def kind(self, kind: str, timeout: float = 15.0, **match: Any) -> Event:
        return await self.until(
            lambda e: e["kind"] == kind and all(e.get(k) == v for k, v in match.items()), timeout
        )

    def text(self) -> str:
        return "".join(
            e["update"]["content"].get("text", "")
            for e in self.events
            if e["kind"] == "update" and e["update"].get("sessionUpdate") == "agent_message_chunk"
        )

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e["kind"] == kind]


def answered_json(text: str) -> Any:
    return json.loads(text.split("elicitation answered: ", 1)[1])


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


async def open_demo(hub: Hub, owner: str | None = None, **kw: Any) -> tuple[str, Recorder]:
    chat_id = await hub.open_chat("demo", env={"ACP_DEMO_DELAY": "0"}, owner=owner, **kw)
    rec = Recorder(hub.subscribe(chat_id))
    await hub.chats[chat_id].start_task
    assert hub.chats[chat_id].session.status == "ready"
    return chat_id, rec
