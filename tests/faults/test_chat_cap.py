"""Chats opened without end (issue 12: every hostile input bounded). Each chat is an agent
process and a history of megabytes; a page posting to the REST endpoint in a loop, or a
kernel sending ``chat:open``, started as many as it liked. The server holds at most
``AcpNotebookApp.max_chats`` open, over all kernels and users, and refuses more with
TOO_MANY_CHATS (HTTP 429) until one is closed.

The server fixtures are ``tests/server``'s (imported, not copied).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from acp_notebook.server.app import AcpNotebookApp
from tests.server.conftest import *  # noqa: F403  (pytest-jupyter's and tests/server's fixtures)
from tests.support.processes import all_gone
from tests.support.server_peers import DEMO, Peer


async def post_chat(jp_fetch: Any, kernel_id: str) -> tuple[int, dict[str, Any]]:
    """The status and JSON body of ``POST acp-notebook/api/chats`` for a demo chat."""
    body = json.dumps({"kernel": kernel_id, "agent": "demo"})
    try:
        response = await jp_fetch("acp-notebook", "api", "chats", method="POST", body=body)
    except HTTPClientError as failure:
        assert failure.response is not None
        return failure.code, json.loads(failure.response.body)
    return response.code, json.loads(response.body)


@pytest.mark.fault("chats opened past the server's cap, from a page (REST) and from kernels")
@pytest.mark.acp_config(AcpNotebookApp={"max_chats": 3})
async def test_chats_past_the_cap_are_refused(
    jp_fetch: Any,
    start_kernel: Any,
    kernel_socket: Any,
    extension: AcpNotebookApp,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in DEMO.items():  # agents the server starts get its environment
        monkeypatch.setenv(name, value)
    kernels = [await start_kernel(), await start_kernel()]
    first: Peer = await kernel_socket(kernels[0])
    opened = [(await first.request({"type": "chat:open", "agent": "demo", "env": DEMO}))["chatId"]]
    for kernel_id in kernels:
        status, body = await post_chat(jp_fetch, kernel_id)
        assert status == 201, body
        opened.append(body["chatId"])

    # The cap counts every kernel's chats: neither kernel nor page gets a fourth.
    status, body = await post_chat(jp_fetch, kernels[1])
    assert status == 429 and "max_chats" in body["message"], body
    second: Peer = await kernel_socket(kernels[1])
    ack = await second.request({"type": "chat:open", "agent": "demo", "env": DEMO})
    assert ack["error"] == "TOO_MANY_CHATS" and "close one" in ack["detail"], ack
    hubs = [extension.hubs.get(k) for k in kernels]
    assert sum(len(hub.chats) for hub in hubs if hub is not None) == 3
    # Nothing lost: the open chats still work.
    hub = extension.hubs.get(kernels[0])
    assert hub is not None
    await hub.chats[opened[0]].start_task
    assert hub.chats[opened[0]].session.status == "ready"

    # A closed chat, or a shut-down kernel, makes room.
    pid = hub.chats[opened[0]].session.conn.pid
    assert (await first.request({"type": "chat:close", "chatId": opened[0]}))["accepted"]
    await all_gone([pid], pid)
    ack = await second.request({"type": "chat:open", "agent": "demo", "env": DEMO})
    assert ack.get("accepted"), ack
    await jp_fetch("api", "kernels", kernels[1], method="DELETE")
    for _ in range(2):
        status, body = await post_chat(jp_fetch, kernels[0])
        assert status == 201, body
    assert (await post_chat(jp_fetch, kernels[0]))[0] == 429
    first.close()
    second.close()
