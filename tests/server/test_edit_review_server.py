"""The review of notebook edits in server mode: the hub in the Jupyter server asks, the
kernel's ``chat.on_edit`` answers over its socket; ``chat.accept_edits`` set from the
kernel reaches the server's chat and comes back folded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from acp_notebook.server.app import AcpNotebookApp
from acp_notebook.wire.contracts import CellEdit
from acp_notebook.wire.review import Review
from tests.support.server_peers import OPEN_CHAT

EDIT: CellEdit = {
    "op": "insert",
    "path": "a.ipynb",
    "cellType": "code",
    "index": 0,
    "before": "",
    "after": "print(1)",
}


async def test_the_kernels_edit_policy_and_setting(
    start_kernel: Any, extension: AcpNotebookApp, cells: Callable[[str], Any]
) -> None:
    kernel_id = await start_kernel()
    kernel = await cells(kernel_id)
    policy = 'chat.on_edit(lambda edit: "reject" if edit["index"] == 0 else None)\n'
    out = await kernel.run(OPEN_CHAT + policy)
    chat_id = json.loads(out.split("chat:", 1)[1])["chat"]
    hub = extension.hubs.get(kernel_id)
    assert hub is not None
    session = hub.chats[chat_id].session
    review = await asyncio.wait_for(session.review_edit(EDIT), 20)
    assert review == Review(False, "rejected by kernel")
    out = await kernel.run(
        "import time\n"
        "chat.accept_edits = True\n"
        "while not chat.accept_edits:\n"
        "    time.sleep(0.02)\n"
        "print(chat.accept_edits, chat.state.get('acceptEdits'))\n"
    )
    assert out.strip() == "True True"
    assert session.accept_edits is True
    accepted = await session.review_edit({**EDIT, "index": 1})
    assert accepted == Review(True, "accepted by the chat's accept-edits setting")
