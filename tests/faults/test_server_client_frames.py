"""The kernel's socket to the server survives frames it cannot read (issue 12, item 7).

A real ``ServerClient`` against a WebSocket server of the test's own that sends
garbage before it answers: the client skips each bad frame (logged) and its reader,
and with it reconnection, goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from acp_notebook.kernel.server_transport import ServerClient
from acp_notebook.wire import bounded_json
from acp_notebook.wire.contracts import MAX_PROMPT, MAX_REQUEST_BYTES

BAD_FRAMES = [
    "not json",
    "[" * 1000 + "]" * 1000,  # deeper than any frame may be
    '"a string"',
    "[1, 2]",
    '{"chatId": "c1", "events": "not a list"}',
    '{"chatId": ["c1"], "events": []}',  # a chat id that is not a string
    '{"ack": {"id": 1}, "error": "BAD"}',
]


@pytest.mark.fault("the server sends the kernel {name}")
@pytest.mark.parametrize(
    ("name", "bad"),
    [("a frame that is not JSON", BAD_FRAMES[0]), ("every kind of bad frame", None)],
)
async def test_bad_frames_are_skipped_not_fatal(
    caplog: pytest.LogCaptureFixture, name: str, bad: str | None
) -> None:
    frames: list[dict[str, Any]] = []

    async def handler(ws: ServerConnection) -> None:
        for frame in [bad] if bad is not None else BAD_FRAMES:
            await ws.send(frame)
        async for raw in ws:
            request = json.loads(raw)
            await ws.send(json.dumps({"chatId": "c1", "events": [{"kind": "ping"}]}))
            await ws.send(json.dumps({"ack": request["id"], "accepted": True}))

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        client = ServerClient(f"http://127.0.0.1:{port}", "secret", "k1", b"key")
        with caplog.at_level(logging.WARNING, "acp_notebook"):
            assert await asyncio.to_thread(client.start)
            try:
                subscribed = client.subscribe("c1", frames.append)
                await asyncio.wait_for(asyncio.wrap_future(subscribed), 10)
                ack = client.request({"type": "chat:cancel", "chatId": "c1"})
                assert (await asyncio.wait_for(asyncio.wrap_future(ack), 10))["accepted"]
                assert client._reader is not None and not client._reader.done()  # still reading
            finally:
                client.shutdown()
    assert {"kind": "ping"} in [e for f in frames for e in f["events"]]
    skipped = [r for r in caplog.records if "skipped a frame" in r.getMessage()]
    assert len(skipped) >= (1 if bad is not None else 4), [r.getMessage() for r in skipped]


@pytest.mark.fault("the kernel sends a prompt of the longest non-ASCII text, or a lone surrogate")
async def test_non_ascii_prompts_fit_the_servers_limit() -> None:
    received: list[str] = []

    async def handler(ws: ServerConnection) -> None:
        async for raw in ws:
            assert isinstance(raw, str)
            received.append(raw)
            request = bounded_json.loads(raw, max_bytes=MAX_REQUEST_BYTES)  # as the server
            await ws.send(json.dumps({"ack": request["id"], "accepted": True}))

    prompts = ["\u4e2d" * MAX_PROMPT, "name \udcff.csv"]  # CJK; os.fsdecode of a bad byte
    async with serve(handler, "127.0.0.1", 0, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        client = ServerClient(f"http://127.0.0.1:{port}", "secret", "k1", b"key")
        assert await asyncio.to_thread(client.start)
        try:
            for text in prompts:
                ack = client.request({"type": "chat:prompt", "chatId": "c1", "text": text})
                assert (await asyncio.wait_for(asyncio.wrap_future(ack), 30))["accepted"]
        finally:
            client.shutdown()
    assert len(received[0]) < MAX_PROMPT + 200  # the characters themselves, not escapes
    assert bounded_json.loads(received[1], max_bytes=1000)["text"] == "name \ufffd.csv"


@pytest.mark.fault("the server drops the kernel's socket while a request waits for its ack")
async def test_a_request_in_flight_when_the_socket_drops_gets_an_error_ack() -> None:
    async def handler(ws: ServerConnection) -> None:
        async for _raw in ws:
            await ws.close()  # the request is read, never answered

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        client = ServerClient(f"http://127.0.0.1:{port}", "secret", "k1", b"key")
        assert await asyncio.to_thread(client.start)
        try:
            ack = client.request({"type": "chat:cancel", "chatId": "c1", "id": "mine"})
            frame = await asyncio.wait_for(asyncio.wrap_future(ack), 10)
        finally:
            client.shutdown()
    assert frame["ack"] == "mine"
    assert frame["error"] == "INTERNAL"
    assert frame["detail"] == "lost the connection to the Jupyter server"
