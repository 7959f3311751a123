"""Chats on an in-process Hub: a recorder of one subscription's events, the demo chat."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from acp_notebook.bridge.hub import Hub
from acp_notebook.bridge.subscriptions import Subscription

Event = dict[str, Any]


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


async def open_demo(hub: Hub, owner: str | None = None, **kw: Any) -> tuple[str, Recorder]:
    chat_id = await hub.open_chat("demo", env={"ACP_DEMO_DELAY": "0"}, owner=owner, **kw)
    rec = Recorder(hub.subscribe(chat_id))
    await hub.chats[chat_id].start_task
    assert hub.chats[chat_id].session.status == "ready"
    return chat_id, rec
