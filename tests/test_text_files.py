"""Reads and writes through the client (fs/*): path confinement, line/limit, bounds,
the review of a write, and the demo agent's round trip on an in-process hub."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from acp import schema
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from pydantic import TypeAdapter

from acp_notebook.agent.handshake import initialize_params
from acp_notebook.bridge import file_requests
from acp_notebook.bridge.chat_session import SessionConfig
from acp_notebook.bridge.edit_review import edit_title, edited_paths
from acp_notebook.bridge.hub import Hub, HubConfig
from acp_notebook.notebook_tools import text_files
from acp_notebook.notebook_tools.page_document import IN_EDITOR, IN_NOTEBOOK, Pages
from acp_notebook.notebook_tools.text_files import DiskFiles, ServerFiles, confine
from acp_notebook.wire.contracts import MAX_FILE_TEXT, FileEdit, PermissionRequestEvent
from acp_notebook.wire.review import Review
from acp_notebook.wire.text_files import FileRefused, OpenText, select_lines
from tests.support.editor_pages import EditorPage
from tests.support.hub_chats import open_demo


def test_confine_keeps_paths_under_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    real_root = os.path.realpath(root)
    assert confine(str(root), str(root / "sub" / "a.txt")) == (
        os.path.join(real_root, "sub", "a.txt"),
        "sub/a.txt",
    )
    with pytest.raises(FileRefused, match="is not an absolute path"):
        confine(str(root), "sub/a.txt")
    with pytest.raises(FileRefused, match=f"is outside {real_root}"):
        confine(str(root), str(root / ".." / "elsewhere.txt"))
    with pytest.raises(FileRefused, match="is outside"):
        confine(str(root), str(tmp_path / "rootless.txt"))  # a prefix is not a parent
    # A symlink that leads out is outside, as what it leads to is.
    (tmp_path / "secret.txt").write_text("s")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(FileRefused, match="is outside"):
        confine(str(root), str(root / "link.txt"))


def test_select_lines_honours_line_and_limit() -> None:
    text = "one\ntwo\nthree\nfour"
    assert select_lines(text, None, None) == text
    assert select_lines(text, 2, None) == "two\nthree\nfour"
    assert select_lines(text, 2, 2) == "two\nthree\n"
    assert select_lines(text, None, 1) == "one\n"
    assert select_lines(text, 9, 2) == ""
    with pytest.raises(FileRefused, match="at least 1"):
        select_lines(text, 0, None)
    with pytest.raises(FileRefused, match="at least 1"):
        select_lines(text, 1, 0)
    big = "x\n" * (MAX_FILE_TEXT // 2 + 1)
    with pytest.raises(FileRefused, match="read fewer lines"):
        select_lines(big, None, None)
    assert select_lines(big, 1, 10) == "x\n" * 10


async def test_disk_files_read_and_bounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = DiskFiles(str(tmp_path))
    missing = await files.read(str(tmp_path / "new.txt"))
    assert (missing.path, missing.text, missing.where) == ("new.txt", None, None)
    (tmp_path / "a.txt").write_text("héllo\n", encoding="utf-8")
    assert (await files.read(str(tmp_path / "a.txt"))).text == "héllo\n"
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(FileRefused, match="not a UTF-8 text file"):
        await files.read(str(tmp_path / "bin"))
    with pytest.raises(FileRefused, match="is not a file"):
        await files.read(str(tmp_path))
    monkeypatch.setattr(text_files, "MAX_FILE_BYTES", 4)
    with pytest.raises(FileRefused, match=r"a\.txt is 7 bytes; at most 4 are read"):
        await files.read(str(tmp_path / "a.txt"))


async def test_disk_files_write_only_over_what_was_reviewed(tmp_path: Path) -> None:
    files = DiskFiles(str(tmp_path))
    target = tmp_path / "d" / "new.txt"
    assert await files.write(str(target), None, "made\n") == "the file on disk"
    assert target.read_text() == "made\n"
    with pytest.raises(FileRefused, match="changed since the write was reviewed"):
        await files.write(str(target), "something else", "over\n")
    assert target.read_text() == "made\n"
    with pytest.raises(FileRefused, match="is outside"):
        await files.write("/etc/passwd-acp-test", None, "no")
    assert sorted(os.listdir(target.parent)) == ["new.txt"]  # no temporary left


def test_initialize_advertises_fs_only_when_served() -> None:
    assert initialize_params(True)["clientCapabilities"]["fs"] == {
        "readTextFile": True,
        "writeTextFile": True,
    }
    served = initialize_params(False)["clientCapabilities"]
    assert served["fs"] == {"readTextFile": False, "writeTextFile": False}
    assert served["elicitation"] == {"form": {}, "url": {}}


def test_a_file_edit_card_and_the_paths_a_tool_call_names() -> None:
    edit: FileEdit = {"op": "write", "path": "a.md", "before": "", "after": "x", "created": True}
    assert edit_title(edit) == "Create a.md"
    assert edit_title({**edit, "created": False}) == "Write a.md"
    call = {
        "kind": "edit",
        "locations": [{"path": "/r/a.md"}],
        "content": [{"type": "diff", "path": "/r/b.md"}, {"type": "text"}],
        "rawInput": {"filepath": "/r/c.md"},
    }
    assert edited_paths(call) == {"/r/a.md", "/r/b.md", "/r/c.md"}
    assert edited_paths({**call, "kind": "read"}) == set()  # a read allowed is no write
    assert edited_paths(None) == set()


async def test_a_write_of_what_the_file_holds_asks_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("same")
    asked: list[FileEdit] = []

    async def review(edit: FileEdit) -> Review:
        asked.append(edit)
        return Review(False, "rejected by Alice")

    params = {"path": str(tmp_path / "a.txt"), "content": "same"}
    files = DiskFiles(str(tmp_path))
    assert await file_requests.write_text_file(files, params, review, lambda p: False) == {}
    assert asked == []
    with pytest.raises(FileRefused, match="Not written: rejected by Alice"):
        await file_requests.write_text_file(
            files, {**params, "content": "new"}, review, lambda p: False
        )
    assert asked[0]["before"] == "same" and asked[0]["after"] == "new"
    assert (tmp_path / "a.txt").read_text() == "same"
    with pytest.raises(FileRefused, match="content must be a string"):
        await file_requests.write_text_file(files, {"path": params["path"]}, review, bool)
    with pytest.raises(FileRefused, match="path must be"):
        await file_requests.read_text_file(files, {"path": 3})
    with pytest.raises(FileRefused, match="line must be an integer"):
        await file_requests.read_text_file(files, {"path": params["path"], "line": True})
    assert await file_requests.read_text_file(files, {"path": params["path"], "limit": 1}) == {
        "content": "same"
    }
    with pytest.raises(FileRefused, match="no such file"):
        await file_requests.read_text_file(files, {"path": str(tmp_path / "b")})


async def test_a_write_allowed_already_waits_for_the_agent_to_write_it(tmp_path: Path) -> None:
    """opencode: its permission allowed, it asks the client to write and writes itself."""
    target = tmp_path / "a.txt"
    target.write_text("old")
    writes: list[str] = []
    files = DiskFiles(str(tmp_path))
    real_write = files.write

    async def counted(path: str, before: str | None, after: str) -> str:
        writes.append(after)
        return await real_write(path, before, after)

    files.write = counted  # type: ignore[method-assign]

    async def review(edit: FileEdit) -> Review:
        raise AssertionError("asked twice")

    params = {"path": str(target), "content": "new"}
    write = asyncio.create_task(
        file_requests.write_text_file(files, params, review, lambda p: p == str(target))
    )
    await asyncio.sleep(0.2)
    target.write_text("new")  # the agent's own write
    assert await write == {}
    assert writes == []
    # Allowed, and the agent never writes it: the client does, after the wait.
    assert (
        await file_requests.write_text_file(
            files, {**params, "content": "newer"}, review, lambda p: True
        )
        == {}
    )
    assert writes == ["newer"] and target.read_text() == "newer"


@pytest.fixture
async def files_hub() -> AsyncIterator[Hub]:
    h = Hub(HubConfig(session=SessionConfig(answer_timeout=30)), text_files=DiskFiles)
    yield h
    await h.close()


async def _prompt(hub: Hub, chat_id: str, text: str) -> None:
    ack = await hub.handle({"type": "chat:prompt", "chatId": chat_id, "text": text, "id": 1})
    assert ack.get("accepted"), ack


async def test_the_demo_agent_reads_and_writes_through_the_client(
    files_hub: Hub, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n")
    chat_id, rec = await open_demo(files_hub, cwd=str(tmp_path))
    conn = files_hub.chats[chat_id].session.conn
    answers: list[dict[str, Any]] = []
    write = conn._write

    def spy(data: bytes) -> None:
        frame = json.loads(data)
        if "result" in frame or "error" in frame:
            answers.append(frame)
        write(data)

    conn._write = spy  # type: ignore[method-assign]
    await _prompt(files_hub, chat_id, "edit-file")
    card: Any = await rec.kind("permission_request")
    assert card["toolCall"]["title"] == "Write notes.md"
    edit = card["edit"]
    assert edit == {
        "op": "write",
        "path": "notes.md",
        "before": "# Notes\n",
        "after": "# Notes\nEdited by the demo agent.\n",
        "created": False,
        "where": None,
    }
    TypeAdapter(PermissionRequestEvent).validate_python(card)  # the wire's shape
    respond = {
        "type": "chat:permission.respond",
        "chatId": chat_id,
        "requestId": card["requestId"],
        "optionId": "accept",
    }
    assert (await files_hub.handle(respond))["accepted"]
    await rec.kind("turn_ended", turn=1)
    assert "edit-file: read 1 lines of notes.md." in rec.text()
    assert "edit-file: written." in rec.text()
    assert notes.read_text() == "# Notes\nEdited by the demo agent.\n"

    # What the file holds already: no card, no write.
    await _prompt(files_hub, chat_id, "edit-file-same")
    await rec.kind("turn_ended", turn=2)
    assert len(rec.of("permission_request")) == 1
    assert rec.text().count("edit-file: written.") == 2

    # Rejected: nothing written, the agent hears why.
    await _prompt(files_hub, chat_id, "edit-file")
    card = await rec.until(
        lambda e: e["kind"] == "permission_request" and e["requestId"] != card["requestId"]
    )
    assert (
        await files_hub.handle({**respond, "requestId": card["requestId"], "optionId": "reject"})
    )["accepted"]
    await rec.kind("turn_ended", turn=3)
    assert "edit-file: error -32602: Not written: rejected" in rec.text()
    assert notes.read_text() == "# Notes\nEdited by the demo agent.\n"

    # Outside the root: refused, with the reason.
    await _prompt(files_hub, chat_id, "edit-file /etc/hostname")
    await rec.kind("turn_ended", turn=4)
    assert "edit-file: error -32602: /etc/hostname is outside" in rec.text()
    assert len(rec.of("permission_request")) == 2
    # Our answers are ACP's: a read's content, a write's empty result, errors.
    results = [a["result"] for a in answers if "result" in a]
    for result in results:
        model = schema.ReadTextFileResponse if "content" in result else schema.WriteTextFileResponse
        model.model_validate(result)
    edited = {"content": "# Notes\nEdited by the demo agent.\n"}
    assert results == [{"content": "# Notes\n"}, {}, edited, {}, edited]
    assert [a["error"]["code"] for a in answers if "error" in a] == [-32602, -32602]

    # The chat's "accept edits" setting covers writes as it covers notebook edits.
    files_hub.chats[chat_id].session.set_accept_edits(True)
    await _prompt(files_hub, chat_id, "edit-file")
    await rec.kind("turn_ended", turn=5)
    assert notes.read_text() == "# Notes\n" + "Edited by the demo agent.\n" * 2
    assert len(rec.of("permission_request")) == 2


async def test_server_files_read_and_write_what_an_editor_holds(tmp_path: Path) -> None:
    contents = AsyncLargeFileManager(root_dir=str(tmp_path))
    pages = Pages()
    files = ServerFiles(contents, str(tmp_path), pages)
    (tmp_path / "open.py").write_text("saved\n")
    (tmp_path / "closed.py").write_text("on disk\n")
    page = EditorPage(pages, {"open.py": "saved\nunsaved\n"})

    opened = await files.read(str(tmp_path / "open.py"))
    assert opened == ("open.py", "saved\nunsaved\n", IN_EDITOR, None)
    assert await file_requests.read_text_file(
        files, {"path": str(tmp_path / "open.py"), "line": 2, "limit": 1}
    ) == {"content": "unsaved\n"}
    where = await files.write(str(tmp_path / "open.py"), "saved\nunsaved\n", "agent\n")
    assert where == IN_EDITOR
    assert page.buffers["open.py"] == "agent\n"
    assert (tmp_path / "open.py").read_text() == "saved\n"  # nothing saved behind the page

    # The person typed between the review and the write: refused, their text kept.
    with pytest.raises(FileRefused, match="changed since the write was reviewed"):
        await files.write(str(tmp_path / "open.py"), "saved\nunsaved\n", "again\n")

    # Not open anywhere: the contents manager.
    closed = await files.read(str(tmp_path / "closed.py"))
    assert closed == ("closed.py", "on disk\n", None, None)
    assert await files.write(str(tmp_path / "closed.py"), "on disk\n", "new\n") == "the saved file"
    assert (tmp_path / "closed.py").read_text() == "new\n"
    assert await files.write(str(tmp_path / "sub" / "n.txt"), None, "n\n") == "the saved file"
    with pytest.raises(FileRefused, match="is outside"):
        await files.read("/etc/hostname")
    with pytest.raises(FileRefused, match="is not a file"):
        await files.read(str(tmp_path))


async def test_a_notebook_open_in_a_page_is_read_as_it_is_there_and_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages = Pages()
    files = ServerFiles(AsyncLargeFileManager(root_dir=str(tmp_path)), str(tmp_path), pages)
    (tmp_path / "a.ipynb").write_text('{\n "cells": []\n}\n')
    # The page's model, with an unsaved cell: read as nbformat writes it, as a save would.
    model = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("unsaved = 1", id="c")])
    model.cells[0].metadata["trusted"] = True  # the page's own; a saved file never has it
    live = nbformat.writes(model) + "\n"  # nbformat.write's final newline, as a save has
    assert '"trusted"' not in live
    EditorPage(pages, {}, {"a.ipynb": model})
    path = str(tmp_path / "a.ipynb")

    opened = await files.read(path)
    assert opened[:3] == ("a.ipynb", live, IN_NOTEBOOK)
    assert opened.unwritable == "a.ipynb is open as a notebook in a page: " + (
        "change it with the notebook tools (insert_cell, edit_cell, ...), not by writing the file"
    )
    line = live.splitlines().index('    "unsaved = 1"') + 1
    assert await file_requests.read_text_file(files, {"path": path, "line": line, "limit": 1}) == {
        "content": '    "unsaved = 1"\n'
    }
    # Written behind the page, the notebook would raise "file changed on disk": refused,
    # before anyone is asked to review it.
    with pytest.raises(FileRefused, match="open as a notebook in a page"):
        await files.write(path, live, "[]")

    async def review(edit: FileEdit) -> Review:
        raise AssertionError("nobody is asked")

    with pytest.raises(FileRefused, match="open as a notebook in a page"):
        await file_requests.write_text_file(
            files, {"path": path, "content": "[]"}, review, lambda path: False
        )
    # Writing back what the page holds is answered at once, as for any file.
    assert (
        await file_requests.write_text_file(
            files, {"path": path, "content": live}, review, lambda path: False
        )
        == {}
    )
    assert (tmp_path / "a.ipynb").read_text() == '{\n "cells": []\n}\n'
    # The size bound of a file on disk holds for the page's text too.
    monkeypatch.setattr(text_files, "MAX_FILE_BYTES", len(live) - 1)
    with pytest.raises(FileRefused, match=f"a.ipynb is {len(live):,} bytes"):
        await files.read(path)


class BrokenFiles:
    """File access that fails in a way nobody planned for."""

    async def read(self, path: str) -> OpenText:
        raise RuntimeError("disk on fire")

    async def write(self, path: str, before: str | None, after: str) -> str:
        raise AssertionError("never reached")


async def test_a_failure_of_the_file_access_still_answers_the_agent(tmp_path: Path) -> None:
    hub = Hub(
        HubConfig(session=SessionConfig(answer_timeout=30)), text_files=lambda cwd: BrokenFiles()
    )
    try:
        chat_id, rec = await open_demo(hub, cwd=str(tmp_path))
        await _prompt(hub, chat_id, "edit-file")
        await rec.kind("turn_ended", turn=1)
        assert "edit-file: error -32603: fs/read_text_file failed: disk on fire" in rec.text()
    finally:
        await hub.close()
