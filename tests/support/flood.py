"""A flood of connections to the notebook tools' port, as any process on the machine can
send one: idle connections, half-sent request heads, junk requests without a secret.

``Flood`` keeps its connections open: each one the server closes is opened again (and
its junk sent again), so the pressure lasts as long as the flood. ``python -m
tests.support.flood URL IDLE HALF JUNK`` runs one in a process of its own (the
benchmark's), printing ``ready`` once every connection was opened once, until killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from acp_notebook.agent.mcp_servers import SECRET_HEADER

BODY = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}'


def junk_request(host: str, path: str) -> bytes:
    """A whole MCP request with a wrong secret."""
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\n{SECRET_HEADER}: not-the-secret\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Length: {len(BODY)}\r\n\r\n"
    ).encode() + BODY


def half_head(host: str, path: str) -> bytes:
    """A request head that never ends."""
    return f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: appl".encode()


@dataclass
class Flood:
    url: str
    idle: int = 0
    half: int = 0
    junk: int = 0
    # What the server did: junk answered (any status line), connections it closed.
    answered: dict[int, int] = field(default_factory=dict)
    closed: int = 0
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _ready: asyncio.Event = field(default_factory=asyncio.Event)
    _opened: int = 0

    async def __aenter__(self) -> Flood:
        parts = urlsplit(self.url)
        host, port, path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
        kinds = [b""] * self.idle + [half_head(host, path)] * self.half
        kinds += [junk_request(host, path)] * self.junk
        self._tasks = [asyncio.create_task(self._keep(host, port, sent)) for sent in kinds]
        await self._ready.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _keep(self, host: str, port: int, sent: bytes) -> None:
        """One connection sending ``sent``, opened again each time the server closes it."""
        counted = False
        while True:
            writer = None
            try:
                reader, writer = await asyncio.open_connection(host, port)
                if sent:
                    writer.write(sent)
                    await writer.drain()
                counted = counted or self._count()
                status = await reader.readline()
                if status:
                    code = int(status.split()[1])
                    self.answered[code] = self.answered.get(code, 0) + 1
                    await reader.read()  # to the server's close
            except (OSError, ValueError, IndexError):
                counted = counted or self._count()
                await asyncio.sleep(0.01)  # refused at connect: the port's backlog is full
            finally:
                self.closed += 1
                if writer is not None:
                    writer.close()
                    with contextlib.suppress(Exception):
                        await writer.wait_closed()

    def _count(self) -> bool:
        """This connection was opened (or tried) once."""
        self._opened += 1
        if self._opened == len(self._tasks):
            self._ready.set()
        return True


async def _main(url: str, idle: int, half: int, junk: int) -> None:
    async with Flood(url, idle, half, junk):
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    url, idle, half, junk = sys.argv[1], *map(int, sys.argv[2:5])
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(url, idle, half, junk))
