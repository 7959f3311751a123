"""The JSON Schema of the wire contracts, from the types in ``contracts.py``.

One document: every model and TypedDict under ``$defs`` by its class name, plus the two
discriminated unions ``StreamEvent`` and ``ClientRequest``. ``js/src/contracts.ts``
is checked against it (tests/test_schema_sync.py), so TypeScript cannot drift.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from .contracts import Ack, client_request, stream_event


def wire_schema() -> dict[str, Any]:
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
