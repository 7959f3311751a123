"""A saved chat's session id (issue 12: every hostile input bounded). "Continue" sends the
``sessionId`` of a notebook's saved output, which is anyone's file, to the agent in
``session/load``: it was checked for length only, so spaces, newlines, control characters
and direction marks reached the agent. Now it is 1 to 256 visible ASCII characters, or
the request is refused with why, and no agent is started.

The server fixtures are ``tests/server``'s (imported, not copied).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from acp_notebook.kernel import transcript
from acp_notebook.server.app import AcpNotebookApp
from tests.server.conftest import *  # noqa: F403  (pytest-jupyter's and tests/server's fixtures)
from tests.support.server_peers import DEMO, Peer

BAD = ["", "a b", "s-1\n", "s-1\x00", "\u202es-1", "é", "x" * 257, 42, ["s-1"]]


@pytest.mark.fault("Continue with a bad saved session id ({how})")
@pytest.mark.parametrize("how", ["from a page (REST)", "from a kernel"])
async def test_a_bad_session_id_is_refused(
    jp_fetch: Any,
    start_kernel: Any,
    kernel_socket: Any,
    extension: AcpNotebookApp,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    for name, value in DEMO.items():  # agents the server starts get its environment
        monkeypatch.setenv(name, value)
    kernel_id = await start_kernel()
    kernel: Peer = await kernel_socket(kernel_id)
    for session_id in BAD:
        if how == "from a kernel":
            ack = await kernel.request(
                {"type": "chat:open", "agent": "demo", "env": DEMO, "loadSessionId": session_id}
            )
            assert ack["error"] == "INVALID" and "loadSessionId" in ack["detail"], ack
            continue
        body = json.dumps({"kernel": kernel_id, "agent": "demo", "loadSessionId": session_id})
        with pytest.raises(HTTPClientError) as failure:
            await jp_fetch("acp-notebook", "api", "chats", method="POST", body=body)
        assert failure.value.code == 400 and failure.value.response is not None
        message = json.loads(failure.value.response.body)["message"]
        assert message.startswith("loadSessionId: "), message
    hub = extension.hubs.get(kernel_id)
    assert hub is None or not hub.chats  # no agent started for any of them
    # A good id still opens a chat (the demo agent says it knows no such session).
    ack = await kernel.request(
        {"type": "chat:open", "agent": "demo", "env": DEMO, "loadSessionId": "0f8f-ad5b"}
    )
    assert ack.get("accepted"), ack
    kernel.close()


@pytest.mark.fault("an agent's session id that no Continue could send, in the saved output")
def test_a_bad_session_id_is_not_offered_to_continue() -> None:
    capabilities = {"loadSession": True}
    chat = {"chatId": "c", "kernelId": "k", "agent": "demo", "cwd": "/", "mode": None}
    for session_id, loadable in (("0f8f-ad5b", True), ("a b", False), ("\u202es", False)):
        snap = {"agent": {"sessionId": session_id, "capabilities": capabilities}}
        assert transcript.saved_chat(snap, chat, named=True)["canLoad"] is loadable
