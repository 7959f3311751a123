"""The request and event schemas: what they accept, what they refuse, and that they never break."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from acp_notebook.bridge.hub import Hub
from acp_notebook.wire.contracts import (
    MAX_AUTH_INPUT,
    MAX_FIELDS,
    MAX_MESSAGE,
    MAX_TITLE,
    MAX_VALUE_ITEMS,
    MAX_VALUE_TEXT,
    ElicitationRespondRequest,
    client_request,
    stream_event,
)

ACCEPTED: list[dict[str, Any]] = [
    {"type": "chat:prompt", "chatId": "c", "text": "hi", "id": 1},
    {"type": "chat:cancel", "chatId": "c"},
    {"type": "chat:resync", "chatId": "c", "since": 0},
    {"type": "chat:set_mode", "chatId": "c", "modeId": "plan"},
    {"type": "chat:set_config", "chatId": "c", "configId": "fast", "value": True},
    {"type": "chat:permission.respond", "chatId": "c", "requestId": "r", "optionId": "allow-once"},
    {"type": "chat:permission.respond", "chatId": "c", "requestId": "r", "cancel": True},
    {"type": "chat:elicitation.respond", "sessionId": "c", "requestId": "r", "action": "decline"},
    {
        "type": "chat:elicitation.respond",
        "chatId": "c",
        "requestId": "r",
        "action": "accept",
        "values": {"a": "x", "b": 3, "c": 2.5, "d": True, "e": ["p", "q"]},
    },
    {"type": "chat:auth", "chatId": "c", "op": "start", "methodId": "login"},
    {"type": "chat:auth", "chatId": "c", "op": "input", "text": "p@ss word"},
    {"type": "chat:auth", "chatId": "c", "op": "logout"},
]

REFUSED: list[dict[str, Any]] = [
    {"type": "chat:prompt", "chatId": "c", "text": ""},
    {"type": "chat:prompt", "chatId": "", "text": "hi"},
    {"type": "chat:prompt", "text": "hi"},
    {"type": "chat:nope", "chatId": "c"},
    {"type": "chat:cancel", "chatId": "c", "extra": 1},
    {"type": "chat:resync", "chatId": "c", "since": -1},
    {"type": "chat:permission.respond", "chatId": "c", "requestId": "r"},
    {
        "type": "chat:permission.respond",
        "chatId": "c",
        "requestId": "r",
        "optionId": "x",
        "cancel": True,
    },
    {"type": "chat:permission.respond", "chatId": "c", "requestId": "r", "cancel": "yes"},
    {"type": "chat:elicitation.respond", "chatId": "c", "requestId": "r", "action": "maybe"},
    {
        "type": "chat:elicitation.respond",
        "chatId": "c",
        "requestId": "r",
        "action": "accept",
        "values": {"a": {"nested": 1}},
    },
    {
        "type": "chat:elicitation.respond",
        "chatId": "c",
        "requestId": "r",
        "action": "accept",
        "values": {"a": "x" * (MAX_VALUE_TEXT + 1)},
    },
    {
        "type": "chat:elicitation.respond",
        "chatId": "c",
        "requestId": "r",
        "action": "accept",
        "values": {"a": ["x"] * (MAX_VALUE_ITEMS + 1)},
    },
    {
        "type": "chat:elicitation.respond",
        "chatId": "c",
        "requestId": "r",
        "action": "accept",
        "values": {f"f{i}": 1 for i in range(MAX_FIELDS + 1)},
    },
    {"type": "chat:set_config", "chatId": "c", "configId": "fast", "value": 1},
    {"type": "chat:auth", "chatId": "c", "op": "start"},
    {"type": "chat:auth", "chatId": "c", "op": "input"},
    # One line, as typed: no line break, no NUL, within the bound.
    {"type": "chat:auth", "chatId": "c", "op": "input", "text": "a\nrm -rf ~"},
    {"type": "chat:auth", "chatId": "c", "op": "input", "text": "a\x00"},
    {"type": "chat:auth", "chatId": "c", "op": "input", "text": "x" * (MAX_AUTH_INPUT + 1)},
]


@pytest.mark.parametrize("request_", ACCEPTED)
def test_accepts(request_: dict[str, Any]) -> None:
    parsed = client_request.validate_python(request_)
    assert parsed.type == request_["type"] and parsed.chatId == "c"


@pytest.mark.parametrize("request_", REFUSED)
def test_refuses(request_: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        client_request.validate_python(request_)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=30,
)
shaped = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "chat:prompt",
                "chat:elicitation.respond",
                "chat:permission.respond",
                "chat:resync",
                "x",
            ]
        ),
        "chatId": st.one_of(st.text(max_size=5), json_values),
    },
    optional={
        "values": json_values,
        "action": json_values,
        "requestId": json_values,
        "text": json_values,
        "optionId": json_values,
        "cancel": json_values,
        "id": json_values,
    },
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(json_values, shaped))
def test_schema_never_raises_anything_else_and_keeps_caps(value: Any) -> None:
    try:
        parsed = client_request.validate_python(value)
    except ValidationError:
        return
    if isinstance(parsed, ElicitationRespondRequest) and parsed.values:
        assert len(parsed.values) <= MAX_FIELDS
        for v in parsed.values.values():
            assert not isinstance(v, str) or len(v) <= MAX_VALUE_TEXT
            assert not isinstance(v, list) or len(v) <= MAX_VALUE_ITEMS


@settings(max_examples=150, deadline=None)
@given(st.one_of(json_values, shaped, st.binary(max_size=50)))
async def test_hub_answers_any_input_with_an_ack(value: Any) -> None:
    hub = Hub()
    ack = await hub.handle(value, user="u")
    assert ack.get("error") in ("INVALID", "CHAT_NOT_FOUND")
    assert set(ack) <= {"ack", "error", "detail"}


EVENTS_ACCEPTED: list[dict[str, Any]] = [
    {"seq": 1, "kind": "update", "update": {}},
    {"seq": 2, "ts": 1.5, "kind": "turn_ended", "turn": 1, "error": None},
    {"seq": 3, "kind": "permission_request", "requestId": "r", "toolCall": {}, "options": []},
    {"seq": 4, "kind": "elicitation_request", "requestId": "r", "message": "m", "fields": []},
]
EVENTS_REFUSED: list[dict[str, Any]] = [
    # ``seq`` and a card's ``requestId`` may be missing to mypy (before they are
    # stamped), never on the wire.
    {"kind": "update", "update": {}},
    {"seq": 3, "kind": "permission_request", "toolCall": {}, "options": []},
    # Every event kind inherits extra="forbid".
    {"seq": 1, "kind": "agent_error", "message": "m", "extra": 1},
    {"seq": 1, "kind": "update", "update": {}, "extra": 1},
    {"seq": 1, "kind": "nope"},
    # The bounds inside the TypedDicts' annotations hold, nested ones too.
    {**EVENTS_ACCEPTED[3], "message": "m" * (MAX_MESSAGE + 1)},
    {
        **EVENTS_ACCEPTED[3],
        "fields": [{"name": "a", "type": "text", "title": "t" * (MAX_TITLE + 1)}],
    },
    {**EVENTS_ACCEPTED[3], "fields": [{"name": "a", "type": "text", "x": 1}]},
    {**EVENTS_ACCEPTED[3], "fields": [{"name": "a", "type": "text"}] * (MAX_FIELDS + 1)},
]


@pytest.mark.parametrize("event", EVENTS_ACCEPTED)
def test_accepts_events(event: dict[str, Any]) -> None:
    assert stream_event.validate_python(event)["kind"] == event["kind"]


@pytest.mark.parametrize("event", EVENTS_REFUSED)
def test_refuses_events(event: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        stream_event.validate_python(event)
