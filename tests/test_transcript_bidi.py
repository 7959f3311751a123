"""The static transcript isolates every string it did not write: a right-to-left override
(U+202E) in the agent's name, a message or a tool title cannot reorder the text after it."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from acp_notebook.kernel import transcript
from acp_notebook.wire import fold as folding

RLO = "\u202e"


def evil(what: str) -> str:
    return f"{what}{RLO}evil"


class Overrides(HTMLParser):
    """For each text holding an override: the elements it sits in, innermost last."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.found: list[tuple[list[str], str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        while self.open and self.open.pop() != tag:
            pass

    def handle_data(self, data: str) -> None:
        if RLO in data:
            self.found.append((list(self.open), data))


def test_every_agent_string_is_in_a_bdi_of_its_own() -> None:
    events: list[dict[str, Any]] = [
        {"kind": "agent_status", "status": evil("status"), "agent": evil("agent name")},
        {"kind": "turn_started", "turn": 1, "prompt": evil("prompt")},
        *(
            {"kind": "update", "update": update}
            for update in [
                {
                    "sessionUpdate": "agent_thought_chunk",
                    "content": {"type": "text", "text": evil("thought")},
                },
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": evil("message")},
                },
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "t",
                    "title": evil("tool title"),
                    "status": evil("tool status"),
                },
            ]
        ),
        {
            "kind": "permission_request",
            "requestId": "p",
            "toolCall": {"title": evil("permission title")},
            "options": [{"optionId": evil("option"), "name": "x", "kind": "allow_once"}],
        },
        {
            "kind": "permission_resolved",
            "requestId": "p",
            "outcome": "selected",
            "optionId": evil("option"),
        },
        {
            "kind": "elicitation_request",
            "requestId": "q",
            "message": evil("question"),
            "fields": [],
        },
        {"kind": "turn_ended", "turn": 1, "error": evil("error")},
        {"kind": "turn_started", "turn": 2, "prompt": "again"},
        {"kind": "turn_ended", "turn": 2, "stopReason": evil("stop reason")},
    ]
    state = folding.initial_state()
    for seq, event in enumerate(events, 1):
        state = folding.fold(state, {"seq": seq, **event})
    parser = Overrides()
    parser.feed(transcript.render_html(folding.snapshot(state)))
    shown = {data.split(RLO)[0] for _tags, data in parser.found}
    assert shown >= {
        "agent name",
        "status",
        "prompt",
        "thought",
        "message",
        "tool title",
        "tool status",
        "permission title",
        "option",
        "question",
        "error",
        "stop reason",
    }, shown
    for tags, data in parser.found:
        # The override ends its own string, and that string is all its <bdi> holds.
        assert tags[-1] == "bdi" and data.endswith(f"{RLO}evil"), (tags, data)
