"""The elicitation reducer and the answer check: real wrapper shapes, caps, junk."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from acp_notebook.bridge.elicitation import (
    AnswerError,
    ElicitationView,
    UrlRefused,
    take_elicitation_view,
    take_url_request,
    url_host,
    validate_answer,
)
from acp_notebook.wire import contracts as wire
from acp_notebook.wire.contracts import (
    ElicitationField,
    ElicitationRespondRequest,
    stream_event,
)


def form(properties: Any, required: Any = None, **params: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = required
    return {"mode": "form", "sessionId": "s1", "message": "Q?", "requestedSchema": schema, **params}


def fields_of(properties: Any, required: Any = None) -> list[dict[str, Any]]:
    return take_elicitation_view(form(properties, required)).fields


def one(spec: Any) -> dict[str, Any] | None:
    """The field a single property reduces to, or None when it is dropped."""
    fields = fields_of({"p": spec})
    return fields[0] if fields else None


# ---------------------------------------------------------------- real wrapper shapes


def test_claude_single_question_reference_6_shape() -> None:
    # reference §6 verbatim: question_0 (oneOf) + question_0_custom ("Other").
    params = {
        "sessionId": "s1",
        "toolCallId": "toolu_1",
        "mode": "form",
        "message": "Which DB?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "question_0": {
                    "type": "string",
                    "title": "DB",
                    "oneOf": [{"const": "Postgres", "title": "Postgres", "description": "..."}],
                },
                "question_0_custom": {"type": "string", "title": "Other", "description": "..."},
            },
        },
    }
    assert take_elicitation_view(params) == ElicitationView(
        message="Which DB?",
        fields=[
            {
                "name": "question_0",
                "type": "enum",
                "title": "DB",
                "options": [{"value": "Postgres", "label": "Postgres", "description": "..."}],
                "custom": "question_0_custom",
            },
            {
                "name": "question_0_custom",
                "type": "text",
                "title": "Other",
                "description": "...",
                "customOf": "question_0",
            },
        ],
        tool_call_id="toolu_1",
        title=None,
    )


def test_claude_captured_color_question_no_required_list() -> None:
    # The seed's rig run / reference §11: Red/Blue with descriptions, an Other box, no `required`.
    view = take_elicitation_view(
        {
            "mode": "form",
            "sessionId": "s1",
            "toolCallId": "toolu_01",
            "message": "Which color do you prefer?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "question_0": {
                        "type": "string",
                        "title": "Color",
                        "oneOf": [
                            {"const": "Red", "title": "Red", "description": "A warm color"},
                            {"const": "Blue", "title": "Blue", "description": "A cool color"},
                        ],
                    },
                    "question_0_custom": {
                        "type": "string",
                        "title": "Other",
                        "description": "Type your own answer, or add a note to the option you chose above (optional).",
                    },
                },
            },
        }
    )
    assert view.message == "Which color do you prefer?"
    assert view.tool_call_id == "toolu_01"
    question, other = view.fields
    assert [o["value"] for o in question["options"]] == ["Red", "Blue"]
    assert question["options"][0]["description"] == "A warm color"
    assert "required" not in question and "required" not in other
    assert (question["custom"], other["customOf"]) == ("question_0_custom", "question_0")
    assert validate_answer(view.fields, "accept", {"question_0": "Red"}) == {
        "action": "accept",
        "content": {"question_0": "Red"},
    }


def test_claude_multi_question_reference_7_shape() -> None:
    # Several questions: a generic message, the question text in each description,
    # multi-select as `items.anyOf` with no `items.type`, an option preview in `_meta`.
    params = form(
        {
            "question_0": {
                "type": "string",
                "title": "Auth",
                "description": "Which auth scheme?",
                "oneOf": [
                    {"const": "JWT", "title": "JWT", "description": "stateless"},
                    {
                        "const": "Cookies",
                        "title": "Cookies",
                        "_meta": {"_claude/askUserQuestionOption": {"preview": "GET /login"}},
                    },
                ],
            },
            "question_0_custom": {"type": "string", "title": "Other", "description": "note"},
            "question_1": {
                "type": "array",
                "title": "Langs",
                "description": "Which languages?",
                "items": {
                    "anyOf": [{"const": "py", "title": "Python"}, {"const": "ts", "title": "TS"}]
                },
            },
            "question_1_custom": {"type": "string", "title": "Other", "description": "add"},
        },
        toolCallId="toolu_2",
    )
    params["message"] = "Please answer the following questions."
    view = take_elicitation_view(params)
    assert [(f["name"], f["type"]) for f in view.fields] == [
        ("question_0", "enum"),
        ("question_0_custom", "text"),
        ("question_1", "multi"),
        ("question_1_custom", "text"),
    ]
    q0, c0, q1, c1 = view.fields
    assert q0["description"] == "Which auth scheme?"
    assert q0["options"][1] == {"value": "Cookies", "label": "Cookies"}
    assert q1["options"] == [{"value": "py", "label": "Python"}, {"value": "ts", "label": "TS"}]
    assert (q0["custom"], c0["customOf"], q1["custom"], c1["customOf"]) == (
        "question_0_custom",
        "question_0",
        "question_1_custom",
        "question_1",
    )
    answer = {"question_1": ["ts", "py"], "question_1_custom": "Go", "question_0": None}
    assert validate_answer(view.fields, "accept", answer) == {
        "action": "accept",
        "content": {"question_1": ["ts", "py"], "question_1_custom": "Go"},
    }


def test_custom_answer_meta_marker_pairs_any_name() -> None:
    # The `_meta` spelling claude-agent-acp sends to JetBrains AIR names the question itself.
    marker = {"_askUserQuestionCustomAnswer": {"questionId": "direction", "isCustomAnswer": True}}
    fields = fields_of(
        {
            "direction": {"type": "string", "enum": ["up", "down"]},
            "bespoke": {"type": "string", "title": "Other", "_meta": marker},
        }
    )
    assert fields[0]["custom"] == "bespoke"
    assert fields[1]["customOf"] == "direction"


@pytest.mark.parametrize(
    "properties",
    [
        # The base of `_custom` is not a field.
        {"x_custom": {"type": "string"}},
        # The base is plain text, not a question.
        {"x": {"type": "string"}, "x_custom": {"type": "string"}},
        # The would-be Other box is not text.
        {"x": {"enum": ["a"]}, "x_custom": {"type": "boolean"}},
        # The marker names a missing field (no fallback to the suffix).
        {
            "x": {"enum": ["a"]},
            "x_custom": {
                "type": "string",
                "_meta": {"_askUserQuestionCustomAnswer": {"questionId": "y"}},
            },
        },
    ],
)
def test_custom_pairing_needs_a_text_field_and_a_question(properties: dict[str, Any]) -> None:
    for field in fields_of(properties):
        assert "custom" not in field and "customOf" not in field


def test_one_other_box_per_question() -> None:
    marker = {"_askUserQuestionCustomAnswer": {"questionId": "q"}}
    fields = fields_of(
        {
            "q": {"enum": ["a"]},
            "first": {"type": "string", "_meta": marker},
            "q_custom": {"type": "string"},
        }
    )
    assert fields[0]["custom"] == "first"
    assert fields[1]["customOf"] == "q"
    assert "customOf" not in fields[2]


def test_mcp_elicitation_reference_12_shape() -> None:
    params = {
        "mode": "form",
        "sessionId": "s9",
        "message": "Pick a color for the picker tool.",
        "requestedSchema": {
            "type": "object",
            "title": "Picker",
            "properties": {
                "color": {
                    "type": "string",
                    "title": "Color",
                    "description": "Which color?",
                    "enum": ["Red", "Blue"],
                },
                "confirm": {
                    "type": "boolean",
                    "title": "Confirm",
                    "description": "Confirm the choice",
                },
            },
            "required": ["color", "confirm"],
        },
    }
    color = {
        "name": "color",
        "type": "enum",
        "title": "Color",
        "description": "Which color?",
        "required": True,
        "options": [{"value": "Red"}, {"value": "Blue"}],
    }
    confirm = {
        "name": "confirm",
        "type": "boolean",
        "title": "Confirm",
        "description": "Confirm the choice",
        "required": True,
    }
    assert take_elicitation_view(params) == ElicitationView(
        message="Pick a color for the picker tool.",
        fields=[color, confirm],
        tool_call_id=None,
        title="Picker",
    )
    with pytest.raises(AnswerError, match="'confirm' is required"):
        validate_answer(take_elicitation_view(params).fields, "accept", {"color": "Red"})


# ---------------------------------------------------------------- kinds and options


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"type": "string"}, {"type": "text"}),
        ({"type": "number"}, {"type": "number"}),
        ({"type": "integer"}, {"type": "integer"}),
        ({"type": "boolean"}, {"type": "boolean"}),
        # Options win over type for strings; an untyped property with options is an enum.
        (
            {"type": "string", "enum": ["a", "b"]},
            {"type": "enum", "options": [{"value": "a"}, {"value": "b"}]},
        ),
        ({"enum": ["a"]}, {"type": "enum", "options": [{"value": "a"}]}),
        (
            {"oneOf": ["a", {"const": "b"}]},
            {"type": "enum", "options": [{"value": "a"}, {"value": "b"}]},
        ),
        (
            {"anyOf": [{"const": "a", "title": "A"}]},
            {"type": "enum", "options": [{"value": "a", "label": "A"}]},
        ),
        # MCP's legacy enumNames become labels.
        (
            {"type": "string", "enum": ["a", "b"], "enumNames": ["Ay"]},
            {"type": "enum", "options": [{"value": "a", "label": "Ay"}, {"value": "b"}]},
        ),
        # Multi-select: items.enum, items.anyOf without items.type, items.oneOf.
        (
            {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
            {"type": "multi", "options": [{"value": "x"}, {"value": "y"}]},
        ),
        (
            {
                "type": "array",
                "items": {"anyOf": [{"const": "x", "title": "X", "description": "ex"}]},
            },
            {"type": "multi", "options": [{"value": "x", "label": "X", "description": "ex"}]},
        ),
        (
            {"type": "array", "items": {"oneOf": [{"const": "x"}]}},
            {"type": "multi", "options": [{"value": "x"}]},
        ),
        # Non-string consts are dropped (an option value round-trips as a string); so are
        # malformed entries and duplicates.
        (
            {
                "oneOf": [
                    {"const": 1},
                    {"const": True},
                    {"title": "no const"},
                    None,
                    [],
                    {"const": "ok"},
                    "ok",
                ]
            },
            {"type": "enum", "options": [{"value": "ok"}]},
        ),
        # enum on a number is ignored: the typed input renders.
        ({"type": "integer", "enum": [1, 2]}, {"type": "integer"}),
        (
            {"type": "string", "title": "T", "placeholder": "e.g. x"},
            {"type": "text", "title": "T", "placeholder": "e.g. x"},
        ),
        # Non-string display text is left out.
        ({"type": "string", "title": 5, "description": ["d"], "placeholder": {}}, {"type": "text"}),
    ],
)
def test_property_kinds(spec: dict[str, Any], expected: dict[str, Any]) -> None:
    assert one(spec) == {"name": "p", **expected}


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "object", "properties": {"a": {"type": "string"}}},
        {"title": "no type, no options"},
        {},
        {"type": "null"},
        {"type": "date"},
        {"type": ["string", "null"]},
        {"type": 7},
        {"type": "array"},
        {"type": "array", "items": "string"},
        {"type": "array", "items": {"type": "string"}},
        {"type": "array", "items": {"type": "number", "enum": [1, 2]}},
        {"type": "array", "items": {"anyOf": []}},
        {"type": "string", "enum": []},
        {"type": "string", "enum": [1, 2.5, None]},
        {"type": "object", "oneOf": ["a"]},
        {"oneOf": [{"const": "x" * (wire.MAX_OPTION_VALUE + 1)}]},
        "string",
        ["string"],
        None,
        3,
    ],
)
def test_unusable_properties_are_dropped(spec: Any) -> None:
    assert one(spec) is None


def test_a_declared_option_list_with_no_usable_option_is_not_text() -> None:
    assert one({"type": "string", "oneOf": "junk"}) == {"name": "p", "type": "text"}
    assert one({"type": "string", "oneOf": [{"const": 3}]}) is None


def test_property_order_is_kept_and_drops_do_not_shift_names() -> None:
    fields = fields_of(
        {
            "z": {"type": "string"},
            "nested": {"type": "object"},
            "a": {"type": "boolean"},
            "m": {"enum": ["1"]},
        }
    )
    assert [f["name"] for f in fields] == ["z", "a", "m"]


# ---------------------------------------------------------------- required


def test_required_list_membership() -> None:
    fields = fields_of(
        {"a": {"type": "string"}, "b": {"type": "string"}},
        required=["b", "missing", 3, None],
    )
    assert "required" not in fields[0]
    assert fields[1]["required"] is True


@pytest.mark.parametrize("required", [None, "a", {"a": True}, 1])
def test_no_required_list_means_nobody_is_required(required: Any) -> None:
    assert all("required" not in f for f in fields_of({"a": {"type": "string"}}, required))


# ---------------------------------------------------------------- caps


def test_message_title_and_tool_call_id_caps() -> None:
    view = take_elicitation_view(
        {
            "message": "m" * (wire.MAX_MESSAGE + 10),
            "toolCallId": "t" * (wire.MAX_TOOL_CALL_ID + 1),
            "requestedSchema": {"title": "T" * 5000, "properties": {}},
        }
    )
    assert len(view.message) == wire.MAX_MESSAGE and view.message.endswith("…")
    assert view.title is not None and len(view.title) == wire.MAX_TITLE and view.title.endswith("…")
    # An id is matched verbatim: too long means unusable, never cut.
    assert view.tool_call_id is None
    exact = take_elicitation_view(
        {"message": "m" * wire.MAX_MESSAGE, "toolCallId": "t" * wire.MAX_TOOL_CALL_ID}
    )
    assert exact.message == "m" * wire.MAX_MESSAGE
    assert exact.tool_call_id == "t" * wire.MAX_TOOL_CALL_ID


def test_field_text_caps() -> None:
    field = one(
        {
            "type": "string",
            "title": "t" * 1000,
            "description": "d" * 5000,
            "placeholder": "p" * 1000,
            "oneOf": [{"const": "v", "title": "l" * 1000, "description": "e" * 5000}],
        }
    )
    assert field is not None
    assert (len(field["title"]), len(field["description"]), len(field["placeholder"])) == (
        wire.MAX_TITLE,
        wire.MAX_DESCRIPTION,
        wire.MAX_PLACEHOLDER,
    )
    option = field["options"][0]
    assert (len(option["label"]), len(option["description"])) == (
        wire.MAX_TITLE,
        wire.MAX_DESCRIPTION,
    )


def test_names_longer_than_the_cap_drop_the_property() -> None:
    names = [
        f["name"]
        for f in fields_of(
            {"n" * (wire.MAX_NAME + 1): {"type": "string"}, "k" * wire.MAX_NAME: {"type": "string"}}
        )
    ]
    assert names == ["k" * wire.MAX_NAME]


def test_options_are_truncated_and_long_values_dropped() -> None:
    values = ["v" * (wire.MAX_OPTION_VALUE + 1)] + [f"o{i}" for i in range(wire.MAX_OPTIONS + 8)]
    field = one({"enum": values})
    assert field is not None
    assert [o["value"] for o in field["options"]] == [f"o{i}" for i in range(wire.MAX_OPTIONS)]
    assert one({"enum": ["v" * wire.MAX_OPTION_VALUE]}) is not None


def test_at_most_sixteen_usable_fields() -> None:
    properties: dict[str, Any] = {}
    for i in range(wire.MAX_FIELDS + 5):
        properties[f"f{i}"] = {"type": "string"}
        properties[f"junk{i}"] = {"type": "object"}
    names = [f["name"] for f in fields_of(properties)]
    assert names == [f"f{i}" for i in range(wire.MAX_FIELDS)]


def test_lone_surrogates() -> None:
    # json.loads turns "\ud800" escapes into lone surrogates, which pydantic refuses.
    view = take_elicitation_view(
        form(
            {
                "bad\ud800": {"type": "string"},
                "ok": {
                    "title": "t\udfff",
                    "oneOf": [{"const": "x\ud800"}, {"const": "y", "title": "\ud800"}],
                },
            }
        )
        | {"message": "m\ud800", "toolCallId": "id\ud800"}
    )
    assert view.message == "m\ufffd"
    assert view.tool_call_id is None
    assert view.fields == [
        {
            "name": "ok",
            "type": "enum",
            "title": "t\ufffd",
            "options": [{"value": "y", "label": "\ufffd"}],
        }
    ]


# ---------------------------------------------------------------- message-only and junk params


@pytest.mark.parametrize(
    "params",
    [
        form({}),
        form([{"type": "string"}]),
        form("properties"),
        form({"a": {"type": "object"}}),
        {"message": "Q?", "requestedSchema": None},
        {"message": "Q?"},
    ],
)
def test_message_only_card(params: dict[str, Any]) -> None:
    view = take_elicitation_view(params)
    assert view == ElicitationView(message="Q?", fields=[], tool_call_id=None, title=None)
    assert validate_answer(view.fields, "accept", None) == {"action": "accept", "content": {}}


@pytest.mark.parametrize(
    "params", [None, 1, "x", [], [{"message": "hi"}], {"message": 5, "toolCallId": 7}]
)
def test_junk_params_give_an_empty_view(params: Any) -> None:
    assert take_elicitation_view(params) == ElicitationView(message="", fields=[])


# ---------------------------------------------------------------- defaults


@pytest.mark.parametrize(
    ("spec", "default"),
    [
        ({"type": "string", "default": "hi"}, "hi"),
        ({"type": "number", "default": 1.5}, 1.5),
        ({"type": "number", "default": 2}, 2),
        ({"type": "integer", "default": 3}, 3),
        ({"type": "integer", "default": 3.0}, 3),
        ({"type": "boolean", "default": False}, False),
        ({"enum": ["a", "b"], "default": "b"}, "b"),
        ({"type": "array", "items": {"enum": ["a", "b"]}, "default": ["b", "a"]}, ["b", "a"]),
        ({"type": "array", "items": {"enum": ["a", "b"]}, "default": []}, []),
    ],
)
def test_type_correct_defaults_are_kept(spec: dict[str, Any], default: Any) -> None:
    field = one(spec)
    assert field is not None
    assert field["default"] == default
    assert type(field["default"]) is type(default)


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "string", "default": 5},
        {"type": "string", "default": "x" * (wire.MAX_VALUE_TEXT + 1)},
        {"type": "number", "default": "1"},
        {"type": "number", "default": True},
        {"type": "number", "default": math.nan},
        {"type": "number", "default": math.inf},
        {"type": "integer", "default": 3.5},
        {"type": "boolean", "default": "true"},
        {"type": "boolean", "default": 1},
        {"enum": ["a"], "default": "z"},
        {"enum": ["a"], "default": ["a"]},
        {"type": "array", "items": {"enum": ["a", "b"]}, "default": ["a", "z"]},
        {"type": "array", "items": {"enum": ["a", "b"]}, "default": ["a", "a"]},
        {"type": "array", "items": {"enum": ["a", "b"]}, "default": "a"},
        {"type": "string", "default": None},
    ],
)
def test_wrong_defaults_are_dropped(spec: dict[str, Any]) -> None:
    field = one(spec)
    assert field is not None
    assert "default" not in field


# ---------------------------------------------------------------- validate_answer

FORM = fields_of(
    {
        "text": {"type": "string"},
        "num": {"type": "number"},
        "int": {"type": "integer"},
        "flag": {"type": "boolean"},
        "pick": {"enum": ["a", "b"]},
        "many": {"type": "array", "items": {"anyOf": [{"const": "x"}, {"const": "y"}]}},
    },
    required=["pick"],
)


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_ignore_values(action: str) -> None:
    assert validate_answer(FORM, action, {"junk": object()}) == {"action": action}
    assert validate_answer([], action, "not even a dict") == {"action": action}


def test_accept_keeps_answered_fields_in_form_order() -> None:
    values = {
        "many": ["y"],
        "pick": "a",
        "int": 4.0,
        "num": -0.5,
        "flag": True,
        "text": "",
        "unset": None,
    }
    with pytest.raises(AnswerError, match="unknown field"):
        validate_answer(FORM, "accept", values)
    del values["unset"]
    result = validate_answer(FORM, "accept", values)
    assert result == {
        "action": "accept",
        "content": {"text": "", "num": -0.5, "int": 4, "flag": True, "pick": "a", "many": ["y"]},
    }
    assert list(result["content"]) == ["text", "num", "int", "flag", "pick", "many"]
    assert type(result["content"]["int"]) is int
    assert validate_answer(FORM, "accept", {"pick": "b", "text": None}) == {
        "action": "accept",
        "content": {"pick": "b"},
    }


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"pick": "a", "nope": 1}, "unknown field"),
        ({}, "'pick' is required"),
        ({"pick": None}, "'pick' is required"),
        ({"pick": "c"}, "'pick' must be one of the option values"),
        ({"pick": ["a"]}, "'pick' must be one of"),
        ({"pick": "a", "many": ["x", "z"]}, "'many' must be a list of distinct option values"),
        ({"pick": "a", "many": ["x", "x"]}, "'many' must be"),
        ({"pick": "a", "many": "x"}, "'many' must be"),
        ({"pick": "a", "num": "1"}, "'num' must be a finite number"),
        ({"pick": "a", "num": True}, "'num' must be"),
        ({"pick": "a", "num": math.nan}, "'num' must be"),
        ({"pick": "a", "int": 1.25}, "'int' must be an integer"),
        ({"pick": "a", "int": math.inf}, "'int' must be"),
        ({"pick": "a", "flag": 0}, "'flag' must be true or false"),
        ({"pick": "a", "text": 5}, "'text' must be a string"),
        (
            {"pick": "a", "text": "x" * (wire.MAX_VALUE_TEXT + 1)},
            "'text' must be a string of at most 65536",
        ),
    ],
)
def test_accept_rejects(values: dict[str, Any], message: str) -> None:
    with pytest.raises(AnswerError, match=message):
        validate_answer(FORM, "accept", values)


@pytest.mark.parametrize(
    ("action", "values"), [("accept", []), ("accept", "x"), ("ok", {}), (None, None)]
)
def test_bad_action_or_values_shape(action: Any, values: Any) -> None:
    with pytest.raises(AnswerError):
        validate_answer(FORM, action, values)


def test_answer_error_is_a_value_error_with_a_short_message() -> None:
    with pytest.raises(ValueError, match="unknown field") as caught:
        validate_answer(FORM, "accept", {"k" * 100_000: 1})
    assert len(str(caught.value)) < 200
    with pytest.raises(AnswerError, match="<int>"):
        validate_answer(FORM, 10**5000, {})


# ---------------------------------------------------------------- properties


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` about nine times in ten: junk everywhere, yet most forms still have fields.

    (sampled_from, unlike integers(), draws near-uniformly rather than favouring edges.)
    """
    return st.sampled_from([True] * 9 + [False]).flatmap(lambda ok: good if ok else bad)


