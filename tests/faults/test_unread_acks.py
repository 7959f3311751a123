"""A browser that sends requests and never reads their acks (issue 12: resource
exhaustion). A resync's ack is the chat's whole bounded history, megabytes asked for in
60 bytes: each waited in the server's buffer to that socket (100 resyncs of a 6 MB
chat: +600 MiB). Over ``MAX_UNREAD`` the server closes the socket.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from jupyter_server.serverapp import ServerApp

from acp_notebook.server.handlers import MAX_UNREAD
from tests.server.conftest import *  # noqa: F403  (pytest-jupyter's and tests/server's fixtures)
from tests.support.fault_chats import OpenKernelChat
from tests.support.memory import peak_rss, reset_peak_rss
from tests.support.server_peers import Peer

MiB = 1024 * 1024


@pytest.mark.fault("a browser sends 100 resyncs of a 6 MB chat and reads none of the acks")
async def test_a_socket_that_does_not_read_its_acks(
    jp_serverapp: ServerApp, open_kernel_chat: OpenKernelChat, browser: Any
) -> None:
    kernel_id, chat_id, _log = await open_kernel_chat()
    chat = jp_serverapp.web_app.settings["acp_notebook"].hubs.get(kernel_id).chats[chat_id]
    reader: Peer = await browser(kernel_id, chat_id)
    await reader.request({"type": "chat:prompt", "chatId": chat_id, "text": f"big {6 * MiB}"})
    await reader.event(chat_id, "turn_ended", turn=1)
    deaf: Peer = await browser(kernel_id, chat_id)
    deaf._reader.cancel()  # reads nothing from now on
    followers = len(chat.subscribers)
    before = reset_peak_rss()
    for number in range(100):
        deaf.send_raw(json.dumps({"type": "chat:resync", "chatId": chat_id, "id": number}))
    async with asyncio.timeout(30):  # closed by the server (the close handshake waits 5 s)
        while len(chat.subscribers) == followers:
            await asyncio.sleep(0.1)
    growth = peak_rss() - before
    assert growth < MAX_UNREAD + 64 * MiB, f"peak RSS grew {growth / MiB:.0f} MiB"
    # The reader is served as ever.
    assert len((await reader.resync(chat_id))["events"]) > 1
    reader.close()
