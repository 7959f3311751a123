"""Chats with the fault agent through a real Hub, and what the agent logged of them."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_notebook.bridge.chat_session import ChatSession
from acp_notebook.bridge.hub import Hub

from .agents import FAULT_AGENT
from .hub_chats import Recorder

Event = dict[str, Any]
PERSON = "alice"


def _is_answer(message: dict[str, Any]) -> bool:
    # The fault agent numbers its own requests; its garbage request has a string id.
    return "method" not in message and isinstance(message.get("id"), int)


def drain(rec: Recorder) -> None:
    """Take what is still queued, even on a closed subscription (as the server does)."""
    while (frame := rec.sub.pending_frame()) is not None:
        if frame.get("reset"):
            rec.events = []
        rec.events.extend(frame["events"])


@dataclass
class FaultChat:
    """A chat with the fault agent through a real Hub, watched by two subscribers."""

    hub: Hub
    chat_id: str
    session: ChatSession
    log: Path
    recs: list[Recorder]
    writes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rec(self) -> Recorder:
        return self.recs[0]

    def agent_log(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def received(self) -> list[dict[str, Any]]:
        """Every JSON-RPC message that reached the agent, in order."""
        return [e["recv"] for e in self.agent_log() if "recv" in e]

    def answers_received(self) -> list[dict[str, Any]]:
        """Answers that reached the agent (to its permission / question requests)."""
        return [m for m in self.received() if _is_answer(m)]

    def answers_written(self) -> list[dict[str, Any]]:
        """Answers our side wrote to the agent's stdin (a spy on the connection)."""
        return [m for m in self.writes if _is_answer(m)]

    def child_pids(self) -> list[int]:
        return [e["child"] for e in self.agent_log() if "child" in e]

    async def request(self, message: dict[str, Any], user: str | None = PERSON) -> Event:
        return await self.hub.handle({"chatId": self.chat_id, "id": 1, **message}, user=user)

    async def prompt(self, text: str) -> Event:
        return await self.request({"type": "chat:prompt", "text": text})

    async def cancel(self) -> Event:
        return await self.request({"type": "chat:cancel"})

    async def answer(self, req: Event, user: str | None = PERSON, **answer: Any) -> Event:
        kind = "permission" if req["kind"] == "permission_request" else "elicitation"
        return await self.request(
            {"type": f"chat:{kind}.respond", "requestId": req["requestId"], **answer}, user=user
        )

    async def everyone(self, kind: str, timeout: float = 20, **match: Any) -> list[Event]:
        """The event as every subscriber saw it."""
        return [await r.kind(kind, timeout, **match) for r in self.recs]


def spy_writes(fc: FaultChat) -> None:
    """Record every message our side writes to the agent (as tests/test_bridge.py does)."""
    conn = fc.session.conn
    write = conn._write

    def recording(data: bytes) -> None:
        fc.writes.append(json.loads(data))
        write(data)

    conn._write = recording


def fault_argv(fault: str, point: str, log: Path) -> list[str]:
    return [sys.executable, str(FAULT_AGENT), fault, point, str(log)]
