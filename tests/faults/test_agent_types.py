"""Wrong JSON types where the agent's requests and answers have structure (issue 12:
one line must not end a chat).

A permission request whose ``options`` is not a list killed the agent's reader (and
so the agent: "exited with code -15"); a session/new result whose ``availableModes``
is not a list, or names a mode by an object, left the chat "starting" for good. Both
are read as "none given" now: the card comes with no options (the person can still
cancel it), the mode is asked for.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.support.agents.fault_agent import SESSION_ID, chunk_line, permission
from tests.support.fault_chats import FaultChat

OpenChat = Callable[..., Awaitable[FaultChat]]


@pytest.mark.fault("the agent asks a permission whose options are {options}")
@pytest.mark.parametrize("options", ["true", "5", "1e308"])
async def test_permission_options_of_a_wrong_type(fault_chat: OpenChat, options: str) -> None:
    fc = await fault_chat()
    request = {
        "jsonrpc": "2.0",
        "id": "odd",
        "method": "session/request_permission",
        "params": {**permission("t1"), "options": json.loads(options)},
    }
    await fc.prompt(f"raw {json.dumps(request)}")
    card = (await fc.everyone("permission_request"))[0]
    assert card["options"] == []
    assert (await fc.answer(card, cancel=True))["accepted"]
    (answer,) = [m for m in fc.writes if m.get("id") == "odd"]
    assert answer["result"] == {"outcome": {"outcome": "cancelled"}}
    await fc.everyone("turn_ended", turn=1)
    assert (await fc.prompt("still there?"))["turn"] == 2, fc.rec.events
    assert (await fc.everyone("turn_ended", turn=2))[0]["stopReason"] == "end_turn"


@pytest.mark.fault("session/new lists its modes as {modes}")
@pytest.mark.parametrize("modes", ["true", "5", '[{"id": ["x"]}, {"id": {}}, {"id": "plan"}]'])
async def test_modes_of_a_wrong_type(fault_chat: OpenChat, modes: str) -> None:
    new = {"modes": {"currentModeId": "default", "availableModes": json.loads(modes)}}
    fc = await fault_chat(env={"FAULT_NEW": json.dumps(new)}, mode="plan")
    assert fc.session.status == "ready"
    assert {"sessionId": SESSION_ID, "modeId": "plan"} in [
        m["params"] for m in fc.received() if m.get("method") == "session/set_mode"
    ]


@pytest.mark.fault("the agent withdraws a request by a requestId of {rid}")
@pytest.mark.parametrize("rid", ["[1]", '{"id": 1}', "true"])
async def test_cancel_request_of_a_wrong_type(fault_chat: OpenChat, rid: str) -> None:
    # A list or an object as the key of a lookup raised TypeError: the reader died and
    # took the agent with it ("exited with code -15").
    fc = await fault_chat()
    params = {"requestId": json.loads(rid)}
    lines = [
        json.dumps({"jsonrpc": "2.0", "method": "$/cancel_request", "params": params}),
        chunk_line("after it"),
        '{"jsonrpc": "2.0", "id": PROMPT_ID, "result": {"stopReason": "end_turn"}}',
    ]
    await fc.prompt("raw " + "\n".join(lines))
    ended = (await fc.everyone("turn_ended", turn=1))[0]
    assert ended["stopReason"] == "end_turn" and fc.session.status == "ready", ended
    assert "after it" in fc.recs[0].text()
    assert (await fc.prompt("still there?"))["turn"] == 2
    assert (await fc.everyone("turn_ended", turn=2))[0]["stopReason"] == "end_turn"


@pytest.mark.fault("a handler fails on one agent line (a bug of ours)")
async def test_a_handler_failing_costs_the_line(
    fault_chat: OpenChat, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Whatever the next such bug is, one odd line must not end the chat.
    fc = await fault_chat()
    session = fc.session
    real = session._track_tool

    def failing(update: Any) -> None:
        if update.get("toolCallId") == "boom":
            raise RuntimeError("a bug")
        real(update)

    monkeypatch.setattr(session, "_track_tool", failing)
    update = {"sessionUpdate": "tool_call", "toolCallId": "boom", "title": "x"}
    boom = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"update": update}})
    await fc.prompt("raw " + "\n".join([boom, boom]))
    await fc.everyone("turn_ended", turn=1)
    assert session.status == "ready"
    told = [e["message"] for e in fc.recs[0].events if e["kind"] == "agent_error"]
    assert told == ["the agent sent a line that could not be handled; it is skipped"]
    # Our bug is logged, with its traceback, once; the invariant is about the others.
    failed = [r for r in caplog.records if "failed in its handler" in r.getMessage()]
    assert len(failed) == 1 and failed[0].exc_info
    caplog.clear()
    assert (await fc.prompt("still there?"))["turn"] == 2
    assert (await fc.everyone("turn_ended", turn=2))[0]["stopReason"] == "end_turn"
