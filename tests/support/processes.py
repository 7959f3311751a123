"""Ending a server and waiting for processes to go, and telling which are left."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path


def terminate(proc: subprocess.Popen[bytes], wait: float) -> None:
    """SIGTERM, so a server ends its own children cleanly; its process group killed if it
    takes longer than ``wait`` seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def process_group(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is ``pgid``, from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # Fields after the command (which may hold spaces and parentheses).
        state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == pgid and state != "Z":
            members.append(int(entry))
    return members


def alive(pid: int) -> bool:
    """``pid`` is a live process (a zombie is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def all_gone(pids: list[int], pgid: int | None = None, timeout: float = 10) -> None:
    """Wait until none of ``pids`` (nor any member of group ``pgid``) is alive."""
    deadline = time.monotonic() + timeout
    while True:
        left = [p for p in pids if alive(p)] + (process_group(pgid) if pgid else [])
        if not left:
            return
        assert time.monotonic() < deadline, f"orphan processes left: {left}"
        await asyncio.sleep(0.05)


def exists(pid: int) -> bool:
    """``pid`` is a process (a zombie one too: it can still be signalled)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while exists(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True
