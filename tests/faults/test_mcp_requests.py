"""MCP requests to the notebook tools (issue 12: every hostile input bounded); the caller
is the agent. A secret header that is not ASCII made ``compare_digest`` raise (500 where
401 is right), and requests in progress were not bounded in number.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from acp_notebook.agent.mcp_servers import SECRET_HEADER
from acp_notebook.notebook_tools import gate
from acp_notebook.notebook_tools.mcp_endpoint import ToolHost

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


@pytest.mark.fault("an agent opens MCP requests to the notebook tools without end")
async def test_requests_in_progress_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each request in progress holds up to MAX_BODY (256 KB) while its body arrives: an
    # agent opening connections in a loop held the server's memory without end. The
    # bound is per chat: another chat's requests still go through.
    monkeypatch.setattr(gate, "MAX_PER_CHAT", 8)
    host = ToolHost()
    backend: Any = object()
    endpoint = await host.add(backend)
    other = await host.add(backend)
    stalled: list[asyncio.StreamWriter] = []
    try:
        host_port = endpoint.url.split("//", 1)[1].split("/", 1)[0]
        address, port = host_port.split(":")
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {address}\r\n{SECRET_HEADER}: {endpoint.secret}\r\n"
            "Content-Type: application/json\r\nContent-Length: 200000\r\n\r\n"
        ).encode()
        for _ in range(8):  # bodies that never come
            _reader, writer = await asyncio.open_connection(address, int(port))
            writer.write(head + b"{")
            await writer.drain()
            stalled.append(writer)
        await asyncio.sleep(0.2)
        headers = [(SECRET_HEADER.encode(), endpoint.secret.encode())]
        headers.append((b"Content-Length", str(len(BODY)).encode()))
        assert await raw_post(endpoint.url, headers) == 503
        others = [(SECRET_HEADER.encode(), other.secret.encode()), headers[1]]
        assert await raw_post(other.url, others) not in (503, 401)
        for writer in stalled:
            writer.close()
        stalled.clear()
        await asyncio.sleep(0.2)
        assert await raw_post(endpoint.url, headers) not in (503, 401)
    finally:
        for writer in stalled:
            writer.close()
        await host.close()