json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=10,
)
# Strings that sit on or just past every cap, plus a lone surrogate.
edge_strings = st.sampled_from(
    [
        "",
        "a\ud800",
        "x" * wire.MAX_NAME,
        "x" * (wire.MAX_NAME + 1),
        "x" * (wire.MAX_TITLE + 1),
        "x" * wire.MAX_OPTION_VALUE,
        "x" * (wire.MAX_OPTION_VALUE + 1),
        "x" * (wire.MAX_DESCRIPTION + 1),
        "x" * (wire.MAX_MESSAGE + 1),
    ]
)
strings = st.text(max_size=12) | edge_strings
junk = json_values | edge_strings
texts = mostly(strings, junk)
names = mostly(
    st.sampled_from(["a", "b", "q", "q_custom", "question_0", "question_0_custom"]), strings
)
option_entry = mostly(
    st.fixed_dictionaries(
        {"const": mostly(strings, junk)},
        optional={"title": texts, "description": texts, "_meta": junk},
    ),
    strings | junk,
)
option_lists = mostly(
    st.lists(option_entry, max_size=4)
    | st.lists(
        st.text(max_size=3), min_size=wire.MAX_OPTIONS, max_size=wire.MAX_OPTIONS + 4, unique=True
    ),
    junk,
)
option_keys = {"enum": option_lists, "oneOf": option_lists, "anyOf": option_lists}
kinds = st.sampled_from([None, "string", "number", "integer", "boolean", "array", "object", "null"])
property_spec = mostly(
    st.fixed_dictionaries(
        {"type": mostly(kinds, junk)},
        optional={
            "title": texts,
            "description": texts,
            "placeholder": texts,
            "enumNames": mostly(st.lists(texts, max_size=4), junk),
            "items": mostly(
                st.fixed_dictionaries({"type": mostly(kinds, junk)}, optional=option_keys), junk
            ),
            "default": junk
            | st.lists(strings, max_size=3)
            | st.sampled_from([0, 1.0, 2.5, True, math.nan, "a", "b"]),
            "_meta": mostly(
                st.fixed_dictionaries(
                    {"_askUserQuestionCustomAnswer": st.fixed_dictionaries({"questionId": names})}
                ),
                junk,
            ),
            **option_keys,
        },
    ),
    junk,
)
schema_params = mostly(
    st.fixed_dictionaries(
        {
            "requestedSchema": mostly(
                st.fixed_dictionaries(
                    {
                        "properties": mostly(
                            st.dictionaries(names, property_spec, min_size=1, max_size=8), junk
                        )
                    },
                    optional={
                        "type": junk,
                        "title": texts,
                        "required": mostly(st.lists(names, max_size=6), junk),
                    },
                ),
                junk,
            )
        },
        optional={"message": texts, "toolCallId": texts, "mode": junk},
    ),
    junk,
)


