"""Generate js/src/contracts.ts from the JSON Schema of acp_notebook/wire/contracts.py.

    python scripts/gen_contracts.py           writes js/src/contracts.ts
    python scripts/gen_contracts.py --check   exits 1 when the checked-in file is stale

Every model and TypedDict the wire's unions, acks, snapshot, saved chat and kernel
queries reach becomes an interface; the named unions and literal types become aliases
(an inline schema equal to one is written as its name); every public int or string
constant of contracts.py becomes an exported const. The output is formatted as biome
formats it, so the file needs no hand edit.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's contracts, whatever is installed

from acp_notebook.wire import contracts  # noqa: E402

OUTPUT = ROOT / "js" / "src" / "contracts.ts"
COMMAND = "python scripts/gen_contracts.py"
WIDTH = 100  # biome's lineWidth (js/biome.json)

# The named types TS sees: aliases (unions and literals) and the roots of the models.
ALIASES: dict[str, Any] = {
    "FieldType": contracts.FieldType,
    "FieldValue": contracts.FieldValue,
    "ErrorCode": contracts.ErrorCode,
    "Phase": contracts.Phase,
    "ContentBlock": contracts.ContentBlock,
    "SnapshotItem": contracts.SnapshotItem,
    "StreamEvent": contracts.StreamEvent,
    "Edit": contracts.Edit,
    "ClientRequest": contracts.ClientRequest,
}
ROOTS: dict[str, Any] = {
    "Ack": contracts.Ack,
    "EventBatch": contracts.EventBatch,
    "FoldSnapshot": contracts.FoldSnapshot,
    "SavedChatData": contracts.SavedChatData,
    "KernelQuery": contracts.KernelQuery,
    "KernelAnswer": contracts.KernelAnswer,
    "PageNotebooks": contracts.PageNotebooks,
    "PageFocus": contracts.PageFocus,
    "PageRequest": contracts.PageRequest,
    "PageReply": contracts.PageReply,
}


def wire_schema() -> dict[str, Any]:
    """One document: every model and TypedDict under ``$defs`` by its class name, plus
    each alias of ``ALIASES`` under its own name."""
    named = {**ALIASES, **ROOTS}
    keyed, definitions = TypeAdapter.json_schemas(
        [(name, "validation", TypeAdapter(kind)) for name, kind in named.items()]
    )
    defs: dict[str, Any] = dict(definitions.get("$defs", {}))
    for (name, _mode), schema in keyed.items():
        if "$ref" not in schema:  # a model is a plain $ref to its own definition
            defs[name] = schema
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


def constants() -> dict[str, int | str]:
    """contracts.py's public int and string constants, in their order there."""
    return {
        name: value
        for name, value in vars(contracts).items()
        if name.isupper() and isinstance(value, (int, str)) and not isinstance(value, bool)
    }


# ---------------------------------------------------------------- rendering


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _union(members: list[str]) -> str:
    return " | ".join(dict.fromkeys(members))  # int and float are both number


class Renderer:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs = schema["$defs"]
        self.aliases: dict[str, str] = {}
        names = [name for name in self.defs if "properties" not in self.defs[name]]
        self.aliases = {self.raw(self.defs[name]): name for name in names}

    def type(self, schema: dict[str, Any]) -> str:
        """``schema`` as TypeScript, an alias's name where it is one."""
        text = self.raw(schema)
        return self.aliases.get(text, text)

    def raw(self, schema: dict[str, Any]) -> str:
        if "$ref" in schema:
            return _ref_name(schema["$ref"])
        if "anyOf" in schema or "oneOf" in schema:
            return _union([self.type(s) for s in schema.get("anyOf") or schema["oneOf"]])
        if "const" in schema:
            return json.dumps(schema["const"])
        if "enum" in schema:
            return _union([json.dumps(v) for v in schema["enum"]])
        kind = schema.get("type")
        if kind == "array":
            inner = self.type(schema["items"])
            return f"({inner})[]" if " | " in inner else f"{inner}[]"
        if kind == "object":
            if "properties" in schema:
                raise ValueError(f"a nested model must be a $ref: {schema}")
            extra = schema.get("additionalProperties", True)
            return f"Record<string, {'unknown' if extra is True else self.type(extra)}>"
        if kind in ("integer", "number"):
            return "number"
        if kind in ("string", "boolean", "null"):
            return str(kind)
        if kind is None and not schema.keys() - {"title", "description", "default"}:
            return "unknown"  # Any
        raise ValueError(f"no TypeScript rendering for {schema}")


def _doc(description: str | None, indent: str = "") -> list[str]:
    if not description:
        return []
    text = " ".join(description.split())
    if len(indent) + len(text) + 7 <= WIDTH:
        return [f"{indent}/** {text} */"]
    lines = textwrap.wrap(text, WIDTH - len(indent) - 3)
    return [f"{indent}/**", *(f"{indent} * {line}" for line in lines), f"{indent} */"]


def _alias(name: str, text: str) -> list[str]:
    line = f"export type {name} = {text};"
    if len(line) <= WIDTH:
        return [line]
    members = text.split(" | ")
    return [f"export type {name} =", *(f"  | {m}" for m in members[:-1]), f"  | {members[-1]};"]


def generate(schema: dict[str, Any], shared: dict[str, int | str]) -> str:
    """The text of contracts.ts for ``schema`` (``wire_schema``) and ``shared`` constants."""
    render = Renderer(schema)
    out = [
        "// Generated from acp_notebook/wire/contracts.py (the source of truth) by",
        f"// `{COMMAND}`: do not edit; change the Python contracts and run it.",
        "",
    ]
    out += [f"export const {name} = {json.dumps(value)};" for name, value in shared.items()]
    out.append("")
    defs = schema["$defs"]
    for name in sorted(defs):
        definition = defs[name]
        if "properties" in definition:
            continue
        mapping = definition.get("discriminator", {}).get("mapping")
        if mapping is not None and "oneOf" not in definition:
            raise ValueError(f"{name}: a discriminated union without oneOf")
        out += [*_doc(definition.get("description")), *_alias(name, render.raw(definition)), ""]
    for name in sorted(defs):
        definition = defs[name]
        if "properties" not in definition:
            continue
        required = set(definition.get("required", []))
        out += [*_doc(definition.get("description")), f"export interface {name} {{"]
        for prop, sub in definition["properties"].items():
            out += _doc(sub.get("description"), "  ")
            mark = "" if prop in required else "?"
            out.append(f"  {prop}{mark}: {render.type(sub)};")
        out += ["}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when the file is stale")
    args = parser.parse_args()
    fresh = generate(wire_schema(), constants())
    if args.check:
        if OUTPUT.read_text() != fresh:
            print(
                f"{OUTPUT.relative_to(ROOT)} differs from a fresh generation from "
                f"acp_notebook/wire/contracts.py: run `{COMMAND}` and commit the result.",
                file=sys.stderr,
            )
            return 1
        return 0
    OUTPUT.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
