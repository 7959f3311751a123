"""Agents die with the server: no orphan after SIGKILL or SIGTERM of the process hosting the Hub.

The fault agent ignores the end of its input and SIGTERM, and leaves a child in its
process group, one in a session of its own and a daemon (whose parent exited). The
host is a real process running a Hub (tests/faults/host.py).
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

from .conftest import alive, all_gone

HOST = Path(__file__).with_name("host.py")


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
