"""Calling the notebook tools as an agent would: the MCP SDK's client over streamable HTTP."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from acp_notebook.agent.mcp_servers import SECRET_HEADER

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]


async def call_tool(
    url: str,
    secret: str,
    name: str,
    arguments: dict[str, Any] | None = None,
    progress: ProgressFn | None = None,
) -> mcp_types.CallToolResult:
    async with (
        httpx2.AsyncClient(headers={SECRET_HEADER: secret}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return await client.call_tool(name, arguments or {}, progress_callback=progress)


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))


def images_of(result: mcp_types.CallToolResult) -> list[mcp_types.ImageContent]:
    return [c for c in result.content if isinstance(c, mcp_types.ImageContent)]


async def post(url: str, headers: dict[str, str], body: bytes) -> int:
    """A raw POST to the endpoint: its HTTP status."""
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(
            url,
            content=body,
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                **headers,
            },
        )
        return response.status_code
