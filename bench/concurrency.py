"""5. Concurrency: many chats in one server, each streaming at once.

Every chat has its own client on the browser socket, which checks that its answer
arrives whole and in order. The figure is the server process's CPU time (user +
system, not its agents') per 1,000 chunks; the reference, the CPU time the bare
json.loads loop spends on 1,000 lines.
"""

from __future__ import annotations

import asyncio
import time

from .common import (
    DEMO_ENV,
    Context,
    Row,
    Server,
    StreamCheck,
    cpu_seconds,
    fmt,
    reference_cpu,
)


async def _run(server: Server, chats: int, count: int) -> tuple[float, float]:
    """CPU seconds of the server and wall seconds, for every chat streaming ``count``."""
    async with server.chats(chats, agent="demo", env=DEMO_ENV) as ids:
        peers = [await server.browser_socket(chat_id) for chat_id in ids]
        checks = [StreamCheck(count) for _ in ids]
        for peer, check in zip(peers, checks, strict=True):
            peer.on_frame = check.frame
        try:
            cpu, start = cpu_seconds(server.pid), time.perf_counter()
            prompt = f"stream {count}"
            await asyncio.gather(
                *(
                    peer.send({"type": "chat:prompt", "chatId": chat_id, "text": prompt})
                    for peer, chat_id in zip(peers, ids, strict=True)
                )
            )
            await asyncio.wait_for(asyncio.gather(*(c.ended.wait() for c in checks)), 900)
            cpu, wall = cpu_seconds(server.pid) - cpu, time.perf_counter() - start
        finally:
            for peer in peers:
                await peer.close()
    problems = [v for v in (c.verdict() for c in checks) if v is not None]
    assert not problems, f"{len(problems)} of {chats} chats: {problems[0]}"
    return cpu, wall


def run(ctx: Context) -> list[Row]:
    chats, count = ctx.sizes.chats, ctx.sizes.chat_chunks
    # Milliseconds of CPU per 1,000 chunks (lines).
    reference = reference_cpu(ctx.capture(ctx.sizes.stream)) * 1e6
    cpu, wall = asyncio.run(_run(ctx.server(), chats, count))
    per_thousand = cpu * 1e6 / (chats * count)
    return [
        Row(
            f"5 concurrency, {chats} chats x {count:,} chunks",
            f"server CPU ({fmt(chats * count / wall, 'chunks/s')} in all)",
            fmt(per_thousand, "ms CPU/1,000 chunks"),
            f"{fmt(reference, 'ms CPU/1,000 lines')} (json.loads loop)",
            per_thousand / reference,
            "all in order",
            True,  # _run asserted it
        )
    ]
