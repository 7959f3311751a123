"""A kernel's frame is read once (issues 11 and 12): the kernel socket read it to route it
(answers to the server's queries, the owner of a chat it opens), then the hub wrote it
back to text and read it again, size checks and all; a prompt of a megabyte cost two
parses.

The server fixtures are ``tests/server``'s (imported, not copied).
"""

from __future__ import annotations

from typing import Any

import pytest

from acp_notebook.wire import bounded_json
from tests.server.conftest import *  # noqa: F403  (pytest-jupyter's and tests/server's fixtures)
from tests.support.server_peers import Peer

MARK = "read-me-once"


@pytest.mark.fault("a kernel's frame parsed twice (socket, then hub)")
async def test_a_kernel_frame_is_read_once(
    start_kernel: Any, kernel_socket: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    real = bounded_json.loads

    def counted(text: Any, *args: Any, **kwargs: Any) -> Any:
        if MARK in (text.decode(errors="replace") if isinstance(text, bytes) else str(text)):
            reads.append(str(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(bounded_json, "loads", counted)
    kernel: Peer = await kernel_socket(await start_kernel())
    # Answered as before: each request once, with its own error.
    ack = await kernel.request({"type": "chat:cancel", "chatId": MARK})
    assert ack["error"] == "CHAT_NOT_FOUND", ack
    assert len(reads) == 1, reads
    ack = await kernel.request({"type": "chat:open", "agent": MARK * 20})
    assert ack["error"] == "INVALID" and "agent" in ack["detail"], ack
    kernel.send_raw('{"type": "chat:cancel", "chatId": "' + MARK + '"')  # not JSON
    refusal = await kernel.refusal()
    assert refusal["error"] == "INVALID", refusal
    assert len(reads) == 3, reads
    kernel.close()