@st.composite
def claude_params(draw: st.DrawFn) -> dict[str, Any]:
    """AskUserQuestion forms as claude-agent-acp builds them, with arbitrary text."""
    option = st.fixed_dictionaries(
        {"const": strings, "title": strings}, optional={"description": strings}
    )
    questions = draw(
        st.lists(
            st.tuples(st.booleans(), st.lists(option, min_size=1, max_size=3), strings),
            min_size=1,
            max_size=wire.MAX_FIELDS // 2 + 1,
        )
    )
    properties: dict[str, Any] = {}
    for i, (multi, options, header) in enumerate(questions):
        properties[f"question_{i}"] = (
            {"type": "array", "title": header, "items": {"anyOf": options}}
            if multi
            else {"type": "string", "title": header, "oneOf": options}
        )
        properties[f"question_{i}_custom"] = {"type": "string", "title": "Other"}
    return {
        "mode": "form",
        "sessionId": "s1",
        "toolCallId": draw(strings),
        "message": draw(strings),
        "requestedSchema": {"type": "object", "properties": properties},
    }


any_params = schema_params | claude_params()


fast = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Answer checks are simpler than the reducer; fewer examples keep the suite quick on 2 cores.
faster = settings(fast, max_examples=200)


FIELD = TypeAdapter(ElicitationField)


