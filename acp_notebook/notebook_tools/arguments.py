"""The notebook tools' arguments, checked against each tool's input schema before it runs.

One check for every tool: the JSON schema the agent reads in ``tools/list`` (types,
lengths, ranges, choices, required names) is the one enforced, and a refusal names the
argument and its bound ("name is 300 characters; at most 256"), so that the agent can
correct its call. The endpoint checks each call against its tool's schema
(``mcp_endpoint``); the kernel-side tools check what they are asked the same way
(``kernel_side``), against ``VARIABLE``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..wire.clip import clip

MAX_NAME = 256  # characters of a variable's name
MAX_ID = 64  # characters of a cell id (nbformat 4.5: 1 to 64)
MAX_REV = 64  # characters of a revision (read_cells gives 12)

Schema = Mapping[str, Any]
# The kernel-side variable tools' arguments (inspect_variable, the composer's mention).
VARIABLE: Schema = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": MAX_NAME},
        "hidden": {"type": "boolean"},
    },
    "required": ["name"],
}
_KINDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a finite number",
    "boolean": "true or false",
    "null": "null",
    "object": "an object",
    "array": "a list",
}


class Refused(ValueError):
    """An argument of the wrong type or outside its bound; the message names both."""


def check(schema: Schema, args: Mapping[str, Any]) -> None:
    """Refuse ``args`` unless each fits ``schema``'s property of its name (names the
    schema does not know are left to the tool, as the SDK leaves them)."""
    properties = schema.get("properties") or {}
    for name in schema.get("required") or ():
        if name not in args:
            raise Refused(f"{name} is needed")
    for name, value in args.items():
        spec = properties.get(name)
        if isinstance(spec, Mapping):
            _check_value(str(name), value, spec)


def _check_value(name: str, value: Any, spec: Schema) -> None:
    variants = [v for v in spec.get("anyOf") or [spec] if isinstance(v, Mapping)]
    fitting = next((v for v in variants if _is(value, v.get("type"))), None)
    if fitting is None:
        wanted = " or ".join(dict.fromkeys(_KINDS.get(str(v.get("type")), "?") for v in variants))
        raise Refused(f"{name} is {_kind_of(value)}; it must be {wanted}")
    choices = fitting.get("enum")
    if choices is not None and value not in choices:
        shown = clip(repr(value), 60)
        raise Refused(f"{name} is {shown}; it must be one of {', '.join(map(str, choices))}")
    if isinstance(value, str):
        _within(name, len(value), fitting.get("minLength"), fitting.get("maxLength"), " characters")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _within(name, value, fitting.get("minimum"), fitting.get("maximum"), "")


def _within(name: str, size: float, least: Any, most: Any, unit: str) -> None:
    if isinstance(most, (int, float)) and size > most:
        raise Refused(f"{name} is {_number(size)}{unit}; at most {_number(most)}")
    if isinstance(least, (int, float)) and size < least:
        raise Refused(f"{name} is {_number(size)}{unit}; at least {_number(least)}")


def _number(value: float) -> str:
    return f"{int(value):,}" if isinstance(value, int) or value.is_integer() else f"{value:,g}"


def _is(value: Any, kind: Any) -> bool:
    if kind is None:  # the schema says nothing of the type
        return True
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return number and math.isfinite(value)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "object":
        return isinstance(value, Mapping)
    if kind == "array":
        return isinstance(value, list)
    return False


def _kind_of(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} (not a finite number)"
    for kind, said in _KINDS.items():
        if kind != "number" and _is(value, kind):
            return said
    return "a number" if isinstance(value, float) else type(value).__name__
