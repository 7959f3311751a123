"""8. Notebook tools: ``list_variables`` over 10,000 variables and ``inspect_variable`` of a
1,000,000-row DataFrame, called over MCP like an agent does (the kernel's own endpoint,
local mode), time and bytes returned.

The reference is the same work done directly in the kernel, in the same run: the same
reader called in a cell (what the MCP round trip and the worker thread add), and for
bytes, what an unbounded answer would be (every variable's repr; the frame's data).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time

from jupyter_client.manager import KernelManager

from acp_notebook.wire.kernel_auth import SECRET_ENV, URL_ENV
from tests.support.mcp_client import text_of

from .common import REPO, Context, Row, fmt, kernel_stdout

SETUP = """
import json, time
import numpy as np, pandas as pd
from acp_notebook.kernel.chat import Chat
from acp_notebook.kernel.local_transport import local_client
from acp_notebook.notebook_tools.variables import format_listing, inspect_variable, list_variables
chat = Chat('demo', env={'ACP_DEMO_DELAY': '0'}, transport='local')
_endpoint = local_client().hub.chats[chat.chat_id].session.notebook
print(json.dumps([_endpoint.url, _endpoint.secret]))
"""
VARIABLES = """
_kinds = [lambda i: i, lambda i: f"text {i}" * 3, lambda i: list(range(i % 50)), lambda i: {"k": i}]
globals().update({f"v{i:05d}": _kinds[i % 4](i) for i in range({n})})
rows = {rows}
_rng = np.random.default_rng(0)
df = pd.DataFrame({"id": np.arange(rows), "value": _rng.random(rows),
                   "group": _rng.choice(["a", "b", "c"], rows)})
"""
REFERENCE = """
def _timed(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter(); out = fn(); times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2], len(out.encode())
_names = [k for k in globals() if k.startswith("v") and k[1:].isdigit()]
print(json.dumps({
    "list": _timed(lambda: format_listing(list_variables()), {repeats}),
    "inspect": _timed(lambda: inspect_variable("df"), {repeats}),
    "all_reprs": len("\\n".join(f"{k} = {globals()[k]!r}" for k in _names).encode()),
    "frame_bytes": int(df.memory_usage(index=True, deep=True).sum()),
}))
"""


class _Kernel:
    def __init__(self) -> None:
        env = {k: v for k, v in os.environ.items() if k not in (URL_ENV, SECRET_ENV)}
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), *sys.path])
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(env=env)
        self.client = self.manager.blocking_client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def run(self, code: str) -> str:
        return kernel_stdout(self.client, code, timeout=600)

    def stop(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


async def _calls(url: str, secret: str, repeats: int) -> dict[str, tuple[float, int]]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from acp_notebook.agent.mcp_servers import SECRET_HEADER

    results: dict[str, tuple[float, int]] = {}
    async with (
        httpx2.AsyncClient(headers={SECRET_HEADER: secret}, timeout=600) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        for tool, args in (("list_variables", {}), ("inspect_variable", {"name": "df"})):
            times, size = [], 0
            for _ in range(repeats):
                started = time.perf_counter()
                result = await client.call_tool(tool, args)
                times.append(time.perf_counter() - started)
                size = len(text_of(result).encode())
            results[tool] = (statistics.median(times), size)
    return results


def run(ctx: Context) -> list[Row]:
    n, rows = (10_000, 1_000_000) if ctx.sizes.stream >= 200_000 else (2_000, 100_000)
    repeats = max(3, ctx.sizes.repeats)
    kernel = _Kernel()
    try:
        url, secret = json.loads(kernel.run(SETUP).strip().splitlines()[-1])
        kernel.run(VARIABLES.replace("{n}", str(n)).replace("{rows}", str(rows)))
        tools = asyncio.run(_calls(url, secret, repeats))
        ref = json.loads(kernel.run(REFERENCE.replace("{repeats}", str(repeats))).strip())
    finally:
        kernel.stop()
    list_time, list_bytes = tools["list_variables"]
    inspect_time, inspect_bytes = tools["inspect_variable"]
    listing = f"8 notebook tools, list_variables over {n:,} variables"
    inspecting = f"8 notebook tools, inspect_variable of a {rows:,}-row DataFrame"
    reprs, frame = ref["all_reprs"], ref["frame_bytes"]
    list_ref = f"{fmt(reprs / 1000, 'KB')}: every variable's repr"
    inspect_ref = f"{fmt(frame / 1e6, 'MB')}: the frame's data"
    return [
        _timed(listing, list_time, ref["list"][0], "the same reader in a cell", 1.0),
        _sized(listing, list_bytes, reprs, list_ref, "≤ 200 entries of 200 chars", 200 * 300),
        _timed(inspecting, inspect_time, ref["inspect"][0], "the same summary in a cell", 5.0),
        _sized(inspecting, inspect_bytes, frame, inspect_ref, "≤ 20 KB", 20_000),
    ]


def _timed(benchmark: str, took: float, ref: float, ref_is: str, limit: float) -> Row:
    """An MCP call's time against the same work in a cell; ``limit`` in seconds."""
    reference = f"{fmt(ref * 1000, 'ms')}: {ref_is}"
    figure = fmt(took * 1000, "ms")
    return Row(
        benchmark, "time (MCP call)", figure, reference, took / ref, f"< {limit:g} s", took < limit
    )


def _sized(benchmark: str, size: int, ref: float, reference: str, target: str, limit: int) -> Row:
    """What an MCP call returns, in bytes, against what it summarizes."""
    figure = fmt(size / 1000, "KB")
    return Row(benchmark, "bytes returned", figure, reference, size / ref, target, size <= limit)
