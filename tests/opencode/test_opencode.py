"""The real opencode (``opencode acp``, pinned in package.json) through our bridge.

opencode asks only through ``session/request_permission`` (it has no elicitation call
site; reference §8). The model is the mock Chat Completions API.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from acp_notebook.kernel.chat import Chat
from tests.support.chat_waits import ready

pytestmark = pytest.mark.usefixtures("opencode_bin")

OpenChat = Callable[..., Chat]


async def test_named_agent_starts(opencode_chat: OpenChat) -> None:
    chat = opencode_chat()
    await ready(chat)
    assert chat.state["agent"]["info"] == {"name": "OpenCode", "version": "1.18.33"}
