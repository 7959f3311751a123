"""Who may use the sockets, and what a bad request gets."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from jupyter_server.serverapp import ServerApp
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

from acp_notebook.wire.contracts import MAX_REQUEST_BYTES
from acp_notebook.wire.kernel_auth import (
    KERNEL_HEADER,
    PROOF_HEADER,
    SECRET_HEADER,
    TIME_HEADER,
    proof,
)
from tests.server.conftest import kernel_key
from tests.support.agents import DEMO_FAULTS
from tests.support.server_peers import DEMO, OPEN_CHAT, Peer, TwoUsers


async def refused(url: str, headers: dict[str, str]) -> int:
    with pytest.raises(HTTPClientError) as failure:
        await websocket_connect(HTTPRequest(url, headers=headers))
    return failure.value.code


async def open_demo(kernel: Peer, **options: Any) -> str:
    ack = await kernel.request({"type": "chat:open", "agent": "demo", "env": DEMO, **options})
    assert ack["accepted"], ack
    return str(ack["chatId"])


async def test_browser_socket_needs_a_login(
    http_server_client: Any, ws_url: Any, start_kernel: Any
) -> None:
    url = ws_url("acp-notebook/ws/browser", kernel=await start_kernel(), chat="x")
    assert await refused(url, {}) == 403
    assert await refused(url, {"Authorization": "token wrong"}) == 403


async def test_browser_socket_refuses_another_origin(
    http_server_client: Any,
    jp_fetch: Any,
    jp_http_port: int,
    ws_url: Any,
    start_kernel: Any,
    kernel_socket: Any,
) -> None:
    kernel_id = await start_kernel()
    chat_id = await open_demo(await kernel_socket(kernel_id))
    # A browser holds the login cookie; a page on another origin would send it too.
    response = await jp_fetch("api", "status")
    cookie = response.headers["Set-Cookie"].split(";", 1)[0]
    url = ws_url("acp-notebook/ws/browser", kernel=kernel_id, chat=chat_id)
    evil = {"Cookie": cookie, "Origin": "http://evil.example"}
    assert await refused(url, evil) == 403
    same = {"Cookie": cookie, "Origin": f"http://127.0.0.1:{jp_http_port}"}
    tab = Peer(await websocket_connect(HTTPRequest(url, headers=same)))
    assert (await tab.resync(chat_id))["accepted"]


async def test_kernel_socket_needs_the_kernels_own_proof(
    http_server_client: Any,
    jp_serverapp: ServerApp,
    ws_url: Any,
    start_kernel: Any,
    kernel_socket: Any,
) -> None:
    mine, other = await start_kernel(), await start_kernel()
    url = ws_url("acp-notebook/ws/kernel")
    now = f"{time.time():.3f}"
    key, other_key = kernel_key(jp_serverapp, mine), kernel_key(jp_serverapp, other)
    session_key = jp_serverapp.kernel_manager.get_kernel(mine).session.key
    secret = jp_serverapp.web_app.settings["acp_notebook"].secret

    def headers(kernel_id: str, key: bytes, timestamp: str = now, **extra: str) -> dict[str, str]:
        return {
            SECRET_HEADER: secret,
            KERNEL_HEADER: kernel_id,
            TIME_HEADER: timestamp,
            PROOF_HEADER: proof(key, kernel_id, timestamp),
            **extra,
        }

    attempts = {
        "no credentials": {},
        "wrong secret": {**headers(mine, key), SECRET_HEADER: "guess"},
        "wrong HMAC": {**headers(mine, key), PROOF_HEADER: "00" * 32},
        "another kernel's key": headers(mine, other_key),
        # A kernel the server started proves with the key it was given, and only with it.
        "its session key": headers(mine, session_key),
        "another kernel's id": headers(other, key),
        "a foreign kernel id": headers("not-a-kernel-of-this-server", key),
        "a stale proof": headers(mine, key, f"{time.time() - 600:.3f}"),
        "an Origin header": headers(mine, key, Origin="http://127.0.0.1"),
    }
    for name, attempt in attempts.items():
        assert await refused(url, attempt) == 403, name
    # No Jupyter login needed: the proof is the credential.
    kernel = Peer(await websocket_connect(HTTPRequest(url, headers=headers(mine, key))))
    await open_demo(kernel)


async def test_bad_requests_are_invalid_and_the_socket_stays_open(
    start_kernel: Any, kernel_socket: Any, browser: Any
) -> None:
    kernel_id = await start_kernel()
    kernel = await kernel_socket(kernel_id)
    chat_id = await open_demo(kernel)
    tab = await browser(kernel_id, chat_id)
    oversized = json.dumps(
        {"type": "chat:prompt", "chatId": chat_id, "text": "x" * MAX_REQUEST_BYTES}
    )
    for peer in (tab, kernel):
        for bad in ("not json", "[1, 2]", '{"type": "chat:nope"}', oversized):
            peer.send_raw(bad)
            refusal = await peer.refusal()
            assert refusal["error"] == "INVALID" and refusal["detail"], bad[:40]
        numbered = await peer.request({"type": "chat:prompt", "chatId": chat_id, "text": ""})
        assert numbered["error"] == "INVALID" and "text" in numbered["detail"]
        assert (await peer.resync(chat_id))["accepted"]
        assert peer.closed is None
    bad_open = await kernel.request({"type": "chat:open", "command": "not a list"})
    assert bad_open["error"] == "INVALID" and "command" in bad_open["detail"]
    unknown = await kernel.request({"type": "chat:open", "agent": "nonesuch"})
    assert unknown["error"] == "INVALID" and "nonesuch" in unknown["detail"]
    gone = await kernel.request({"type": "chat:subscribe", "chatId": "nope"})
    assert gone["error"] == "CHAT_NOT_FOUND"


@pytest.mark.acp_config(AcpNotebookApp={"allowed_agents": ["demo"], "allow_commands": False})
async def test_the_admin_allow_list(start_kernel: Any, kernel_socket: Any) -> None:
    kernel = await kernel_socket(await start_kernel())
    refused_agent = await kernel.request({"type": "chat:open", "agent": "claude-code"})
    assert refused_agent["error"] == "FORBIDDEN" and "claude-code" in refused_agent["detail"]
    refused_command = await kernel.request({"type": "chat:open", "command": ["/bin/sh"]})
    assert refused_command["error"] == "FORBIDDEN" and "command" in refused_command["detail"]
    unknown = await kernel.request({"type": "chat:open", "agent": "nonesuch"})
    assert unknown["error"] == "FORBIDDEN"
    await open_demo(kernel)


@pytest.mark.acp_config(ServerApp={"identity_provider_class": TwoUsers})
async def test_only_the_owner_may_answer(
    start_kernel: Any,
    cells: Any,
    browser: Any,
    jp_serverapp: ServerApp,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Under JupyterHub the server, and so every kernel it starts, belongs to this user.
    monkeypatch.setenv("JUPYTERHUB_USER", "alice")
    kernel_id = await start_kernel()
    out = await (await cells(kernel_id)).run(OPEN_CHAT + 'chat.send_prompt("ask-user")')
    chat_id = json.loads(out.split("chat:", 1)[1])["chat"]

    alice_token = jp_serverapp.identity_provider.token
    alice = await browser(kernel_id, chat_id, {"Authorization": f"token {alice_token}"})
    bob = await browser(kernel_id, chat_id, {"Authorization": "token bob"})
    for tab in (alice, bob):
        await tab.resync(chat_id)  # both may watch
    card = await bob.event(chat_id, "elicitation_request")
    answer = {
        "type": "chat:elicitation.respond",
        "chatId": chat_id,
        "requestId": card["requestId"],
        "action": "decline",
    }
    forbidden = await bob.request(answer)
    assert forbidden["error"] == "FORBIDDEN"
    assert (await bob.request({"type": "chat:cancel", "chatId": chat_id}))["error"] == "FORBIDDEN"
    assert (await alice.request(answer))["accepted"]
    resolved = await bob.event(chat_id, "elicitation_resolved", requestId=card["requestId"])
    assert resolved["by"] == "alice" and resolved["outcome"] == "declined"


async def test_expected_failures_log_no_traceback(
    start_kernel: Any,
    kernel_socket: Any,
    ws_url: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    kernel = await kernel_socket(await start_kernel())
    missing = await open_demo(kernel, command=["/nonexistent/acp-agent"])
    crashing = await open_demo(kernel, command=DEMO_FAULTS)
    for chat_id in (missing, crashing):
        assert (await kernel.request({"type": "chat:subscribe", "chatId": chat_id}))["accepted"]
    exited = await kernel.event(missing, "agent_status", status="exited")
    assert "could not start" in exited["detail"]
    await kernel.event(crashing, "agent_status", status="ready")
    prompt = {"type": "chat:prompt", "chatId": crashing, "text": "crash"}
    assert (await kernel.request(prompt))["accepted"]
    assert (await kernel.event(crashing, "agent_status", status="exited"))["exitCode"] == 3
    assert (await kernel.event(crashing, "turn_ended", turn=1))["error"]
    kernel.send_raw("{not json")
    assert (await kernel.refusal())["error"] == "INVALID"
    assert await refused(ws_url("acp-notebook/ws/kernel"), {}) == 403

    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert any("refused a kernel socket" in r.getMessage() for r in caplog.records)
