"""The real opencode (``opencode acp``, pinned in package.json) through our bridge.

opencode asks only through ``session/request_permission`` (it has no elicitation call
site; reference §8). The model is the mock Chat Completions API.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.bridge import file_requests
from acp_notebook.kernel.chat import Chat
from acp_notebook.notebook_tools.text_files import DiskFiles
from tests.support.chat_waits import finish, next_pending, ready
from tests.support.mock_openai import MockOpenAI, function_call, text

pytestmark = pytest.mark.usefixtures("opencode_bin")

OpenChat = Callable[..., Chat]


async def test_named_agent_starts(opencode_chat: OpenChat) -> None:
    chat = opencode_chat()
    await ready(chat)
    assert chat.state["agent"]["info"] == {"name": "OpenCode", "version": "1.18.33"}


async def test_an_allowed_edit_is_written_once_and_asked_once(
    opencode_chat: OpenChat,
    mock_openai: MockOpenAI,
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """opencode, its edit allowed, sends the edited file to fs/write_text_file and writes it
    itself: the client answers without a second card and without writing it again."""
    target = workdir / "notes.md"
    target.write_text("alpha\n")
    writes: list[str] = []
    real_write = DiskFiles.write

    async def counted(self: DiskFiles, path: str, before: str | None, after: str) -> str:
        writes.append(path)
        return await real_write(self, path, before, after)

    monkeypatch.setattr(DiskFiles, "write", counted)
    asked: list[Any] = []
    real_request = file_requests.write_text_file

    async def request(files: Any, params: Any, *args: Any) -> Any:
        asked.append(params["path"])
        return await real_request(files, params, *args)

    monkeypatch.setattr(file_requests, "write_text_file", request)
    edit = {"filePath": str(target), "oldString": "alpha", "newString": "beta"}
    mock_openai.on_prompt("Edit the notes", function_call("edit", edit, "call_edit"))
    mock_openai.on_output("call_edit", text("Edited"))
    chat = opencode_chat()
    await ready(chat)
    turn = asyncio.ensure_future(chat.ask("Edit the notes"))
    request = await next_pending(chat, "permission")
    assert request["toolCall"]["kind"] == "edit"
    chat.allow(request["requestId"])
    done = await finish(turn)
    assert done.ok and done.text == "Edited", done.text
    assert target.read_text() == "beta\n"
    # One card (opencode's own), no review of the client's write, no write of ours.
    cards = [i for i in chat.state["items"] if i.get("type") == "permission"]
    assert len(cards) == 1, cards
    assert asked == [str(target)]  # opencode did send it
    assert writes == []
    assert mock_openai.unmatched == []
