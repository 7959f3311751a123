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

import pytest

from .conftest import FaultChat
from .fault_agent import SESSION_ID, permission

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
