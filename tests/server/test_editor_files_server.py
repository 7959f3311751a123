"""Reads and writes through the client in server mode: a kernel's chat whose agent (the
demo's ``edit-file``) reads and writes under the server's root: a closed file through the
contents manager, a file open in a page's editor there (a stand-in page on the server's
page registry), a notebook open in a page read as it is there and not written, anything
outside the root refused; the kernel's ``chat.on_edit`` reviews the write as it reviews
notebook edits."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat

from acp_notebook.server.app import AcpNotebookApp
from tests.support.editor_pages import EditorPage
from tests.support.server_peers import kernel_chat_session

ADDED = "Edited by the demo agent.\n"


async def turn_text(session: Any, turn: int) -> str:
    """The agent's text once turn ``turn`` has ended (from the chat's history)."""
    for _ in range(400):
        events = session.history.events()
        if any(e["kind"] == "turn_ended" and e.get("turn") == turn for e in events):
            return "".join(
                e["update"]["content"].get("text", "")
                for e in events
                if e["kind"] == "update"
                and e["update"].get("sessionUpdate") == "agent_message_chunk"
            )
        await asyncio.sleep(0.05)
    raise AssertionError(f"turn {turn} did not end")


async def test_reads_and_writes_under_the_servers_root(
    start_kernel: Any,
    extension: AcpNotebookApp,
    cells: Callable[[str], Any],
    jp_root_dir: Path,
) -> None:
    kernel_id = await start_kernel()
    policy = 'chat.on_edit(lambda edit: "accept" if edit["op"] == "write" else None)\n'
    session = await kernel_chat_session(extension, await cells(kernel_id), kernel_id, policy)

    # A closed file: read from and written through the contents manager.
    (jp_root_dir / "closed.md").write_text("# Closed\n")
    session.prompt(f"edit-file {jp_root_dir}/closed.md")
    text = await turn_text(session, 1)
    assert "edit-file: written." in text, text
    assert (jp_root_dir / "closed.md").read_text() == "# Closed\n" + ADDED

    # A file open in a page's editor: its unsaved text is read and the write lands there.
    (jp_root_dir / "open.md").write_text("# Open\n")
    page = EditorPage(extension.pages, {"open.md": "# Open\nunsaved\n"})
    session.prompt(f"edit-file {jp_root_dir}/open.md")
    text = await turn_text(session, 2)
    assert "edit-file: read 2 lines of open.md." in text, text
    assert page.buffers["open.md"] == "# Open\nunsaved\n" + ADDED
    assert (jp_root_dir / "open.md").read_text() == "# Open\n"

    # Outside the root: refused, saying why; nothing asked.
    session.prompt("edit-file /etc/hostname")
    text = await turn_text(session, 3)
    assert "edit-file: error -32602: /etc/hostname is outside" in text, text

    # A notebook open in a page: read as the page has it (its text as saved); a write is
    # refused before any card.
    (jp_root_dir / "open.ipynb").write_text('{\n "cells": []\n}\n')
    live = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("unsaved", id="u")])
    EditorPage(extension.pages, {}, {"open.ipynb": live})
    session.prompt(f"edit-file {jp_root_dir}/open.ipynb")
    text = await turn_text(session, 4)
    lines = len(nbformat.writes(live).splitlines())
    assert f"edit-file: read {lines} lines of open.ipynb." in text, text
    assert "is open as a notebook in a page" in text, text
    assert (jp_root_dir / "open.ipynb").read_text() == '{\n "cells": []\n}\n'
    reviews = [e for e in session.history.events() if e["kind"] == "permission_request"]
    assert [e["edit"]["path"] for e in reviews] == ["closed.md", "open.md"]
