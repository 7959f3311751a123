"""Big agent lines: memory bounded per line and per server, the person told at once.

Through the real Hub and a real fault agent subprocess. Memory is read from
``/proc/self/status`` (this process hosts the hub, as the server does), with the
peak reset first through ``/proc/self/clear_refs``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest

from acp_notebook.agent.connection import MAX_UNREAD
from acp_notebook.agent.jsonrpc import MAX_LINE, LineBudget
from acp_notebook.wire import fold as folding
from tests.support.fault_chats import Event, FaultChat, drain
from tests.support.memory import peak_rss, reset_peak_rss
from tests.support.processes import all_gone

OpenChat = Callable[..., Awaitable[FaultChat]]
MiB = 1024 * 1024


def told(events: list[Event]) -> list[str]:
    return [e["message"] for e in events if e["kind"] == "agent_error"]


async def prompted(
    fault_chat: OpenChat, count: int, fault: str, env: dict[str, str], budget: LineBudget
) -> tuple[list[FaultChat], int]:
    """``count`` chats of ``fault`` sharing one line budget, each prompted once, and the
    peak RSS from just before the prompts."""
    chats = [await fault_chat(fault, "stream", env=env, line_budget=budget) for _ in range(count)]
    before = reset_peak_rss()
    for fc in chats:
        assert (await fc.prompt("go"))["turn"] == 1
    return chats, before


async def written(fc: FaultChat, timeout: float = 30) -> None:
    """Wait until the endless fault has written its whole line."""
    deadline = time.monotonic() + timeout
    while not any("wrote" in e for e in fc.agent_log()):
        assert time.monotonic() < deadline, "the agent did not write its line"
        await asyncio.sleep(0.05)


@pytest.mark.fault("a {size} MB agent line of [{{}},{{}},...]: peak memory of the server")
@pytest.mark.parametrize("size", [15, 50])
async def test_structured_line_memory_is_bounded(fault_chat: OpenChat, size: int) -> None:
    # 15 MB is under the line cap (bounded_json refuses its 5 million objects before
    # building any: json.loads took some 400 MB); 50 MB is over it (json.loads took 1.2 GB).
    fc = await fault_chat("objects", "stream", env={"FAULT_OBJECTS_MB": str(size)})
    before = reset_peak_rss()
    assert (await fc.prompt("go"))["turn"] == 1
    await fc.everyone("turn_ended", turn=1)
    growth = peak_rss() - before
    assert growth < 120 * MiB, f"peak RSS grew {growth / MiB:.0f} MiB"
    assert (await fc.prompt("still there?"))["turn"] == 2
    await fc.everyone("turn_ended", turn=2)
    if size * MiB > MAX_LINE:
        # Said when the line crossed the cap, while the agent was still writing it.
        assert told(fc.rec.events) == [
            "the agent sent a line of 16 MiB and more; it is skipped (limit 16 MiB)"
        ]
    else:
        assert told(fc.rec.events) == [
            "the agent sent a line that could not be read (more than 200,000 arrays and"
            " objects); it is skipped"
        ]


@pytest.mark.fault("a 50 MB agent line that never ends, then silence; the person presses Stop")
async def test_unended_line_is_told_at_once_and_stop_says_what_the_agent_did(
    fault_chat: OpenChat,
) -> None:
    fc = await fault_chat("endless", "stream", env={"FAULT_HUGE_MB": "50"}, cancel_grace=1.0)
    pid = fc.session.conn.pid
    assert pid is not None
    assert (await fc.prompt("go"))["turn"] == 1
    start = time.monotonic()
    # Told while the agent still writes, not after a cancel: 16 MiB in, not 50.
    notice = (await fc.everyone("agent_error", timeout=10))[0]
    assert notice["message"].startswith("the agent sent a line of 16 MiB and more")
    assert "(limit 16 MiB)" in notice["message"]
    assert time.monotonic() - start < 5
    await written(fc)
    assert (await fc.cancel())["accepted"]
    ended = (await fc.everyone("turn_ended", turn=1))[0]
    assert ended["error"] == (
        "the agent did not end the turn within 1 s of the cancel; "
        "it is sending a 50 MiB line, which is skipped"
    )
    # The chat shows both, in chat.state's fold as in the widget's.
    state = folding.initial_state()
    for event in fc.rec.events:
        state = folding.fold(state, event)
    errors = [i["text"] for i in folding.snapshot(state)["items"] if i["type"] == "error"]
    assert errors == [notice["message"], ended["error"]]
    await fc.hub.close_chat(fc.chat_id)
    await all_gone([pid], pid)


@pytest.mark.fault("three agents each hold a 15 MB unfinished line; the server budget is 40 MiB")
async def test_unfinished_lines_of_all_chats_share_one_budget(fault_chat: OpenChat) -> None:
    budget = LineBudget(40 * MiB)
    chats, before = await prompted(fault_chat, 3, "endless", {"FAULT_HUGE_MB": "15"}, budget)
    for fc in chats:
        await written(fc)
    await asyncio.sleep(0.2)  # the reader takes in what is still in the pipe
    for fc in chats:
        drain(fc.rec)
    assert budget.used <= budget.total
    over = [fc for fc in chats if told(fc.rec.events)]
    assert len(over) == 1, [told(fc.rec.events) for fc in chats]
    (message,) = told(over[0].rec.events)
    assert "the agents on this server had only" in message and "it is skipped" in message
    assert budget.used == 30 * MiB  # what the other two hold
    assert peak_rss() - before < 80 * MiB
    for fc in chats:
        await fc.hub.close_chat(fc.chat_id)
    assert budget.used == 0  # given back by readers that never saw their lines end


@pytest.mark.fault("four agents send a 15 MB line of [{{}},{{}},...] at once")
async def test_big_lines_of_several_chats_at_once_stay_bounded(fault_chat: OpenChat) -> None:
    budget = LineBudget(64 * MiB)
    chats, before = await prompted(fault_chat, 4, "objects", {"FAULT_OBJECTS_MB": "15"}, budget)
    for fc in chats:
        await fc.everyone("turn_ended", turn=1)
    growth = peak_rss() - before
    # The lines' buffers (60 MiB, under the budget) and one parse at a time (json.loads
    # would take some 400 MiB per line).
    assert growth < 150 * MiB, f"peak RSS grew {growth / MiB:.0f} MiB"
    for fc in chats:
        assert len(told(fc.rec.events)) == 1  # over the object limit, and said so


@pytest.mark.fault("the agent sends 100 requests with 1 MiB ids and never reads its input")
async def test_an_agent_that_does_not_read_is_ended(fault_chat: OpenChat) -> None:
    # Each request is answered (method not found) with its id: 100 MiB waited in the
    # server's buffer to the agent's stdin, and more for every request more.
    fc = await fault_chat()
    pid = fc.session.conn.pid
    assert pid is not None
    del fc.session.conn._write  # no spy: it would keep every answer it saw
    before = reset_peak_rss()
    assert (await fc.prompt("deaf 100"))["turn"] == 1
    notice = (await fc.everyone("agent_error"))[0]
    assert notice["message"] == (
        f"the agent left {MAX_UNREAD // MiB} MiB of what it was sent unread; it is ended"
    )
    await fc.everyone("agent_status", status="exited")
    assert (await fc.everyone("turn_ended", turn=1))[0]["error"]
    growth = peak_rss() - before
    assert growth < MAX_UNREAD + 40 * MiB, f"peak RSS grew {growth / MiB:.0f} MiB"
    await all_gone([pid], pid)
