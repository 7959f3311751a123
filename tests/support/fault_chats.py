"""Chats with the fault agent (through a real Hub, or from a kernel through the server
extension), and what the agent logged of them."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_notebook.bridge.chat_session import ChatSession
from acp_notebook.bridge.hub import Hub

from .agents import FAULT_AGENT
from .frontend import Cells
from .hub_chats import Recorder

Event = dict[str, Any]
PERSON = "alice"


def _is_answer(message: dict[str, Any]) -> bool:
    # The fault agent numbers its own requests; its garbage request has a string id.
    return "method" not in message and isinstance(message.get("id"), int)


def agent_log(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    # The agent may be writing its last line: only lines it has ended count.
    lines = log.read_text().split("\n")[:-1]
    return [json.loads(line) for line in lines if line]


def received(log: Path) -> list[dict[str, Any]]:
    """Every JSON-RPC message that reached the agent, in order."""
    return [e["recv"] for e in agent_log(log) if "recv" in e]


def answers_received(log: Path) -> list[dict[str, Any]]:
    """Answers that reached the agent (to its permission / question requests)."""
    return [m for m in received(log) if _is_answer(m)]


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
        return agent_log(self.log)

    def received(self) -> list[dict[str, Any]]:
        return received(self.log)

    def answers_received(self) -> list[dict[str, Any]]:
        return answers_received(self.log)

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


def kernel_chat_cell(log: Path, then: str = "", fault: str = "none") -> str:
    """A cell that opens a chat with the fault agent through the extension."""
    return (
        "import json, time\n"
        "from acp_notebook.kernel.chat import Chat\n"
        f"chat = Chat(command={fault_argv(fault, 'stream', log)!r})\n"
        "assert chat.mode == 'server', chat.mode\n"
        "while chat.status == 'starting':\n"
        "    time.sleep(0.02)\n"
        "print('chat:' + json.dumps({'chat': chat.chat_id, 'kernel': chat.kernel_id}), flush=True)\n"
        + then
    )


def answers(log: Path) -> list[Any]:
    """The results of the answers that reached the agent (to its own, numbered requests)."""
    return [m.get("result") for m in answers_received(log)]


# The ``open_kernel_chat`` fixture: kernel id, chat id, log.
OpenKernelChat = Callable[..., Awaitable[tuple[str, str, Path]]]


async def open_in_kernel(kernel: Cells, log: Path, then: str = "") -> str:
    """Opens a chat with the fault agent from ``kernel``, which then runs ``then``; its id."""
    out = await kernel.run(kernel_chat_cell(log, then))
    return str(json.loads(out.split("chat:", 1)[1].splitlines()[0])["chat"])
