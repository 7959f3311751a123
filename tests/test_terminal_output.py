"""A command's output on its tool call (claude's ``_meta.terminal_*``): what Python's
``turn.tool_calls`` carries and what a saved notebook keeps of it."""

from __future__ import annotations

from typing import Any

from acp_notebook.kernel import transcript
from acp_notebook.wire import fold as folding


def folded(*outputs: str) -> folding.ChatState:
    state = folding.initial_state()
    events: list[dict[str, Any]] = [
        {"kind": "turn_started", "seq": 1, "turn": 1, "prompt": "run"},
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "b",
            "title": "count",
            "status": "in_progress",
            "_meta": {"terminal_info": {"terminal_id": "b"}},
        },
    ]
    for data in outputs:
        delta = {"terminal_id": "b", "data": data}
        events.append(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "b",
                "_meta": {"terminal_output_delta": delta},
            }
        )
    exit_ = {"terminal_id": "b", "exit_code": 3, "signal": None}
    events.append(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "b",
            "status": "failed",
            "_meta": {"terminal_exit": exit_},
        }
    )
    for seq, event in enumerate(events, 1):
        if "sessionUpdate" in event:
            event = {"kind": "update", "update": event}
        state = folding.fold(state, {**event, "seq": seq})
    return state


def test_the_turns_tool_calls_carry_the_output() -> None:
    state = folded("\x1b[31mred\x1b[0m\n", "two\n")
    (call,) = folding.last_tool_calls(state)
    assert call["terminal"] == {
        "terminalId": "b",
        "output": "\x1b[31mred\x1b[0m\ntwo\n",
        "cut": 0,
        "exited": True,
        "exitCode": 3,
        "signal": None,
    }


def test_a_saved_chat_keeps_the_outputs_end_and_plain_text_in_its_transcript() -> None:
    lines = [f"line {n}\n" for n in range(5000)]
    snap = folding.snapshot(folded("\x1b[1;32m<b>ok</b>\x1b[0m\n", *lines))
    kept = transcript.compact(snap)["toolCalls"]["b"]["terminal"]
    whole = "".join(lines)
    assert len(kept["output"]) == transcript.MAX_TERMINAL_TEXT
    assert whole.endswith(kept["output"])
    assert kept["cut"] == len(whole) + len("\x1b[1;32m<b>ok</b>\x1b[0m\n") - len(kept["output"])
    html = transcript.render_html(transcript.compact(snap))
    assert "line 4999" in html and "earlier characters not kept" in html
    assert "\x1b" not in html
    short = transcript.render_html(folding.snapshot(folded("\x1b[1;32m<b>ok</b>\x1b[0m\n")))
    assert "&lt;b&gt;ok&lt;/b&gt;" in short and "\x1b" not in short and "[1;32m" not in short
