"""What the agent-side hardening costs and saves (issue 12), each next to its reference.

    python -m bench.agent_lines

1. Chat start: spawn + ``initialize`` of the demo agent under the reaper, against
   spawning it directly (the reference, as before the reaper).
2. One big agent line, through a real subprocess into AgentConnection: peak RSS
   growth of this process and the longest stall of its event loop, against
   ``json.loads`` of the same line (what the reader did before).
3. A real Jupyter server whose chat's agent sends such a line: the slowest
   ``/api/status`` answer while it does, against a turn without one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from jupyter_client.blocking.client import BlockingKernelClient

from acp_notebook.agent import connection
from acp_notebook.agent.connection import AgentConnection
from tests.support.lab import start_server
from tests.support.memory import peak_rss, reset_peak_rss

DEMO_AGENT = [sys.executable, "-m", "acp_notebook.demo.agent"]
MiB = 1024 * 1024


def _connection(argv: list[str], exited: asyncio.Event | None = None) -> AgentConnection:
    return AgentConnection(
        argv,
        on_request=lambda r: None,
        on_notification=lambda n: None,
        on_exit=lambda code: exited.set() if exited else None,
    )


async def start_once(reaped: bool) -> float:
    connection.REAPED = reaped
    conn = _connection(DEMO_AGENT)
    start = time.perf_counter()
    await conn.start()
    await conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    took = time.perf_counter() - start
    await conn.close()
    return took


async def chat_start(runs: int = 10) -> None:
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(runs):
        for use_reaper in (False, True):
            times[use_reaper].append(await start_once(use_reaper))
    connection.REAPED = sys.platform == "linux"
    direct, reaped_ms = (statistics.median(times[k]) * 1000 for k in (False, True))
    print(f"chat start (spawn + initialize, median of {runs})")
    print(f"  direct (reference)  {direct:7.1f} ms")
    print(f"  under the reaper    {reaped_ms:7.1f} ms   (+{reaped_ms - direct:.1f} ms)")


def objects_line(size: int) -> bytes:
    return b'{"jsonrpc":"2.0","method":"m","params":[' + b"{}," * (size // 3) + b"{}]}\n"


async def max_lag(work: asyncio.Future[object]) -> float:
    """The longest the loop went without running a 5 ms ticker while ``work`` ran."""
    worst, last = 0.0, time.perf_counter()
    while not work.done():
        await asyncio.sleep(0.005)
        now = time.perf_counter()
        worst, last = max(worst, now - last - 0.005), now
    await work
    return worst


async def through_connection(size: int) -> tuple[float, float]:
    script = (
        "import sys; sys.stdout.buffer.write("
        f'b\'{{"jsonrpc":"2.0","method":"m","params":[\' + b\'{{}},\' * {size // 3} + b\'{{}}]}}\\n\')'
    )
    exited = asyncio.Event()
    conn = _connection([sys.executable, "-c", script], exited)
    before = reset_peak_rss()
    await conn.start()
    lag = await max_lag(asyncio.ensure_future(exited.wait()))
    await conn.close()
    return (peak_rss() - before) / MiB, lag * 1000


async def reference(size: int) -> tuple[float, float]:
    line = objects_line(size)
    before = reset_peak_rss()
    loop = asyncio.get_running_loop()
    # json.loads holds the GIL for the whole parse: even in a thread it is one stall
    # (the reader ran it on the loop itself).
    lag = await max_lag(loop.run_in_executor(None, json.loads, line))
    del line
    return (peak_rss() - before) / MiB, lag * 1000


async def big_lines() -> None:
    print("one agent line of [{},{},...]: peak RSS growth, longest event-loop stall")
    for mb in (15, 50):
        ref_rss, ref_lag = await reference(mb * MiB)
        rss, lag = await through_connection(mb * MiB)
        print(f"  {mb} MB  json.loads (reference)  +{ref_rss:6.0f} MiB  {ref_lag:7.0f} ms")
        print(f"  {mb} MB  AgentConnection         +{rss:6.0f} MiB  {lag:7.0f} ms")


# An ACP agent in a few lines: a prompt "N" is answered with a line of N MB of {}.
BIG_LINE_AGENT = r"""
import json, sys
def send(message):
    sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
    sys.stdout.flush()
for line in sys.stdin.buffer:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        send({"id": message["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif method == "session/new":
        send({"id": message["id"], "result": {"sessionId": "s"}})
    elif method == "session/prompt":
        size = int(message["params"]["prompt"][0]["text"]) * 1024 * 1024
        if size:
            sys.stdout.buffer.write(
                b'{"jsonrpc":"2.0","method":"m","params":[' + b"{}," * (size // 3) + b"{}]}\n"
            )
        send({"id": message["id"], "result": {"stopReason": "end_turn"}})
    elif "id" in message:
        send({"id": message["id"], "error": {"code": -32601, "message": "no"}})
"""


def status_latency(url: str, during: Callable[[], None]) -> float:
    """The slowest GET of ``url`` (polled back to back) while ``during`` runs, in ms."""
    worst = 0.0
    done = threading.Event()

    def poll() -> None:
        nonlocal worst
        while not done.is_set():
            start = time.perf_counter()
            with urllib.request.urlopen(url, timeout=30) as response:
                response.read()
            worst = max(worst, time.perf_counter() - start)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        during()
    finally:
        done.set()
        poller.join()
    return worst * 1000


def server_status() -> None:
    print("a real Jupyter server: slowest /api/status while the chat's agent sends a line")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        agent = base / "agent.py"
        agent.write_text(BIG_LINE_AGENT)
        lab = start_server(base / "lab")
        client = BlockingKernelClient()
        try:
            request = urllib.request.Request(
                lab.url("api/kernels"), data=b'{"name": "python3"}', method="POST"
            )
            with urllib.request.urlopen(request, timeout=60) as response:
                kernel = json.load(response)
            client.load_connection_file(
                str(base / "lab" / "runtime" / f"kernel-{kernel['id']}.json")
            )
            client.start_channels()
            client.wait_for_ready(timeout=60)
            opened = client.execute_interactive(
                "from acp_notebook.kernel.chat import Chat\n"
                f"chat = Chat(command=[{sys.executable!r}, {str(agent)!r}])\n"
                "assert chat.mode == 'server', chat.mode\n",
                timeout=60,
            )
            assert opened["content"]["status"] == "ok", opened
            for mb in (0, 15, 50):
                cell = f'chat.send_prompt("{mb}")\n_ = chat.wait()\n'

                def turn(cell: str = cell) -> None:
                    client.execute_interactive(cell, timeout=120, output_hook=lambda msg: None)

                worst = status_latency(lab.url("api/status"), turn)
                what = "no big line (reference)" if mb == 0 else f"a {mb} MB line of {{}}"
                print(f"  {what:<24} {worst:7.0f} ms")
        finally:
            client.stop_channels()
            lab.stop()


async def main() -> None:
    logging.disable(logging.WARNING)  # the skipped lines are logged; the figures are the point
    await chat_start()
    await big_lines()


if __name__ == "__main__":
    asyncio.run(main())
    server_status()
