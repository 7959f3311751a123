"""Queue to send: a prompt queued behind a turn goes to the agent when that turn ends.

``latency_agent.py`` holds one turn while the client queues MAX_QUEUE prompts, then
answers each at once, timing the gap from starting to write a turn's answer to reading
the next prompt. Server mode: a client of the browser socket queues them; local mode: a
``Chat`` (the hub in the kernel). The reference is a bare loop on the agent's pipes
that sends the next prompt as soon as it reads an answer.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

from acp_notebook.kernel.chat import Chat
from acp_notebook.wire.contracts import MAX_QUEUE

from .common import Context, Frame, Row, Server, fmt, percentile, rpc
from .latency import agent, timings

TARGET_MS = 50.0
HOLD = 1.0  # seconds the first turn of a round runs while the prompts are queued


def _reference(out: Path, rounds: int) -> list[float]:
    proc = subprocess.Popen(agent(out), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    try:
        rpc(proc, 1, "initialize", {"protocolVersion": 1})
        session = rpc(proc, 2, "session/new", {"cwd": ".", "mcpServers": []})["sessionId"]
        n = 3
        for _ in range(rounds):
            for text in (f"hold 0 {MAX_QUEUE}", *(["next"] * MAX_QUEUE)):
                prompt = [{"type": "text", "text": text}]
                rpc(proc, n, "session/prompt", {"sessionId": session, "prompt": prompt})
                n += 1
    finally:
        proc.stdin.close()
        proc.wait(10)
    return timings(out, rounds * MAX_QUEUE)


async def _server(server: Server, out: Path, rounds: int) -> list[float]:
    async with server.chats(1, command=agent(out)) as [chat_id]:
        peer = await server.browser_socket(chat_id)
        ended: dict[int, asyncio.Event] = {}

        def on_frame(frame: Frame) -> None:
            for event in frame["events"]:
                if event["kind"] == "turn_ended":
                    ended.setdefault(event["turn"], asyncio.Event()).set()

        peer.on_frame = on_frame
        try:
            for _ in range(rounds):
                prompt = {"type": "chat:prompt", "chatId": chat_id}
                await peer.request({**prompt, "text": f"hold {HOLD} {MAX_QUEUE}"})
                acks = [await peer.request({**prompt, "text": "next"}) for _ in range(MAX_QUEUE)]
                assert all(a.get("queued") for a in acks), acks
                last = ended.setdefault(acks[-1]["turn"], asyncio.Event())
                await asyncio.wait_for(last.wait(), 120)
        finally:
            await peer.close()
    return timings(out, rounds * MAX_QUEUE)


async def _local(out: Path, rounds: int) -> list[float]:
    chat = Chat(command=agent(out), transport="local")
    try:
        await chat.ready()
        for _ in range(rounds):
            chat.send_prompt(f"hold {HOLD} {MAX_QUEUE}")
            last = [chat.send_prompt("next") for _ in range(MAX_QUEUE)][-1]
            turn = await asyncio.to_thread(chat.wait, last, 120)
            assert turn.ok, turn
    finally:
        chat.close()
    return timings(out, rounds * MAX_QUEUE)


def _row(name: str, figure: str, gaps: list[float], reference: list[float]) -> Row:
    """Every gap counts: the figure is the worst one, beside the bare pipe's worst."""
    worst, bare = max(gaps), max(reference)
    p50 = fmt(percentile(gaps, 0.5), "ms")
    value = f"p50 {p50}, max {fmt(worst, 'ms')}"
    ref = f"p50 {fmt(percentile(reference, 0.5), 'ms')}, max {fmt(bare, 'ms')} (bare pipe)"
    return Row(name, figure, value, ref, worst / bare, f"max < {TARGET_MS:g} ms", worst < TARGET_MS)


def run(ctx: Context) -> list[Row]:
    rounds = max(1, ctx.sizes.turns // MAX_QUEUE)
    out = ctx.work / "queue.json"
    reference = _reference(out, rounds)
    in_server = asyncio.run(_server(ctx.server(), out, rounds))
    local = asyncio.run(_local(out, rounds))
    os.unlink(out)
    name = f"queue to send, {rounds * MAX_QUEUE:,} queued prompts"
    figures = {"server mode, browser socket queues": in_server, "local mode, Chat queues": local}
    return [_row(name, figure, gaps, reference) for figure, gaps in figures.items()]
