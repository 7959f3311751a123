"""Time-bound waits on a ``Chat`` driving a real agent, and what a chat whose agent is gone
says."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from acp_notebook.kernel.chat import Chat, ChatError, Turn

TIMEOUT = 60.0  # generous: other suites may be loading the 2-core CI box


async def ready(chat: Chat) -> None:
    async with asyncio.timeout(TIMEOUT):
        status = await chat.ready()
    assert status == "ready", chat.state["agent"]


async def finish(task: asyncio.Task[Turn]) -> Turn:
    """The turn a background ``chat.ask`` ended with."""
    async with asyncio.timeout(TIMEOUT):
        return await task


async def ask(chat: Chat, text: str) -> Turn:
    async with asyncio.timeout(TIMEOUT):
        return await chat.ask(text)


async def refuses_prompts(chat: Chat) -> None:
    """The chat's agent is gone: a prompt is refused with AGENT_EXITED."""
    with pytest.raises(ChatError) as err:
        await chat.ask("hello")
    assert err.value.code == "AGENT_EXITED"


async def next_pending(chat: Chat, kind: str) -> dict[str, Any]:
    """The oldest pending request of ``kind`` (permission|elicitation), once one is there."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            found = [p for p in chat.pending if p["type"] == kind]
            if found:
                return found[0]
            if chat.status == "exited":
                raise AssertionError(f"the agent exited: {chat.state['agent']}")
            await asyncio.sleep(0.02)


class EventLog:
    """Every event a chat emits from ``start()`` on (``chat.events()`` in a task)."""

    def __init__(self, chat: Chat) -> None:
        self.chat = chat
        self.events: list[dict[str, Any]] = []
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> EventLog:
        self._task = asyncio.create_task(self._collect())
        await asyncio.sleep(0)  # let the listener register before anything happens
        return self

    async def _collect(self) -> None:
        async for event in self.chat.events():
            self.events.append(event)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] == kind]

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
