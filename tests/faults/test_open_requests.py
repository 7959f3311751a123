"""An agent that asks thousands of permissions at once (issue 12: every hostile input
bounded). Each open request is a card with a countdown in every page showing the chat
and a timer on the server: 20,000 of them cost the server 54 MB and would hold the page.
The chat keeps ``MAX_OPEN_REQUESTS`` open, refuses the rest at once with an error the
agent can read, and tells the person once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from acp_notebook.bridge.chat_session import MAX_RUNNING_TOOLS
from acp_notebook.bridge.ledger import MAX_OPEN_REQUESTS
from tests.support.fault_chats import FaultChat

ASKED = 5000


@pytest.mark.fault("the agent sends 5,000 permission requests at once")
async def test_requests_over_the_cap_are_refused_at_once(
    fault_chat: Callable[..., Awaitable[FaultChat]],
) -> None:
    fc = await fault_chat()
    await fc.prompt(f"permissions {ASKED}")
    notice = (await fc.everyone("agent_error"))[0]
    assert notice["message"] == (
        f"the agent asked more than {MAX_OPEN_REQUESTS} questions and permissions at once;"
        " the ones beyond are refused"
    )
    refused: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30
    while len(refused) < ASKED - MAX_OPEN_REQUESTS and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        refused = fc.answers_received()
    assert len(refused) == ASKED - MAX_OPEN_REQUESTS
    assert {a["error"]["message"] for a in refused} == {
        f"too many open requests: {MAX_OPEN_REQUESTS} wait for an answer"
    }
    cards = [e for e in fc.rec.events if e["kind"] == "permission_request"]
    assert len(cards) == len(fc.session.pending) == MAX_OPEN_REQUESTS

    # The open ones are answered as usual, and the turn ends with the last of them.
    for card in cards:
        assert (await fc.answer(card, optionId="allow"))["accepted"]
    await fc.everyone("turn_ended", turn=1)
    assert len(fc.answers_received()) == ASKED
    assert [e for e in fc.rec.events if e["kind"] == "agent_error"] == [notice]
    # The chat goes on: a later turn asks again, and is not refused.
    last = fc.rec.events[-1]["seq"]
    await fc.prompt("permission")
    again = await fc.rec.until(lambda e: e["kind"] == "permission_request" and e["seq"] > last)
    assert (await fc.answer(again, optionId="allow"))["accepted"]
    await fc.everyone("turn_ended", turn=2)


@pytest.mark.fault("the agent starts 5,000 tool calls in one turn and never ends them")
async def test_running_tool_calls_are_bounded(
    fault_chat: Callable[..., Awaitable[FaultChat]],
) -> None:
    # Each was remembered until the turn ended (for the tool call a question belongs
    # to): calls started without end grew the server without end.
    fc = await fault_chat()
    await fc.prompt("tools 5000 running")
    card = (await fc.everyone("elicitation_request"))[0]
    async with asyncio.timeout(30):
        while fc.session.last_seq < 5000:  # every call read
            await asyncio.sleep(0.05)
    running = fc.session._running_tools
    assert len(running) == MAX_RUNNING_TOOLS and next(reversed(running)) == "tool-4999"
    assert (await fc.answer(card, action="decline"))["accepted"]
    await fc.everyone("turn_ended", turn=1)
    assert not fc.session._running_tools
