"""Agents die with the server: no orphan after SIGKILL or SIGTERM of the process hosting the Hub.

The fault agent ignores the end of its input and SIGTERM, and leaves a child in its
process group, one in a session of its own and a daemon (whose parent exited). The
host is a real process running a Hub (tests/support/fault_host.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acp_notebook.bridge.hub import ChatCount, Hub, HubConfig
from acp_notebook.notebook_tools.local_side import LocalBackend
from acp_notebook.notebook_tools.mcp_endpoint import Endpoint, ToolHost
from tests.support import fault_host
from tests.support.fault_chats import fault_argv
from tests.support.processes import alive, all_gone

HOST = Path(fault_host.__file__)


def child_pids(log: Path) -> list[int]:
    entries = [json.loads(line) for line in log.read_text().splitlines() if line]
    return [e["child"] for e in entries if "child" in e]


@pytest.mark.fault("the server hosting the chat gets {sig}; the agent ignores EOF and SIGTERM")
@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM"])
async def test_agent_and_all_its_descendants_die_with_the_server(tmp_path: Path, sig: str) -> None:
    log = tmp_path / "agent.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    host = subprocess.Popen(
        [sys.executable, str(HOST), "spawn", "initialize", str(log)],
        stdout=subprocess.PIPE,
        env=env,
    )
    try:
        assert host.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(host.stdout.readline), 30)
        pids = json.loads(line)
        processes = [pids["reaper"], pids["agent"], *child_pids(log)]
        assert len(processes) == 5 and all(map(alive, processes)), processes
        start = time.monotonic()
        host.send_signal(getattr(signal, sig))
        await all_gone(processes, pids["reaper"], timeout=10)
        took = time.monotonic() - start
        # SIGKILL: the reaper's SIGTERM, then its SIGKILL 1 s later. SIGTERM: the
        # Hub's close (2 s for EOF, then SIGTERM), then the same.
        assert took < (4 if sig == "SIGKILL" else 8), took
        assert host.wait(10) == (-9 if sig == "SIGKILL" else 0)
    finally:
        host.kill()
        host.wait()


@pytest.mark.fault("a chat opened while its kernel's chats are being closed (kernel shutdown)")
async def test_a_chat_opened_during_close_starts_no_agent(tmp_path: Path) -> None:
    # open_chat checked that the hub was open, then waited for the chat's notebook tools;
    # a close() meanwhile ended the chats it knew, and the new one started its agent in a
    # hub nobody would close again: an agent process left for the life of the server.
    gate = asyncio.Event()
    host = ToolHost()

    async def slow_tools() -> Endpoint:
        await gate.wait()
        return await host.add(LocalBackend())

    count = ChatCount(4)
    hub = Hub(HubConfig(chats=count), notebook_tools=slow_tools)
    log = tmp_path / "agent.jsonl"
    opening = asyncio.create_task(hub.open_chat(command=fault_argv("none", "stream", log)))
    await asyncio.sleep(0.1)
    await hub.close()
    gate.set()
    try:
        with pytest.raises(RuntimeError, match="closed"):
            await opening
        assert not hub.chats and count.open == 0
        assert not host._chats  # its notebook secret is withdrawn
        await asyncio.sleep(0.5)
        assert not log.exists()  # no agent ever started
    finally:
        await host.close()
