"""One chat, pages without end (issue 12: every hostile input bounded). Each page's socket
holds a queue of up to 32 MB and the resync being written to it (the whole history); a
page opening sockets in a loop cost the server without end. A chat streams to at most
``MAX_PAGES`` pages at once; one more is closed (4029) and the widget retries later.

The server fixtures are ``tests/server``'s (imported, not copied).
"""

from __future__ import annotations

from typing import Any

import pytest

from acp_notebook.server import handlers
from tests.server.conftest import *  # noqa: F403  (pytest-jupyter's and tests/server's fixtures)
from tests.support.server_peers import DEMO, Peer


@pytest.mark.fault("pages past the cap open sockets to one chat")
async def test_pages_past_the_cap_are_closed(
    start_kernel: Any, kernel_socket: Any, browser: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(handlers, "MAX_PAGES", 3)
    kernel_id = await start_kernel()
    kernel: Peer = await kernel_socket(kernel_id)
    chat_id = (await kernel.request({"type": "chat:open", "agent": "demo", "env": DEMO}))["chatId"]
    # The kernel's own subscription is not a page.
    assert (await kernel.request({"type": "chat:subscribe", "chatId": chat_id}))["accepted"]
    pages = [await browser(kernel_id, chat_id) for _ in range(3)]
    for page in pages:
        await page.resync(chat_id)
    extra: Peer = await browser(kernel_id, chat_id)
    assert await extra.wait_closed() == (handlers.FULL, "3 pages follow this chat already")
    # The pages in are served as before; one leaving makes room.
    ack = await pages[0].request({"type": "chat:prompt", "chatId": chat_id, "text": "hi"})
    assert ack.get("accepted"), ack
    for page in pages:
        await page.event(chat_id, "turn_ended", turn=1)
    pages[0].close()
    await pages[0].wait_closed()
    again: Peer = await browser(kernel_id, chat_id)
    await again.resync(chat_id)
    assert again.closed is None
    for peer in (*pages[1:], again, kernel):
        peer.close()
