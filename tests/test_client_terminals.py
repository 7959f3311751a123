"""Client terminals (ACP ``terminal/*``): the demo agent's command shows in its tool call
as it prints, and no process of a terminal is left after a cancel, a close, a kill, a
release or the server's own death; ``outputByteLimit`` keeps the end and says so."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.agent.reaper import descendants
from acp_notebook.agent.terminals import ClientTerminals
from acp_notebook.bridge.hub import Hub
from acp_notebook.demo.agent import COUNTER
from acp_notebook.wire import fold as folding
from tests.support.hub_chats import Recorder, open_demo


def counters() -> set[int]:
    """The pids of the demo's counting commands (their script is in their command line)."""
    found = set()
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if COUNTER.encode() in cmdline and b"reaper.py" not in cmdline:
            found.add(int(entry))
    return found


async def gone(pids: set[int], within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not pids & counters():
            return True
        await asyncio.sleep(0.05)
    return False


def delta(event: dict[str, Any]) -> bool:
    update = event.get("update") or {}
    return "terminal_output_delta" in (update.get("_meta") or {})


async def start_counting(hub: Hub, lines: int) -> tuple[str, Recorder]:
    chat_id, rec = await open_demo(hub)
    ack = await hub.handle({"type": "chat:prompt", "chatId": chat_id, "text": f"terminal {lines}"})
    assert ack.get("accepted"), ack
    return chat_id, rec


async def test_a_command_shows_in_its_tool_call_as_it_prints(hub: Hub) -> None:
    chat_id, rec = await start_counting(hub, 5)
    first = await rec.until(delta)
    first_at = time.monotonic()
    ended = await rec.kind("turn_ended")
    # Five lines 0.2 s apart: the first is shown long before the command ends.
    assert time.monotonic() - first_at > 0.5
    assert ended["stopReason"] == "end_turn"
    state = folding.initial_state()
    for event in rec.events:
        folding.fold(state, event)
    (call,) = folding.last_tool_calls(state)
    assert call["status"] == "completed"
    terminal = call["terminal"]
    assert terminal["output"] == "".join(f"\x1b[32mline {i}\x1b[0m\n" for i in range(5))
    assert (terminal["exited"], terminal["exitCode"], terminal["cut"]) == (True, 0, 0)
    assert first["update"]["toolCallId"] == call["toolCallId"]
    assert 'the command printed 5 lines and exited: {"exitCode":0,"signal":null}' in rec.text()
    assert not hub.chats[chat_id].session.terminals._terminals  # released


async def test_cancel_and_close_leave_no_process(hub: Hub) -> None:
    chat_id, rec = await start_counting(hub, 0)
    await rec.until(delta)
    running = counters()
    assert running
    assert (await hub.handle({"type": "chat:cancel", "chatId": chat_id}))["accepted"]
    assert (await rec.kind("turn_ended"))["stopReason"] == "cancelled"
    assert await gone(running)
    chat_id, rec = await start_counting(hub, 0)
    await rec.until(delta)
    running = counters()
    await hub.close_chat(chat_id)
    assert await gone(running)


async def test_kill_release_and_the_output_limit(tmp_path: Path) -> None:
    updates: list[dict[str, Any]] = []
    terminals = ClientTerminals(str(tmp_path), dict(os.environ), updates.append)
    # 3,000 bytes of two-byte characters, 101 kept: the cut falls between characters.
    script = "import sys; sys.stdout.write('é' * 1500); print('pwd', __import__('os').getcwd())"
    made = await terminals.handle(
        "terminal/create",
        {"command": sys.executable, "args": ["-c", script], "outputByteLimit": 101},
    )
    ids = {"terminalId": made["terminalId"]}
    assert await terminals.handle("terminal/wait_for_exit", ids) == {"exitCode": 0, "signal": None}
    output = await terminals.handle("terminal/output", ids)
    assert output["truncated"] is True and output["output"].endswith(f"pwd {tmp_path}\n")
    assert len(output["output"].encode()) <= 101 and "\ufffd" not in output["output"]
    assert output["_meta"]["acp_notebook"]["cutBytes"] + len(output["output"].encode()) == (
        3000 + len(f"pwd {tmp_path}\n")
    )
    assert updates == []  # no tool call embeds it: nothing to show
    # A command that ignores SIGTERM, and a child of it that sleeps: kill ends both.
    stubborn = "import signal, subprocess, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
    stubborn += "subprocess.Popen(['sleep', '1000']); print('ready', flush=True); time.sleep(1000)"
    made = await terminals.handle(
        "terminal/create", {"command": sys.executable, "args": ["-c", stubborn]}
    )
    ids = {"terminalId": made["terminalId"]}
    terminals.watch({"toolCallId": "t1", "content": [{"type": "terminal", **ids}]})
    while not (await terminals.handle("terminal/output", ids))["output"]:
        await asyncio.sleep(0.05)
    await terminals.handle("terminal/kill", ids)
    status = await terminals.handle("terminal/wait_for_exit", ids)
    assert status["signal"] in ("SIGTERM", "SIGKILL"), status
    assert [u["_meta"].keys() for u in updates][-1] == {"terminal_exit"}
    assert updates[0]["toolCallId"] == "t1" and "terminal_info" in updates[0]["_meta"]
    await terminals.handle("terminal/release", ids)
    with pytest.raises(Exception, match="no such terminal"):
        await terminals.handle("terminal/output", ids)
    await terminals.close()
    with pytest.raises(Exception, match="closing"):
        await terminals.handle("terminal/create", {"command": "true"})


def test_no_terminal_outlives_the_server(tmp_path: Path) -> None:
    """A server killed with SIGKILL takes its terminals and their children along."""
    server = textwrap.dedent(
        f"""
        import asyncio, os, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
        from acp_notebook.agent.terminals import ClientTerminals

        async def main():
            terminals = ClientTerminals(os.getcwd(), dict(os.environ), lambda u: None)
            script = "import subprocess, time; subprocess.Popen(['sleep', '1000']);"
            script += "print('ready', flush=True); time.sleep(1000)"
            made = await terminals.handle(
                "terminal/create", {{"command": sys.executable, "args": ["-c", script]}}
            )
            ids = {{"terminalId": made["terminalId"]}}
            while not (await terminals.handle("terminal/output", ids))["output"]:
                await asyncio.sleep(0.05)
            print("started", flush=True)
            await asyncio.sleep(1000)

        asyncio.run(main())
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", server], stdout=subprocess.PIPE, cwd=tmp_path)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"started\n"
        ours = descendants(proc.pid)
        assert len(ours) >= 3  # the reaper, the command, its sleep
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(pid) for pid in ours):
            time.sleep(0.05)
        assert not [pid for pid in ours if _alive(pid)]
    finally:
        proc.kill()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"
