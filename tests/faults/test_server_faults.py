"""Server and kernel faults through a real Jupyter server and the extension's sockets.

The server fixtures are ``tests/server``'s (imported, not copied). The chats run the
fault agent, whose log says exactly which answers reached it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_server.serverapp import ServerApp
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from acp_notebook.wire import fold as folding
from tests.server.conftest import *  # noqa: F403  (pytest-jupyter's and tests/server's fixtures)
from tests.support.fault_chats import OpenKernelChat, answers, kernel_chat_cell
from tests.support.lab import JupyterServer, start_server
from tests.support.processes import alive, all_gone, process_group
from tests.support.server_peers import Peer, ServerKernels

FLOOD = 60_000


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def server_errors(jp_serverapp: ServerApp) -> Iterator[None]:
    """No error in the server's log (the extension logs through it)."""
    handler = _Records()
    jp_serverapp.log.addHandler(handler)
    yield
    jp_serverapp.log.removeHandler(handler)
    assert not handler.records, [r.getMessage() for r in handler.records]


async def tab_with_card(browser: Any, kernel_id: str, chat_id: str, kind: str) -> tuple[Peer, Any]:
    tab: Peer = await browser(kernel_id, chat_id)
    return tab, await tab.card(chat_id, kind)


def masked_frame(text: str) -> bytes:
    """A client's WebSocket text frame, as the browser would put it on the wire."""
    payload = text.encode()
    size = len(payload)
    if size < 126:
        head = bytes([0x81, 0x80 | size])
    elif size < 1 << 16:
        head = bytes([0x81, 0x80 | 126]) + size.to_bytes(2, "big")
    else:
        head = bytes([0x81, 0x80 | 127]) + size.to_bytes(8, "big")
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def resolved_once(tab: Peer, chat_id: str, request_id: str) -> list[Any]:
    return [
        e
        for e in tab.events.get(chat_id, [])
        if e["kind"].endswith("_resolved") and e["requestId"] == request_id
    ]