def check_view(view: ElicitationView) -> None:
    """Every cap and invariant the card and the wire rely on."""
    # The event's type carries the message/field/id/title caps.
    stream_event.validate_python(
        {
            "kind": "elicitation_request",
            "seq": 1,
            "requestId": "r",
            "message": view.message,
            "fields": view.fields,
            "toolCallId": view.tool_call_id,
            "title": view.title,
        }
    )
    by_name = {f["name"]: f for f in view.fields}
    assert len(by_name) == len(view.fields)
    for field in view.fields:
        assert FIELD.dump_python(FIELD.validate_python(field), exclude_none=True) == field
        assert None not in field.values()
        options = field.get("options")
        assert (options is not None) == (field["type"] in ("enum", "multi"))
        if options is not None:
            assert 0 < len(options) <= wire.MAX_OPTIONS
            assert len({o["value"] for o in options}) == len(options)
        if "custom" in field:
            assert by_name[field["custom"]]["customOf"] == field["name"]
        if "customOf" in field:
            assert field["type"] == "text"
            assert by_name[field["customOf"]]["custom"] == field["name"]
    # A prefilled form is a valid answer.
    defaults = {f["name"]: f["default"] for f in view.fields if "default" in f}
    required = [f["name"] for f in view.fields if f.get("required")]
    if all(name in defaults for name in required):
        assert validate_answer(view.fields, "accept", defaults)["content"] == defaults


