"""Kernel proofs (issue 12, item 8): good once, for seconds, and only while the kernel lives.

The server fixtures are ``tests/server``'s (imported, not copied).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from jupyter_server.serverapp import ServerApp
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

from acp_notebook.wire.kernel_auth import PROOF_HEADER, auth_headers
from tests.server.conftest import *  # noqa: F403  (pytest-jupyter's and tests/server's fixtures)
from tests.server.conftest import kernel_key
from tests.support.server_peers import DEMO, Peer


async def status(url: str, headers: dict[str, str]) -> int:
    """101 when the socket opens (then closed again), else the refusal's HTTP status."""
    try:
        ws = await websocket_connect(HTTPRequest(url, headers=headers))
    except HTTPClientError as failure:
        return failure.code
    ws.close()
    return 101


@pytest.fixture
def proof_of(jp_serverapp: ServerApp) -> Any:
    secret = jp_serverapp.web_app.settings["acp_notebook"].secret

    def make(kernel_id: str, at: float) -> dict[str, str]:
        key = kernel_key(jp_serverapp, kernel_id)
        return auth_headers(secret, key, kernel_id, at)

    return make


@pytest.mark.fault("a kernel proof replayed (the same headers twice)")
async def test_a_proof_opens_one_socket(start_kernel: Any, ws_url: Any, proof_of: Any) -> None:
    kernel_id = await start_kernel()
    url = ws_url("acp-notebook/ws/kernel")
    headers = proof_of(kernel_id, time.time())
    assert await status(url, headers) == 101
    assert await status(url, headers) == 403
    assert await status(url, proof_of(kernel_id, time.time())) == 101  # a fresh one opens


@pytest.mark.fault("a kernel proof stamped {when}")
@pytest.mark.parametrize(("when", "offset"), [("59 s ahead", 59), ("15 s ago", -15)])
async def test_a_proof_lives_seconds(
    start_kernel: Any, ws_url: Any, proof_of: Any, when: str, offset: float
) -> None:
    kernel_id = await start_kernel()
    url = ws_url("acp-notebook/ws/kernel")
    assert await status(url, proof_of(kernel_id, time.time() + offset)) == 403


@pytest.mark.fault("a socket opened before its kernel shut down opens a chat after")
async def test_a_dead_kernels_socket_opens_no_chat(
    start_kernel: Any, kernel_socket: Any, jp_fetch: Any, extension: Any
) -> None:
    kernel_id = await start_kernel()
    kernel: Peer = await kernel_socket(kernel_id)
    await jp_fetch("api", "kernels", kernel_id, method="DELETE")
    ack = await kernel.request({"type": "chat:open", "agent": "demo", "env": DEMO})
    assert ack["error"] in ("FORBIDDEN", "INTERNAL") and ack["detail"], ack
    hub = extension.hubs.get(kernel_id)
    assert hub is None or not hub.chats


@pytest.mark.fault("a kernel proof of non-ASCII characters (the secret right)")
async def test_a_non_ascii_proof_is_refused(start_kernel: Any, ws_url: Any, proof_of: Any) -> None:
    # hmac.compare_digest raises TypeError on such a str: the server answered 500, with a
    # traceback in its log, where 403 is right.
    kernel_id = await start_kernel()
    headers = {**proof_of(kernel_id, time.time()), PROOF_HEADER: "\u00e9" * 64}
    assert await status(ws_url("acp-notebook/ws/kernel"), headers) == 403


@pytest.mark.fault("a kernel with no issued key (started past the extension's hook)")
async def test_a_kernel_without_an_issued_key_proves_with_its_session_key(
    start_kernel: Any, ws_url: Any, jp_serverapp: ServerApp, extension: Any
) -> None:
    # As a kernel that only inherited the server's variables: its session key, as before.
    kernel_id = await start_kernel()
    extension.kernel_keys.forget(kernel_id)
    session_key = jp_serverapp.kernel_manager.get_kernel(kernel_id).session.key
    headers = auth_headers(extension.secret, session_key, kernel_id, time.time())
    assert await status(ws_url("acp-notebook/ws/kernel"), headers) == 101
