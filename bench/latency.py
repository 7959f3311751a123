"""2. Question latency: ``elicitation/create`` written -> question shown -> answered -> read.

``latency_agent.py`` asks N questions in one turn and times each round trip itself.
Server mode: a client of the browser socket answers each ``elicitation_request``;
local mode: a ``Chat`` policy answers (the hub on the kernel's own thread). The
reference is the same agent answered by a bare loop on its pipes.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from acp_notebook.kernel.chat import Chat

from .common import Context, Frame, Row, Server, fmt, percentile, rpc

AGENT = Path(__file__).with_name("latency_agent.py")
TARGET_MS = 10.0
ANSWER = {"action": "accept", "content": {"answer": "ok"}}


def agent(out: Path) -> list[str]:
    """latency_agent.py, writing its timings to ``out`` (queue_latency.py uses it too)."""
    return [sys.executable, str(AGENT), str(out)]


def timings(out: Path, count: int) -> list[float]:
    """The ``count`` timings the agent wrote, in ms."""
    trips: list[float] = json.loads(out.read_text())
    assert len(trips) == count, f"{len(trips)} of {count} timed"
    return [t * 1000 for t in trips]


def _reference(out: Path, count: int) -> list[float]:
    """The agent's pipes answered by a bare loop: the floor of a round trip."""
    proc = subprocess.Popen(agent(out), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    try:
        rpc(proc, 1, "initialize", {"protocolVersion": 1})
        session = rpc(proc, 2, "session/new", {"cwd": ".", "mcpServers": []})
        prompt = [{"type": "text", "text": f"ask {count}"}]
        params = {"sessionId": session["sessionId"], "prompt": prompt}
        rpc(proc, 3, "session/prompt", params, answer=lambda request: ANSWER)
    finally:
        proc.stdin.close()
        proc.wait(10)
    return timings(out, count)


async def _server(server: Server, out: Path, count: int) -> list[float]:
    async with server.chats(1, command=agent(out)) as [chat_id]:
        peer = await server.browser_socket(chat_id)
        ended = asyncio.Event()

        def on_frame(frame: Frame) -> None:
            for event in frame["events"]:
                if event["kind"] == "elicitation_request":
                    answer = {
                        "type": "chat:elicitation.respond",
                        "chatId": chat_id,
                        "requestId": event["requestId"],
                        "action": "accept",
                        "values": {"answer": "ok"},
                    }
                    peer.post(answer)
                elif event["kind"] == "turn_ended":
                    ended.set()

        peer.on_frame = on_frame
        try:
            await peer.request({"type": "chat:prompt", "chatId": chat_id, "text": f"ask {count}"})
            await asyncio.wait_for(ended.wait(), 300)
        finally:
            await peer.close()
    return timings(out, count)


async def _local(out: Path, count: int) -> list[float]:
    chat = Chat(command=agent(out), transport="local")
    try:
        chat.on_elicitation(lambda request: {"answer": "ok"})
        await chat.ready()
        turn = await chat.ask(f"ask {count}", timeout=300)
        assert turn.ok, turn
    finally:
        chat.close()
    return timings(out, count)


def _row(name: str, figure: str, trips: list[float], reference: list[float]) -> Row:
    p50, p99 = percentile(trips, 0.5), percentile(trips, 0.99)
    ref50, ref99 = percentile(reference, 0.5), percentile(reference, 0.99)
    return Row(
        name,
        figure,
        f"p50 {fmt(p50, 'ms')}, p99 {fmt(p99, 'ms')}",
        f"p50 {fmt(ref50, 'ms')}, p99 {fmt(ref99, 'ms')} (bare pipe)",
        p99 / ref99,
        f"p99 < {TARGET_MS:g} ms",
        p99 < TARGET_MS,
    )


def run(ctx: Context) -> list[Row]:
    count = ctx.sizes.questions
    out = ctx.work / "latency.json"
    server = ctx.server()
    reference = _reference(out, count)
    in_server = asyncio.run(_server(server, out, count))
    local = asyncio.run(_local(out, count))
    os.unlink(out)
    name = f"2 question latency, {count:,} round trips"
    return [
        _row(name, "server mode, browser socket answers", in_server, reference),
        _row(name, "local mode, Chat policy answers", local, reference),
    ]
