"""Fault and abuse cases: a fault-injecting agent, the invariants, and the closing table.

Every case in this directory carries ``@pytest.mark.fault("what goes wrong")`` (with
``{param}`` placeholders for parametrized cases); at the end of the run one table
lists every case, its fault and its outcome, so ``.ci/run`` shows it.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.bridge.chat_session import ChatSession, SessionConfig
from acp_notebook.bridge.hub import Hub, HubConfig

from ..conftest import Recorder

Event = dict[str, Any]
FAULT_AGENT = Path(__file__).with_name("fault_agent.py")
PERSON = "alice"

# ---------------------------------------------------------------- the closing table


@dataclass
class Row:
    name: str
    fault: str
    outcome: str = "passed"


_rows: dict[str, Row] = {}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fault(text): the fault a case injects, for the table")
    # tests/server's, whose fixtures some cases here use.
    config.addinivalue_line("markers", "acp_config(**traits): AcpNotebookApp/ServerApp config")


def _fault_text(item: pytest.Item) -> str:
    marker = item.get_closest_marker("fault")
    text = str(marker.args[0]) if marker else item.name
    params = getattr(getattr(item, "callspec", None), "params", {})
    return text.format(**params)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if Path(str(item.fspath)).parent != Path(__file__).parent:
        return
    row = _rows.setdefault(item.nodeid, Row(item.name, _fault_text(item)))
    if report.failed:
        row.outcome = "failed" if report.when == "call" else f"error ({report.when})"
    elif report.skipped and row.outcome == "passed":
        row.outcome = "skipped"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _rows:
        return
    rows = list(_rows.values())
    name_w = max(len("case"), *(len(r.name) for r in rows))
    fault_w = max(len("fault"), *(len(r.fault) for r in rows))
    write = terminalreporter.write_line
    terminalreporter.section("fault and abuse cases")
    write(f"{'case':<{name_w}}  {'fault':<{fault_w}}  outcome")
    write(f"{'-' * name_w}  {'-' * fault_w}  -------")
    for r in rows:
        write(f"{r.name:<{name_w}}  {r.fault:<{fault_w}}  {r.outcome}")
    passed = sum(r.outcome == "passed" for r in rows)
    write(f"{len(rows)} cases, {passed} passed, {len(rows) - passed} not passed")


# ---------------------------------------------------------------- processes


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


# ---------------------------------------------------------------- logs


@pytest.fixture(autouse=True)
def clean_logs(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """No unhandled exception: no ERROR record and no exc_info in any log.

    asyncio reports an exception nobody handled (a callback's, a task's) as an ERROR
    record of its own logger; ``fault_chat`` also watches its loop's handler directly.
    """
    caplog.set_level(logging.WARNING)
    yield
    gc.collect()  # "Task exception was never retrieved" is reported when a task is freed
    bad = [
        f"{r.levelname} {r.name}: {r.getMessage()}"
        for r in caplog.get_records("call") + caplog.get_records("teardown")
        if r.levelno >= logging.ERROR or r.exc_info
    ]
    assert not bad, bad


# ---------------------------------------------------------------- a chat with the fault agent


def _is_answer(message: dict[str, Any]) -> bool:
    # The fault agent numbers its own requests; its garbage request has a string id.
    return "method" not in message and isinstance(message.get("id"), int)


def drain(rec: Recorder) -> None:
    """Take what is still queued, even on a closed subscription (as the server does)."""
    while (frame := rec.sub.pending_frame()) is not None:
        if frame.get("reset"):
            rec.events = []
        rec.events.extend(frame["events"])


@dataclass
class FaultChat:
    """A chat with the fault agent through a real Hub, watched by two subscribers."""

    hub: Hub
    chat_id: str
    session: ChatSession
    log: Path
    recs: list[Recorder]
    writes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rec(self) -> Recorder:
        return self.recs[0]

    def agent_log(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def received(self) -> list[dict[str, Any]]:
        """Every JSON-RPC message that reached the agent, in order."""
        return [e["recv"] for e in self.agent_log() if "recv" in e]

    def answers_received(self) -> list[dict[str, Any]]:
        """Answers that reached the agent (to its permission / question requests)."""
        return [m for m in self.received() if _is_answer(m)]

    def answers_written(self) -> list[dict[str, Any]]:
        """Answers our side wrote to the agent's stdin (a spy on the connection)."""
        return [m for m in self.writes if _is_answer(m)]

    def child_pids(self) -> list[int]:
        return [e["child"] for e in self.agent_log() if "child" in e]

    async def request(self, message: dict[str, Any], user: str | None = PERSON) -> Event:
        return await self.hub.handle({"chatId": self.chat_id, "id": 1, **message}, user=user)

    async def prompt(self, text: str) -> Event:
        return await self.request({"type": "chat:prompt", "text": text})

    async def cancel(self) -> Event:
        return await self.request({"type": "chat:cancel"})

    async def answer(self, req: Event, user: str | None = PERSON, **answer: Any) -> Event:
        kind = "permission" if req["kind"] == "permission_request" else "elicitation"
        return await self.request(
            {"type": f"chat:{kind}.respond", "requestId": req["requestId"], **answer}, user=user
        )

    async def everyone(self, kind: str, timeout: float = 20, **match: Any) -> list[Event]:
        """The event as every subscriber saw it."""
        return [await r.kind(kind, timeout, **match) for r in self.recs]


def spy_writes(fc: FaultChat) -> None:
    """Record every message our side writes to the agent (as tests/test_bridge.py does)."""
    conn = fc.session.conn
    write = conn._write

    def recording(data: bytes) -> None:
        fc.writes.append(json.loads(data))
        write(data)

    conn._write = recording


def fault_argv(fault: str, point: str, log: Path) -> list[str]:
    return [sys.executable, str(FAULT_AGENT), fault, point, str(log)]


@pytest.fixture
async def fault_chat(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[FaultChat]]]:
    """Opens chats with the fault agent (each on a hub of its own unless given one)."""
    hubs: list[Hub] = []
    counter = itertools.count()
    loop_errors: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: loop_errors.append(context))

    async def open_chat(
        fault: str = "none",
        point: str = "stream",
        *,
        env: dict[str, str] | None = None,
        hub: Hub | None = None,
        mode: str | None = None,
        **session: Any,
    ) -> FaultChat:
        if hub is None:
            settings = {"answer_timeout": 30.0, "start_timeout": 30.0}
            hub = Hub(HubConfig(session=SessionConfig(**{**settings, **session})))
            hubs.append(hub)
        log = tmp_path / f"agent-{next(counter)}.jsonl"
        chat_id = await hub.open_chat(
            command=fault_argv(fault, point, log), env=env or {}, owner=PERSON, mode=mode
        )
        recs = [Recorder(hub.subscribe(chat_id)) for _ in range(2)]
        fc = FaultChat(hub, chat_id, hub.chats[chat_id].session, log, recs)
        spy_writes(fc)
        await hub.chats[chat_id].start_task
        return fc

    yield open_chat
    for hub in hubs:
        await hub.close()
    loop.set_exception_handler(None)
    assert not loop_errors, loop_errors
