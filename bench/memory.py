"""4. Memory: the server's RSS before and after streaming N chunks through one chat.

A server of its own (a fresh process, so that no earlier benchmark's allocations hide
growth), one chat read by a client of the browser socket. The bound is what a chat may
keep (the extension's ``history_bytes``) plus 20 MB.
"""

from __future__ import annotations

import asyncio
import time

from acp_notebook.server.app import AcpNotebookApp

from .common import DEMO_ENV, Context, Row, Server, StreamCheck, fmt, rss_bytes

SLACK = 20 * 1000 * 1000
MB = 1000 * 1000


async def _stream(server: Server, chat_id: str, count: int) -> None:
    peer = await server.browser_socket(chat_id)
    try:
        check = StreamCheck(count)
        peer.on_frame = check.frame
        await peer.send({"type": "chat:prompt", "chatId": chat_id, "text": f"stream {count}"})
        await asyncio.wait_for(check.ended.wait(), 900)
    finally:
        await peer.close()
    assert check.verdict() is None, check.verdict()


async def _growth(server: Server, count: int) -> int:
    async with server.chats(1, agent="demo", env=DEMO_ENV) as [chat_id]:
        # A first turn brings every code path (and its imports) in before the baseline.
        await _stream(server, chat_id, 10_000)
        await asyncio.sleep(1)
        before = rss_bytes(server.pid)
        await _stream(server, chat_id, count)
        await asyncio.sleep(1)
        return rss_bytes(server.pid) - before


def run(ctx: Context) -> list[Row]:
    count = ctx.sizes.memory_chunks
    history = AcpNotebookApp.class_traits()["history_bytes"].default_value
    bound = history + SLACK
    server = Server.start(ctx.work / f"memory-server-{time.monotonic_ns()}")
    try:
        growth = asyncio.run(_growth(server, count))
    finally:
        server.stop()
    return [
        Row(
            f"4 memory, {count:,} chunks in one chat",
            "server RSS growth",
            fmt(growth / MB, "MB"),
            f"{fmt(bound / MB, 'MB')} (history_bytes {history / MB:.1f} MB + 20 MB)",
            growth / bound,
            "ratio <= 1",
            growth <= bound,
        )
    ]