@pytest.mark.fault("the socket drops mid-answer ({how})")
@pytest.mark.parametrize("how", ["after the whole frame", "halfway through the frame"])
async def test_socket_drops_mid_answer(
    open_kernel_chat: OpenKernelChat, browser: Any, server_errors: None, how: str
) -> None:
    kernel_id, chat_id, log = await open_kernel_chat('chat.send_prompt("ask")\n')
    tab, card = await tab_with_card(browser, kernel_id, chat_id, "elicitation_request")
    answer = json.dumps(
        {
            "type": "chat:elicitation.respond",
            "chatId": chat_id,
            "requestId": card["requestId"],
            "action": "accept",
            "values": {"color": "green"},
            "id": 99,
        }
    )
    frame = masked_frame(answer)
    stream = tab.ws.protocol.stream  # type: ignore[union-attr]
    whole = how == "after the whole frame"
    await stream.write(frame if whole else frame[: len(frame) // 2])
    stream.close()  # no close handshake: the connection is simply gone
    await tab.wait_closed()

    # The page comes back: the card is either answered (once) or still pending.
    again: Peer = await browser(kernel_id, chat_id)
    await again.resync(chat_id)
    if whole:
        resolved = await again.event(chat_id, "elicitation_resolved")
        assert resolved["outcome"] == "accepted"
        retry = await again.request(json.loads(answer))
        assert retry["error"] == "ELICITATION_NOT_FOUND"
    else:
        assert not resolved_once(again, chat_id, card["requestId"])
        assert (await again.request(json.loads(answer)))["accepted"]
    await again.event(chat_id, "turn_ended", turn=1)
    assert len(resolved_once(again, chat_id, card["requestId"])) == 1
    assert answers(log) == [{"action": "accept", "content": {"color": "green"}}]


@pytest.mark.fault("the browser reloads during a stream")
async def test_reload_during_a_stream(
    open_kernel_chat: OpenKernelChat,
    browser: Any,
    ws_url: Any,
    jp_serverapp: ServerApp,
    server_errors: None,
) -> None:
    kernel_id, chat_id, _log = await open_kernel_chat()
    first: Peer = await browser(kernel_id, chat_id)
    await first.resync(chat_id)
    prompt = {"type": "chat:prompt", "chatId": chat_id, "text": f"flood {FLOOD}"}
    assert (await first.request(prompt))["accepted"]
    await first.event(chat_id, "update")  # the stream is flowing
    first.ws.protocol.stream.close()  # type: ignore[union-attr]
    await first.wait_closed()

    # The reloaded page, frame by frame, folded as the widget folds them.
    token = jp_serverapp.identity_provider.token
    url = ws_url("acp-notebook/ws/browser", kernel=kernel_id, chat=chat_id)
    ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {token}"}))
    ws.write_message(json.dumps({"type": "chat:resync", "chatId": chat_id, "id": "r"}))
    state = folding.initial_state()
    ended = False
    async with asyncio.timeout(60):
        while not ended:
            frame = json.loads(await ws.read_message())  # type: ignore[arg-type]
            if frame.get("reset") or frame.get("ack") == "r":
                state = folding.initial_state()
            for event in frame.get("events", []):
                state = folding.fold(state, event)
                ended = ended or event["kind"] == "turn_ended"
    ws.close()
    texts = [i["text"] for i in folding.snapshot(state)["items"] if i.get("messageId") == "turn-1"]
    assert texts == ["".join(f"{i} " for i in range(FLOOD))]  # nothing lost, nothing twice


@pytest.mark.fault("kernel restart with a question pending")
async def test_restart_with_a_question_pending(
    open_kernel_chat: OpenKernelChat, browser: Any, kernels: ServerKernels, server_errors: None
) -> None:
    kernel_id, chat_id, log = await open_kernel_chat('chat.send_prompt("permission")\n')
    tab, card = await tab_with_card(browser, kernel_id, chat_id, "permission_request")
    await kernels.restart(kernel_id)
    # The chat outlives the kernel process: the card is still pending, and answerable.
    again: Peer = await browser(kernel_id, chat_id)
    ack = await again.resync(chat_id)
    assert [e["requestId"] for e in ack["events"] if e["kind"] == "permission_request"] == [
        card["requestId"]
    ]
    assert not resolved_once(again, chat_id, card["requestId"])
    assert (await again.respond(chat_id, card, optionId="reject"))["accepted"]
    for peer in (tab, again):
        await peer.event(chat_id, "turn_ended", turn=1)
        assert len(resolved_once(peer, chat_id, card["requestId"])) == 1
    assert answers(log) == [{"outcome": {"outcome": "selected", "optionId": "reject"}}]
    assert kernels.hub(kernel_id) is not None


@pytest.mark.fault("kernel shutdown with a question pending (two tabs)")
async def test_shutdown_with_a_question_pending(
    open_kernel_chat: OpenKernelChat, browser: Any, kernels: ServerKernels, server_errors: None
) -> None:
    kernel_id, chat_id, log = await open_kernel_chat('chat.send_prompt("ask")\n')
    tabs = [(await tab_with_card(browser, kernel_id, chat_id, "elicitation_request")) for _ in "ab"]
    card = tabs[0][1]
    hub = kernels.hub(kernel_id)
    assert hub is not None
    pid = hub.chats[chat_id].session.conn.pid
    assert pid is not None

    await kernels.shut_down(kernel_id)
    for tab, _ in tabs:
        await tab.wait_closed()
        resolved = resolved_once(tab, chat_id, card["requestId"])
        assert [r["outcome"] for r in resolved] == ["cancelled"]
    assert answers(log) == [{"action": "cancel"}]  # one answer, and not an approval
    await all_gone([pid], pid)


def descendants(root: int) -> list[int]:
    """Every live process below ``root``, from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return [p for p in found if alive(p)]


async def run_in_new_kernel(lab: JupyterServer, root: Path, code: str) -> None:
    """Starts a kernel on the server and runs ``code`` in it to completion."""
    kernel = json.loads(await asyncio.to_thread(_post, lab.url("api/kernels"), {"name": "python3"}))
    client = AsyncKernelClient()
    client.load_connection_file(str(root / "runtime" / f"kernel-{kernel['id']}.json"))
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        reply = await client.execute_interactive(code, timeout=60)
        assert reply["content"]["status"] == "ok", reply
    finally:
        client.stop_channels()


@pytest.mark.fault("the server stopped with chats open (a question pending)")
async def test_server_stopped_with_chats_open(tmp_path: Path) -> None:
    lab = await asyncio.to_thread(start_server, tmp_path / "lab")
    try:
        logs = [tmp_path / f"agent-{i}.jsonl" for i in range(2)]
        pending = 'chat.send_prompt("ask")\nwhile not chat.pending:\n    time.sleep(0.02)\n'
        for log in logs:
            await run_in_new_kernel(lab, tmp_path / "lab", kernel_chat_cell(log, pending))
        before = descendants(lab.proc.pid)
        commands = {p: Path(f"/proc/{p}/cmdline").read_text() for p in before}
        # Each agent runs under a reaper, whose command line names the agent's too.
        agents = [p for p, c in commands.items() if "fault_agent.py" in c and "reaper.py" not in c]
        assert len(agents) == 2, commands
    finally:
        await asyncio.to_thread(lab.stop)
    await all_gone(before)
    errors = [line for line in lab.log_text().splitlines() if line.startswith("[E ")]
    assert "Traceback" not in lab.log_text() and not errors, errors
    for pid in agents:
        assert process_group(pid) == []
    for log in logs:
        assert answers(log) == [{"action": "cancel"}]


@pytest.mark.fault(
    "kill -9 of a real Jupyter server; its agent ignores EOF and SIGTERM, has 3 children"
)
async def test_server_killed_takes_its_agents_along(tmp_path: Path) -> None:
    lab = await asyncio.to_thread(start_server, tmp_path / "lab")
    log = tmp_path / "agent.jsonl"
    ours: list[int] = []
    try:
        # The first turn's stream is where the fault agent leaves its children.
        turn = 'chat.send_prompt("go")\n'
        await run_in_new_kernel(lab, tmp_path / "lab", kernel_chat_cell(log, turn, fault="spawn"))
        deadline = time.monotonic() + 30
        while len(children := child_pids(log)) < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        ours = descendants(lab.proc.pid)
        commands = {p: Path(f"/proc/{p}/cmdline").read_text() for p in ours}
        agent = [p for p, c in commands.items() if "fault_agent.py" in c]  # with its reaper
        assert len(children) == 3 and agent, commands
        agent_side = agent + children
        assert all(map(alive, agent_side)), agent_side
        os.kill(lab.proc.pid, signal.SIGKILL)  # the server only: nobody closes anything
        await all_gone(agent_side, timeout=10)
    finally:
        # The kernel outlives a killed server: it is not what this test is about.
        for pid in ours:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        await asyncio.to_thread(lab.stop)


def child_pids(log: Path) -> list[int]:
    """The children the fault agent logged (complete lines only: it may be writing)."""
    text = log.read_text() if log.exists() else ""
    lines = text[: text.rfind("\n") + 1].splitlines()
    return [e["child"] for e in map(json.loads, lines) if "child" in e]


def _post(url: str, body: dict[str, Any]) -> str:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(response.read().decode())
