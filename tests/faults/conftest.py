"""Fault and abuse cases: a fault-injecting agent, the invariants, and the closing table.

Every case in this directory carries ``@pytest.mark.fault("what goes wrong")`` (with
``{param}`` placeholders for parametrized cases); at the end of the run one table
lists every case, its fault and its outcome, so ``.ci/run`` shows it.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.bridge.chat_session import SessionConfig
from acp_notebook.bridge.hub import Hub, HubConfig
from tests.support.fault_chats import (
    PERSON,
    FaultChat,
    OpenKernelChat,
    fault_argv,
    open_in_kernel,
    spy_writes,
)
from tests.support.hub_chats import Recorder

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


@pytest.fixture
def open_kernel_chat(start_kernel: Any, cells: Any, tmp_path: Path) -> OpenKernelChat:
    """Opens a chat with the fault agent from a new kernel, through the server extension
    (tests/server's fixtures); the cell runs ``then`` after it. Kernel id, chat id, log."""

    async def open_chat(then: str = "") -> tuple[str, str, Path]:
        log = tmp_path / "agent.jsonl"
        kernel_id = await start_kernel()
        return kernel_id, await open_in_kernel(await cells(kernel_id), log, then), log

    return open_chat
