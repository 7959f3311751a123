"""js/src/contracts.ts must say what the JSON Schema of contracts.py (``wire_schema``) says.

The TS file keeps the constrained format documented at its top; this test reads it
with regexes, renders each schema property as a TypeScript type and compares names,
required-ness and types (literal kind/type values included), model by model.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from acp_notebook.wire.contracts import Ack, client_request, stream_event

CONTRACTS_TS = Path(__file__).resolve().parent.parent / "js" / "src" / "contracts.ts"
UNIONS = ("StreamEvent", "ClientRequest")

_INTERFACE = re.compile(
    r"(?P<doc>/\*\*(?:(?!\*/).)*\*/\s*)?^export interface (?P<name>\w+)"
    r"(?: extends (?P<base>\w+))? \{\n(?P<body>.*?)^\}",
    re.MULTILINE | re.DOTALL,
)
_PROPERTY = re.compile(r"^\s*(?P<name>\w+)(?P<opt>\??): (?P<type>.+);$")
_ALIAS = re.compile(r"^export type (?P<name>\w+) =(?P<body>[^;]*);", re.MULTILINE)
_COMMENT = re.compile(r"^\s*(//.*|/\*\*.*\*/)$")

Fields = dict[str, tuple[bool, str]]  # property -> (required, canonical type)


# ---------------------------------------------------------------- TypeScript side


def wire_schema() -> dict[str, Any]:
    """One document: every model and TypedDict of the wire under ``$defs`` by its class
    name, plus the two discriminated unions ``StreamEvent`` and ``ClientRequest``."""
    adapters: list[tuple[str, TypeAdapter[Any]]] = [
        ("StreamEvent", stream_event),
        ("ClientRequest", client_request),
        ("Ack", TypeAdapter(Ack)),
    ]
    keyed, definitions = TypeAdapter.json_schemas(
        [(name, "validation", adapter) for name, adapter in adapters]
    )
    defs: dict[str, Any] = dict(definitions.get("$defs", {}))
    for (name, _mode), schema in keyed.items():
        # Ack is a plain $ref to its own model; the unions get a name of their own.
        if "$ref" not in schema:
            defs[name] = schema
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "(<{[":
            depth += 1
        elif ch in ")>}]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def canon(text: str, aliases: dict[str, str]) -> str:
    """A TS type as a sorted union of canonical members, aliases expanded."""
    members: set[str] = set()
    for member in _split_top(text, "|"):
        if member in aliases:
            members.update(_split_top(canon(aliases[member], aliases), "|"))
        elif member.endswith("[]"):
            inner = member[:-2]
            if inner.startswith("(") and inner.endswith(")"):
                inner = inner[1:-1]
            members.add(f"Array<{canon(inner, aliases)}>")
        elif member.startswith("Record<"):
            key, value = _split_top(member[len("Record<") : -1], ",")
            members.add(f"Record<{key}, {canon(value, aliases)}>")
        else:
            members.add(member)
    return " | ".join(sorted(members))


def parse_ts(source: str) -> tuple[dict[str, Fields], dict[str, list[str]]]:
    """Interfaces (local ones left out) and the members of each union alias."""
    aliases = {m["name"]: " ".join(m["body"].split()) for m in _ALIAS.finditer(source)}
    interfaces: dict[str, Fields] = {}
    local: dict[str, Fields] = {}  # the client-only ones: bases, never compared
    for m in _INTERFACE.finditer(source):
        fields: Fields = dict(local[m["base"]]) if m["base"] else {}
        for line in m["body"].splitlines():
            if not line.strip() or _COMMENT.match(line):
                continue
            prop = _PROPERTY.match(line)
            assert prop, f"{m['name']}: unreadable line {line!r} (see the format in contracts.ts)"
            assert prop["name"] not in fields, f"{m['name']}.{prop['name']} declared twice"
            fields[prop["name"]] = (not prop["opt"], canon(prop["type"], aliases))
        if m["doc"] and "@local" in m["doc"]:
            local[m["name"]] = fields
        else:
            interfaces[m["name"]] = fields
    unions = {name: _split_top(body, "|") for name, body in aliases.items()}
    return interfaces, unions


# ---------------------------------------------------------------- schema side


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def render(schema: dict[str, Any]) -> str:
    """A JSON Schema as TypeScript text (the inverse of the format in contracts.ts)."""
    if "$ref" in schema:
        return _ref_name(schema["$ref"])
    if "anyOf" in schema or "oneOf" in schema:
        return " | ".join(render(s) for s in schema.get("anyOf") or schema["oneOf"])
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return f"({render(schema['items'])})[]"
    if kind == "object":
        extra = schema.get("additionalProperties", True)
        assert "properties" not in schema, "a nested model must be a $ref"
        return f"Record<string, {'unknown' if extra is True else render(extra)}>"
    simple = {"string", "number", "boolean", "null"}
    if kind == "integer":
        return "number"
    if kind in simple:
        return str(kind)
    raise AssertionError(f"no TypeScript rendering for {schema}")


def schema_models(schema: dict[str, Any]) -> tuple[dict[str, Fields], dict[str, list[str]]]:
    models: dict[str, Fields] = {}
    unions: dict[str, list[str]] = {}
    for name, definition in schema["$defs"].items():
        if name in UNIONS:
            mapping = definition["discriminator"]["mapping"]
            unions[name] = sorted(_ref_name(ref) for ref in mapping.values())
            continue
        required = set(definition.get("required", []))
        models[name] = {
            prop: (prop in required, canon(render(sub), {}))
            for prop, sub in definition["properties"].items()
        }
    return models, unions


def drift(schema: dict[str, Any], source: str) -> list[str]:
    """Every disagreement between the schema and the TS source, as readable lines."""
    models, schema_unions = schema_models(schema)
    interfaces, ts_unions = parse_ts(source)
    problems = [f"model {n} has no TS interface" for n in sorted(models.keys() - interfaces)]
    problems += [
        f"TS interface {n} is no model (mark it @local?)"
        for n in sorted(interfaces.keys() - models)
    ]
    for name in sorted(models.keys() & interfaces.keys()):
        want, have = models[name], interfaces[name]
        for prop in sorted(want.keys() | have.keys()):
            if prop not in have:
                problems.append(f"{name}.{prop} missing in TS")
            elif prop not in want:
                problems.append(f"{name}.{prop} is not in the model")
            elif want[prop] != have[prop]:
                problems.append(f"{name}.{prop}: schema {want[prop]}, TS {have[prop]}")
    for union, members in schema_unions.items():
        if sorted(ts_unions.get(union, [])) != members:
            problems.append(f"{union}: schema {members}, TS {ts_unions.get(union)}")
    return problems


# ---------------------------------------------------------------- tests


def test_contracts_ts_matches_the_schema() -> None:
    assert drift(wire_schema(), CONTRACTS_TS.read_text()) == []


def test_every_model_is_read_from_the_ts_file() -> None:
    interfaces, unions = parse_ts(CONTRACTS_TS.read_text())
    assert {"UpdateEvent", "PromptRequest", "Ack", "ElicitationField"} <= interfaces.keys()
    assert "EventBatch" not in interfaces  # @local
    assert interfaces["UpdateEvent"]["kind"] == (True, '"update"')
    assert interfaces["ElicitationField"]["type"][1] == canon(
        '"boolean" | "enum" | "integer" | "multi" | "number" | "text"', {}
    )
    assert len(unions["StreamEvent"]) == 9


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # A field added on the TS side only.
        ("  by?: string | null;\n}", "  by?: string | null;\n  x: string;\n}", ".x is not in"),
        # Required-ness differs.
        ("  prompt: string;", "  prompt?: string;", "TurnStartedEvent.prompt"),
        # A literal kind differs.
        ('kind: "turn_ended";', 'kind: "turn_end";', "TurnEndedEvent.kind"),
        # A type differs.
        ("  exitCode?: number | null;", "  exitCode?: string | null;", "AgentStatusEvent.exitCode"),
        # A model left out of a union.
        ("  | CancelRequest\n", "", "ClientRequest"),
        # An alias that no longer matches the model's literals.
        ('| "multi";', ";", "ElicitationField.type"),
    ],
)
def test_ts_side_drift_is_caught(old: str, new: str, expected: str) -> None:
    source = CONTRACTS_TS.read_text()
    assert old in source
    problems = drift(wire_schema(), source.replace(old, new, 1))
    assert any(expected in p for p in problems), problems


def test_python_side_drift_is_caught() -> None:
    schema = wire_schema()
    schema["$defs"]["TurnEndedEvent"]["properties"]["reason"] = {"type": "string"}
    schema["$defs"]["TurnEndedEvent"]["required"].append("reason")
    schema["$defs"]["NewEvent"] = {"properties": {}}
    schema["$defs"]["Ack"]["properties"]["turn"] = {"type": "string"}
    problems = drift(schema, CONTRACTS_TS.read_text())
    assert "TurnEndedEvent.reason missing in TS" in problems
    assert "model NewEvent has no TS interface" in problems
    assert any(p.startswith("Ack.turn:") for p in problems), problems
