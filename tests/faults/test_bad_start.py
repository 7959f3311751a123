"""A chat whose agent cannot be spawned at all: a NUL byte in its working directory,
its command or its environment, an "=" in a variable's name, a directory that does not
exist (issue 12: bad input gets a clear error).

Each ends the start with ``exited`` and says why, as a missing command does; the pipe
the reaper reports on is closed whatever failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import Any

import pytest

from acp_notebook.agent.connection import AgentConnection
from acp_notebook.agent.reaper import descendants
from acp_notebook.bridge.hub import Hub, HubConfig
from tests.support.agents import FAULT_AGENT
from tests.support.hub_chats import Recorder

AGENT = [sys.executable, str(FAULT_AGENT), "none", "stream", os.devnull]


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.fault("an agent started with {case}")
@pytest.mark.parametrize(
    ("case", "options", "why"),
    [
        ("a NUL in its cwd", {"cwd": "/tmp/a\0b"}, "embedded null byte"),
        ("a NUL in its command", {"command": ["/bin/ec\0ho"]}, "embedded null byte"),
        ("a NUL in an env value", {"env": {"A": "b\0"}}, "embedded null byte"),
        ("an = in an env name", {"env": {"A=B": "c"}}, "illegal environment variable name"),
        ("a cwd that does not exist", {"cwd": "/nonexistent/dir"}, "No such file or directory"),
    ],
)
async def test_an_agent_that_cannot_be_spawned_is_said_so(
    case: str, options: dict[str, Any], why: str
) -> None:
    hub = Hub(HubConfig())
    before = open_files()
    ack = await hub.handle(
        {"type": "chat:open", "id": 1, "command": AGENT, "cwd": "/tmp", **options}, trusted=True
    )
    assert ack["accepted"], ack
    rec = Recorder(hub.subscribe(ack["chatId"]))
    await hub.chats[ack["chatId"]].start_task
    assert hub.chats[ack["chatId"]].session.status == "exited"
    exited = await rec.kind("agent_status", status="exited")
    assert exited["detail"].startswith("could not start") and why in exited["detail"], exited
    await hub.close()
    assert open_files() == before


MARK = "cancelled-start-test"


def marked() -> list[int]:
    """The agents of the test below still alive (the reaper's own descendant reader)."""
    alive = []
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as f:
            if MARK.encode() in f.read():
                alive.append(pid)
    return alive


@pytest.mark.fault("a start cancelled while its reaper starts, then another agent started")
async def test_a_cancelled_start_steals_no_other_agents_status() -> None:
    # The cancelled start's reading thread must keep its pipe's fd: freed, its number is
    # the next pipe's, and the thread read the next agent's status ("reaper ended").
    def connection() -> AgentConnection:
        return AgentConnection(
            [sys.executable, "-c", f"import sys; sys.stdin.read()  # {MARK}"],
            on_request=lambda request: None,
            on_notification=lambda note: None,
            on_exit=lambda code: None,
        )

    before = open_files()
    for delay in [0.002 * i for i in range(15)]:
        first = connection()
        cancelled = asyncio.create_task(first.start())
        await asyncio.sleep(delay)
        cancelled.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await cancelled
        await first.close(grace=1)  # started before the cancel landed, it runs
        started = connection()
        await started.start()
        assert started.agent_pid, delay
        await started.close(grace=1)
    # A cancelled start's thread and pipes end with its reaper, and its agent is ended.
    for _ in range(100):
        if open_files() == before and not marked():
            break
        await asyncio.sleep(0.05)
    assert open_files() == before and not marked()
