"""The real codex-acp (pinned in package.json) through our bridge and Python API.

Codex runs against the mock Responses API; each case checks what the model got back
(the ``function_call_output`` of the next request) and what landed on disk.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from acp_notebook.kernel.chat import Chat
from tests.support.chat_waits import ready

pytestmark = pytest.mark.usefixtures("codex_bin")

OpenChat = Callable[..., Chat]


async def test_session_starts_with_codex_modes(codex_chat: OpenChat) -> None:
    chat = codex_chat(mode="read-only")
    await ready(chat)
    assert chat.state["agent"]["info"]["name"] == "@agentclientprotocol/codex-acp"
    modes = chat.state["modes"]
    assert modes["currentModeId"] == "read-only"
    assert {"read-only", "workspace-write", "agent"} <= {m["id"] for m in modes["availableModes"]}
