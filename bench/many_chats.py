"""9. Many chats on one server: what an idle chat costs, and whether chunks get dearer.

The server's RSS grows by a per-chat amount as idle chats are opened (their agents are
other processes); the figure is that growth per chat from a few to many. The per-chunk
server CPU of one chat streaming is measured with a few chats open and again with many,
best of two each: the ratio says whether the cost of a chunk grows with the chats.
"""

from __future__ import annotations

import asyncio

from .common import (
    DEMO_ENV,
    Context,
    Row,
    Server,
    fmt,
    rss_bytes,
    stream_turn,
)

FEW = 10
GROWTH = 1.2  # per-chunk CPU with many chats open, at most this times with a few
MB = 1e6


async def _chunk_cpu(server: Server, chat_id: str, count: int) -> float:
    """Server CPU seconds per chunk while ``chat_id`` streams ``count`` chunks."""
    cpu, _wall = await stream_turn(server, chat_id, count)
    return cpu / count


async def _settled_rss(server: Server) -> int:
    await asyncio.sleep(1)  # the last opens' buffers freed
    return rss_bytes(server.pid)


async def _measure(server: Server, many: int, count: int) -> tuple[float, float, float]:
    async with server.chats(FEW, agent="demo", env=DEMO_ENV) as few_ids:
        await _chunk_cpu(server, few_ids[0], count)  # warm up
        few_cpu = [await _chunk_cpu(server, few_ids[0], count)]
        few_rss = await _settled_rss(server)
        async with server.chats(many - FEW, agent="demo", env=DEMO_ENV):
            many_rss = await _settled_rss(server)
            many_cpu = [await _chunk_cpu(server, few_ids[0], count) for _ in range(2)]
        few_cpu.append(await _chunk_cpu(server, few_ids[0], count))
    per_chat = (many_rss - few_rss) / (many - FEW)
    return per_chat, min(few_cpu), min(many_cpu)


def run(ctx: Context) -> list[Row]:
    many, count = ctx.sizes.many_chats, ctx.sizes.stream
    per_chat, few, many_cpu = asyncio.run(_measure(ctx.server(), many, count))
    name = f"9 {many} chats on one server"
    return [
        Row(
            name,
            "server RSS per idle chat",
            fmt(per_chat / 1000, "KB"),
            "",
            None,
            "measured",
            True,
        ),
        Row(
            name,
            f"server CPU per 1,000 chunks of one chat, {many} chats open",
            fmt(many_cpu * 1e6, "ms"),
            f"{fmt(few * 1e6, 'ms')} with {FEW} chats open",
            many_cpu / few,
            f"ratio <= {GROWTH}, in order",
            many_cpu / few <= GROWTH,
        ),
    ]
