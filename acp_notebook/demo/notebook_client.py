"""The demo agent's MCP client of the chat's ``notebook`` server (the SDK's client).

Given the ``notebook`` entry of ``session/new``'s ``mcpServers`` (HTTP with a header,
or stdio with an env), it calls the notebook tools the way a real agent does, so the
quickstart shows them without a model.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

Json = dict[str, Any]


def _pairs(value: Any) -> dict[str, str]:
    items = value if isinstance(value, list) else []
    return {str(p["name"]): str(p["value"]) for p in items if isinstance(p, dict) and "name" in p}


@contextlib.asynccontextmanager
async def connect(entry: Json) -> AsyncIterator[Client]:
    """An MCP client of ``entry`` (an ACP ``mcpServers`` item)."""
    if entry.get("type") == "http":
        async with (
            httpx2.AsyncClient(headers=_pairs(entry.get("headers")), timeout=None) as http,
            Client(streamable_http_client(str(entry["url"]), http_client=http)) as client,
        ):
            yield client
    else:
        params = StdioServerParameters(
            command=str(entry["command"]),
            args=[str(a) for a in entry.get("args") or []],
            env={**os.environ, **_pairs(entry.get("env"))},
        )
        async with Client(params) as client:
            yield client


def as_acp_content(result: mcp_types.CallToolResult) -> list[Json]:
    """A tool result as ACP tool-call content: its text and image blocks, which have the
    same JSON shape in MCP and ACP."""
    return [
        {"type": "content", "content": block.model_dump(by_alias=True, exclude_none=True)}
        for block in result.content
        if isinstance(block, (mcp_types.TextContent, mcp_types.ImageContent))
    ]


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))


def pick_variable(listing: str) -> tuple[str, str] | None:
    """The variable to look at in a ``list_variables`` answer: the first DataFrame, else the
    first variable; (name, type)."""
    found: list[tuple[str, str]] = []
    for line in listing.splitlines():
        name, sep, rest = line.partition(": ")
        if sep and name.isidentifier():
            found.append((name, rest.split(",", 1)[0].split(" =", 1)[0]))
    frames = [v for v in found if v[1].endswith("DataFrame")]
    return (frames or found)[0] if found else None


def line_for(variable: tuple[str, str] | None) -> str:
    """The one line the demo runs: about the variable it inspected."""
    if variable is None:
        return "1 + 1"
    name, kind = variable
    if kind.endswith(("DataFrame", "Series", "ndarray")):
        return f"{name}.shape"
    return f"type({name}).__name__"


# How an edit tool's answer names its cell: "Inserted ... id=<id> index=<n> rev=<rev>".
_CELL_ID = re.compile(r"\b(?:cell_)?id=([A-Za-z0-9_-]+)")
_CELL_INDEX = re.compile(r"\bindex=(\d+)")


def cell_of(answer: str) -> Json | None:
    """The cell an edit tool's answer names, as the next tool's arguments: its id (stable
    while cells move), else its index; None when the answer names neither."""
    if found := _CELL_ID.search(answer):
        return {"cell_id": found.group(1)}
    if found := _CELL_INDEX.search(answer):
        return {"index": int(found.group(1))}
    return None
