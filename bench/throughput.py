"""1. Streaming throughput: the demo agent's ``stream N``, against a bare json.loads loop.

(a) server mode: chunks per second that reach a client of the browser socket of a real
Jupyter server; (b) local mode: chunks per second folded by ``Chat`` (the hub on its
thread, the Python fold). The reference: the same bytes from a pipe, json.loads-ed line
by line (the server reads a streamed chunk line without parsing it whole, so it may beat
this). Runs are interleaved and each figure is the best of its runs.
"""

from __future__ import annotations

import asyncio
import time

from acp_notebook.kernel.chat import Chat

from .common import DEMO_ENV, Context, Row, Server, fmt, reference_rate, stream_text, stream_turn

TARGET = 0.5
SERVER_TARGET = 0.8  # issue 16's bar for what a browser gets


async def _server_run(server: Server, chat_id: str, count: int) -> float:
    _cpu, wall = await stream_turn(server, chat_id, count)
    return count / wall


async def _local_run(chat: Chat, count: int) -> float:
    start = time.perf_counter()
    turn = await chat.ask(f"stream {count}", timeout=600)
    elapsed = time.perf_counter() - start
    assert turn.text == stream_text(count), "local mode: chunks lost or reordered"
    return count / elapsed


async def _measure(ctx: Context) -> tuple[float, float, float]:
    count = ctx.sizes.stream
    capture = ctx.capture(count)
    server = ctx.server()
    chat = Chat("demo", env=DEMO_ENV, transport="local")
    best_ref = best_server = best_local = 0.0
    try:
        await chat.ready()
        async with server.chats(1, agent="demo", env=DEMO_ENV) as [chat_id]:
            for _ in range(ctx.sizes.repeats):
                best_ref = max(best_ref, reference_rate(capture))
                best_server = max(best_server, await _server_run(server, chat_id, count))
                best_local = max(best_local, await _local_run(chat, count))
    finally:
        chat.close()
    return best_ref, best_server, best_local


def run(ctx: Context) -> list[Row]:
    limit, server, local = asyncio.run(_measure(ctx))
    reference = f"{fmt(limit, 'lines/s')} (pipe + json.loads)"
    name = f"1 throughput, {ctx.sizes.stream:,} chunks"
    return [
        Row(
            name,
            "server mode, browser socket",
            fmt(server, "chunks/s"),
            reference,
            server / limit,
            f"ratio >= {SERVER_TARGET}, in order",
            server / limit >= SERVER_TARGET,
        ),
        Row(
            name,
            "local mode, Python fold",
            fmt(local, "chunks/s"),
            reference,
            local / limit,
            f"ratio >= {TARGET}, in order",
            local / limit >= TARGET,
        ),
    ]
