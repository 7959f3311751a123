"""The one request schema: what it accepts, what it refuses, and that it never breaks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from acp_notebook.contracts import (
    MAX_FIELDS,
    MAX_VALUE_ITEMS,
    MAX_VALUE_TEXT,
    ElicitationRespondRequest,
    client_request,
)
from acp_notebook.hub import Hub

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


def test_the_typed_events_say_what_the_models_say() -> None:
    # The TypedDicts the session builds events with (event_types.py) hold, kind for
    # kind, the fields of the models the events are validated against.
    from typing import get_args, get_type_hints

    from acp_notebook import contracts, event_types

    models = {
        get_args(m.model_fields["kind"].annotation)[0]: m
        for m in get_args(get_args(contracts.StreamEvent)[0])
    }
    typed = {
        get_args(hints["kind"])[0]: hints
        for hints in map(get_type_hints, get_args(event_types.StreamEventDict))
    }
    assert typed.keys() == models.keys()
    for kind, model in models.items():
        assert set(typed[kind]) == set(model.model_fields), kind
