"""The secret header of an MCP request to the notebook tools (issue 12: every hostile input
bounded). The caller is the agent: a header that is not ASCII made ``compare_digest``
raise, and the endpoint failed with an exception (500) where 401 is right.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from acp_notebook.mcp_servers import SECRET_HEADER
from acp_notebook.notebook_tools.mcp_server import ToolHost

BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()


async def raw_post(url: str, headers: list[tuple[bytes, bytes]]) -> int:
    """A POST with header bytes as given (latin-1 allowed, as an agent may send); its status."""
    host, port_path = url.split("//", 1)[1].split(":", 1)
    port, path = port_path.split("/", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    lines = [f"POST /{path} HTTP/1.1".encode(), f"Host: {host}".encode()]
    lines += [b"Content-Type: application/json", b"Accept: application/json, text/event-stream"]
    lines += [name + b": " + value for name, value in headers]
    writer.write(b"\r\n".join(lines) + b"\r\n\r\n" + BODY)
    await writer.drain()
    status = (await asyncio.wait_for(reader.readline(), 10)).split()[1]
    writer.close()
    return int(status)


@pytest.mark.fault("an MCP request whose secret header is not ASCII")
async def test_a_non_ascii_secret_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    host = ToolHost()
    backend: Any = object()  # never reached: the guard refuses first
    endpoint = await host.add(backend)
    try:
        headers = [
            (SECRET_HEADER.encode(), "\u00e9".encode("latin-1") * 40),
            (b"Content-Length", str(len(BODY)).encode()),
        ]
        with caplog.at_level(logging.ERROR):
            assert await raw_post(endpoint.url, headers) == 401
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
        # The right secret still opens it (a 200 or the SDK's own answer, never 401).
        right = [(SECRET_HEADER.encode(), endpoint.secret.encode()), headers[1]]
        assert await raw_post(endpoint.url, right) != 401
    finally:
        await host.close()
