"""A saved chat keeps the code of the agent's run_code calls (widget snapshot and static
HTML), escaped and cut like every other tool text; other tools keep no raw input."""

from __future__ import annotations

from typing import Any

from acp_notebook.kernel import transcript
from acp_notebook.wire import fold as folding


def state_with(*calls: dict[str, Any]) -> dict[str, Any]:
    state = folding.initial_state()
    for seq, call in enumerate(calls, 1):
        update = {"sessionUpdate": "tool_call", "status": "completed", "kind": "other", **call}
        state = folding.fold(state, {"kind": "update", "seq": seq, "update": update})
    return folding.snapshot(state)


def test_run_code_keeps_its_code_and_nothing_else_does() -> None:
    snap = state_with(
        {
            "toolCallId": "a",
            "title": "mcp__notebook__run_code",
            "rawInput": {"code": "<b>x</b> = 1"},
        },
        {"toolCallId": "b", "title": "Edit notes.txt", "rawInput": {"file_path": "/secret"}},
        {"toolCallId": "c", "title": "run_code", "rawInput": {"code": "y" * 100_000}},
    )
    compact = transcript.compact(snap)
    assert compact["toolCalls"]["a"]["rawInput"] == {"code": "<b>x</b> = 1"}
    assert compact["toolCalls"]["b"]["rawInput"] is None
    assert len(compact["toolCalls"]["c"]["rawInput"]["code"]) < 100_000
    html = transcript.render_html(snap)
    assert "&lt;b&gt;x&lt;/b&gt; = 1" in html and "<b>x</b>" not in html
    assert "/secret" not in html and html.count("y") < 100_000
