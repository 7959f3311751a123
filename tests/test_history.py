"""The history ring: what a resync of a chat longer than the ring replays."""

from __future__ import annotations

from typing import Any

from acp_notebook.bridge.history import History
from acp_notebook.wire import fold as folding


def _tool(seq: int, n: int) -> dict[str, Any]:
    update = {"sessionUpdate": "tool_call", "toolCallId": f"t{n}", "title": f"Step {n}"}
    return {"kind": "update", "seq": seq, "update": update}


def test_state_set_by_events_gone_from_the_ring_is_replayed_first() -> None:
    history = History(max_events=5)
    status = {"kind": "agent_status", "agent": "demo"}
    mode = {"sessionUpdate": "current_mode_update", "currentModeId": "plan"}
    early: list[dict[str, Any]] = [
        {**status, "seq": 1, "status": "starting"},
        {**status, "seq": 2, "status": "ready", "sessionId": "s1", "agentCapabilities": {"a": 1}},
        {"kind": "update", "seq": 3, "update": mode},
        {"kind": "update", "seq": 4, "update": {**mode, "currentModeId": "code"}},
    ]
    for event in early:
        history.append(event)
    for n in range(20):
        history.append(_tool(5 + n, n))

    events = history.events()
    # The ring's five, after the latest of each state the trimmed events set, in seq order.
    assert [e["seq"] for e in events] == [1, 2, 4, 20, 21, 22, 23, 24]
    assert len(history) == 5
    state = folding.initial_state()
    for event in events:
        state = folding.fold(state, event)
    snap = folding.snapshot(state)
    assert snap["agent"]["status"] == "ready"
    assert snap["agent"]["sessionId"] == "s1"
    assert snap["agent"]["name"] == "demo"
    assert snap["modes"]["currentModeId"] == "code"
    assert [i["toolCallId"] for i in snap["items"]] == ["t15", "t16", "t17", "t18", "t19"]