@fast
@given(json_values)
def test_view_never_raises_on_any_json(params: Any) -> None:
    check_view(take_elicitation_view(params))


@fast
@given(schema_params)
def test_view_never_raises_on_schema_shaped_junk(params: Any) -> None:
    check_view(take_elicitation_view(params))


@fast
@given(claude_params())
def test_every_kept_claude_question_gets_its_other_box(params: dict[str, Any]) -> None:
    view = take_elicitation_view(params)
    check_view(view)
    by_name = {f["name"]: f for f in view.fields}
    for name, field in by_name.items():
        base = name.removesuffix("_custom")
        if base != name and base in by_name:
            assert field["customOf"] == base
            assert by_name[base]["custom"] == name


def forms() -> st.SearchStrategy[list[dict[str, Any]]]:
    return any_params.map(lambda params: take_elicitation_view(params).fields)


def valid_value(field: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values a correct client could send for ``field``."""
    options = [o["value"] for o in field.get("options", [])]
    by_kind: dict[str, st.SearchStrategy[Any]] = {
        "text": st.text(max_size=12),
        "number": st.integers() | st.floats(allow_nan=False, allow_infinity=False),
        "integer": st.integers(),
        "boolean": st.booleans(),
        "enum": st.sampled_from(options or [""]),
        "multi": st.lists(st.sampled_from(options or [""]), unique=True),
    }
    return by_kind[field["type"]]


@st.composite
def answers(draw: st.DrawFn) -> tuple[list[dict[str, Any]], Any, Any]:
    fields = draw(forms())
    near_misses = (
        junk
        | st.sampled_from(
            [0, -1, 2.0, 2.5, True, False, math.inf, 10**5000, "x" * (wire.MAX_VALUE_TEXT + 1)]
        )
        | st.lists(strings, max_size=3)
    )
    per_field = {f["name"]: mostly(valid_value(f), near_misses) for f in fields}
    values: Any = draw(
        mostly(
            st.fixed_dictionaries({}, optional=per_field),
            junk | st.dictionaries(names, near_misses, max_size=3),
        )
    )
    action = draw(mostly(st.sampled_from(["accept", "decline", "cancel"]), junk))
    return fields, action, values


@faster
@given(st.data())
def test_valid_answers_are_accepted(data: st.DataObject) -> None:
    fields = data.draw(forms())
    values = data.draw(
        st.fixed_dictionaries(
            {f["name"]: valid_value(f) for f in fields if f.get("required")},
            optional={f["name"]: valid_value(f) for f in fields if not f.get("required")},
        )
    )
    assert validate_answer(fields, "accept", values) == {"action": "accept", "content": values}


@faster
@given(answers())
def test_validate_answer_raises_only_answer_error(
    case: tuple[list[dict[str, Any]], Any, Any],
) -> None:
    fields, action, values = case
    try:
        result = validate_answer(fields, action, values)
    except AnswerError as error:
        assert 0 < len(str(error)) < 300
        return
    if action != "accept":
        assert result == {"action": action}
        return
    assert result["action"] == "accept"
    content = result["content"]
    names_ = [f["name"] for f in fields]
    assert set(content) <= set(names_)
    for field in fields:
        if field.get("required"):
            assert field["name"] in content
    # What we send the agent also fits the request contract's value union and caps.
    ElicitationRespondRequest.model_validate(
        {
            "type": "chat:elicitation.respond",
            "chatId": "c",
            "requestId": "r",
            "action": "accept",
            "values": content,
        }
    )


# ---------------------------------------------------------------- URL mode


def url_params(url: Any, **params: Any) -> dict[str, Any]:
    return {"mode": "url", "sessionId": "s1", "message": "Sign in", "url": url,
            "elicitationId": "e1", **params}  # fmt: skip


# URL questions shown and their hosts, as a browser reads them (js/test/cards.test.ts too).
URL_HOSTS = json.loads((Path(__file__).parent / "vectors" / "url_hosts.json").read_text())


@pytest.mark.parametrize(("url", "host"), [(v["url"], v["host"]) for v in URL_HOSTS["shown"]])
def test_url_request_host(url: str, host: str) -> None:
    asked = take_url_request(url_params(url, toolCallId="t1"))
    assert (asked.url, asked.host, asked.elicitation_id) == (url, host, "e1")
    assert asked.message == "Sign in" and asked.tool_call_id == "t1"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://bank.example@evil.example/", "credentials"),
        ("https://user:pass@example.com/", "credentials"),
        ("javascript:alert(1)", "only http and https"),
        ("data:text/html,hi", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("ftp://example.com/", "only http and https"),
        ("https:example.com", "no host"),
        ("https:///path", "no host"),
        ("/relative/path", "only http and https"),
        # Where a browser and Python would read different hosts.
        ("https://good.example\\@evil.example/", "backslashes"),
        ("https://%65vil.example/", "characters a host name"),
        ("http://0x7f.1/", "dotted-quad"),
        ("http://2130706433/", "dotted-quad"),
        ("http://1.2.3.4./", "dotted-quad"),
        # Spaces, controls and bidi overrides that could disguise what is shown.
        ("https://example.com/a b", "spaces"),
        ("https://example.com/\u202egnp.exe", "spaces"),
        ("https://example.com/\n", "spaces"),
        ("http://example.com:99999/", "port"),
        ("http://[zz::1]/", "IPv6"),
        ("http://a..b/", "domain name"),
        # Read as "ss" by Python's IDNA 2003, kept (punycode) by browsers.
        ("https://straße.example/", "encode differently"),
        ("https://ς.example/", "encode differently"),
        ("https://example.com/" + "a" * wire.MAX_URI, "longer than"),
    ],
)
def test_url_request_refused(url: str, why: str) -> None:
    with pytest.raises(UrlRefused, match=why):
        take_url_request(url_params(url))


@pytest.mark.parametrize(
    "params",
    [
        url_params(None),
        url_params(42),
        url_params("https://example.com", elicitationId=None),
        url_params("https://example.com", elicitationId=""),
        url_params("https://example.com", elicitationId="x" * (wire.MAX_ID + 1)),
        "not a dict",
    ],
)
def test_url_request_junk_is_refused_never_raises_else(params: Any) -> None:
    with pytest.raises(UrlRefused):
        take_url_request(params)


def test_url_request_message_bounded() -> None:
    asked = take_url_request(url_params("https://example.com", message="m" * 10_000))
    assert len(asked.message) == wire.MAX_MESSAGE


@given(st.text(max_size=300))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_url_host_only_refuses(url: str) -> None:
    try:
        host = url_host("https://" + url)
    except UrlRefused:
        return
    assert host and host.isascii() and "@" not in host


def test_url_answer_has_no_content() -> None:
    assert validate_answer([], "accept", None, url=True) == {"action": "accept"}
    assert validate_answer([], "decline", None, url=True) == {"action": "decline"}
    with pytest.raises(AnswerError):
        validate_answer([], "accept", {"x": "y"}, url=True)
