"""The ``notebook`` MCP server over stdio, for agents that cannot speak HTTP MCP.

``python -m acp_notebook.notebook_tools.proxy`` with the endpoint's URL and the
chat's secret in its environment (never on its command line): it lists and calls
the tools of the HTTP endpoint through the SDK's client and relays progress, so the
tools themselves exist once.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from ..agent.mcp_servers import NOTEBOOK, SECRET_ENV, SECRET_HEADER, URL_ENV


async def serve(url: str, secret: str) -> None:
    async with (
        httpx2.AsyncClient(headers={SECRET_HEADER: secret}, timeout=None) as http,
        Client(streamable_http_client(url, http_client=http)) as upstream,
    ):

        async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
            return await upstream.list_tools()

        async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> Any:
            return await upstream.call_tool(
                params.name, params.arguments or {}, progress_callback=ctx.session.report_progress
            )

        server: Server[Any] = Server(NOTEBOOK, on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


def main() -> None:
    url, secret = os.environ.get(URL_ENV), os.environ.get(SECRET_ENV)
    if not (url and secret):
        sys.exit(f"{URL_ENV} and {SECRET_ENV} must be set (the chat's notebook entry sets them)")
    asyncio.run(serve(url, secret))


if __name__ == "__main__":
    main()
