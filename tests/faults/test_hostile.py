"""Hostile content from the agent at the bridge: sizes bounded, views capped, text stays text.

The agent sends markup (script, event handlers, ``javascript:`` links), an unterminated
right-to-left override and 10 MB titles in messages, thoughts, tool titles, diffs, the
plan, the session title, permission options and question labels.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from html.parser import HTMLParser
from typing import Any

import pytest

from acp_notebook.kernel import transcript
from acp_notebook.wire import contracts
from acp_notebook.wire import fold as folding
from acp_notebook.wire.bounded_json import BOUND_STRING
from tests.support.agents.fault_agent import HOSTILE, HUGE_TITLE
from tests.support.fault_chats import Event, FaultChat

OpenChat = Callable[..., Awaitable[FaultChat]]


async def hostile_turn(fc: FaultChat) -> list[Event]:
    """The hostile turn, its permission rejected and its question declined by the person."""
    assert (await fc.prompt("hostile"))["accepted"]
    permission = (await fc.everyone("permission_request"))[0]
    assert (await fc.answer(permission, optionId="reject"))["accepted"]
    question = (await fc.everyone("elicitation_request"))[0]
    assert (await fc.answer(question, action="decline"))["accepted"]
    assert (await fc.everyone("turn_ended"))[0]["stopReason"] == "end_turn"
    return fc.rec.events


def update(events: list[Event], kind: str) -> dict[str, Any]:
    return next(
        e["update"]
        for e in events
        if e["kind"] == "update" and e["update"]["sessionUpdate"] == kind
    )


@pytest.mark.fault("hostile content at the bridge: sizes bounded, caps hold")
async def test_hostile_content_is_bounded(fault_chat: OpenChat) -> None:
    fc = await fault_chat()
    events = await hostile_turn(fc)
    for event in events:
        contracts.stream_event.validate_python(event)  # every event fits its contract
        assert len(json.dumps(event)) < 2 * BOUND_STRING, event["kind"]

    tool = update(events, "tool_call")
    assert len(tool["title"]) == BOUND_STRING + 1 < HUGE_TITLE  # the 10 MB title is cut
    assert tool["title"].startswith(HOSTILE) and tool["title"].endswith("…")
    assert tool["content"][0]["newText"] == HOSTILE  # text is carried as text, unchanged
    assert len(update(events, "session_info_update")["title"]) == BOUND_STRING + 1

    permission = next(e for e in events if e["kind"] == "permission_request")
    assert len(permission["options"]) == 16
    assert all(len(o["name"]) <= 256 for o in permission["options"])

    question = next(e for e in events if e["kind"] == "elicitation_request")
    assert len(question["message"]) == contracts.MAX_MESSAGE
    assert len(question["title"]) == contracts.MAX_TITLE
    assert len(question["fields"]) == contracts.MAX_FIELDS
    for field in question["fields"]:
        assert len(field["title"]) == contracts.MAX_TITLE
        assert len(field["description"]) == contracts.MAX_DESCRIPTION
        assert len(field["options"]) == contracts.MAX_OPTIONS
        assert all(o["label"] == HOSTILE for o in field["options"])

    # The person's answers, exactly as given: nothing approved on their behalf.
    assert [a["result"] for a in fc.answers_received()] == [
        {"outcome": {"outcome": "selected", "optionId": "reject"}},
        {"action": "decline"},
    ]
    history = fc.session.history
    assert history.size <= fc.session.config.history_bytes


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.isolated = 0  # text inside <bdi>: a direction override cannot leak out
        self.leaks: list[str] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self._depth += tag == "bdi"

    def handle_endtag(self, tag: str) -> None:
        self._depth -= tag == "bdi"

    def handle_data(self, data: str) -> None:
        if "\u202e" in data:
            if self._depth:
                self.isolated += 1
            else:
                self.leaks.append(data)


@pytest.mark.fault("hostile content in the static HTML transcript")
async def test_static_transcript_is_inert(fault_chat: OpenChat) -> None:
    fc = await fault_chat()
    events = await hostile_turn(fc)
    state = folding.initial_state()
    for event in events:
        state = folding.fold(state, event)
    snap = folding.snapshot(state)
    for shown in (snap, transcript.compact(snap)):
        parser = _Tags()
        parser.feed(transcript.render_html(shown))
        names = {tag for tag, _ in parser.tags}
        assert names <= {"div", "b", "i", "details", "summary", "pre", "bdi"}, names
        attrs = {name for _, pairs in parser.tags for name, _ in pairs}
        assert attrs <= {"class", "style"}, attrs  # no on*, href or src
        assert parser.isolated and not parser.leaks, parser.leaks
