"""The shared document path (real-time collaboration on): the agent's edits go into the
server's shared notebook with no page open, reach the file as RTC saves it, a stale edit
is refused, and a run writes its outputs and execution count into the shared cell."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any, cast

import nbformat
import pytest
from nbformat.reader import NotJSONError

from acp_notebook.notebook_tools.documents import EditRefused
from acp_notebook.notebook_tools.shared_document import SharedDocument, SharedDocuments
from acp_notebook.server.app import AcpNotebookApp
from acp_notebook.wire.contracts import CellEdit

pytestmark = pytest.mark.rtc

AGENT = "Demo agent"


@pytest.fixture
def shared(extension: AcpNotebookApp) -> SharedDocuments:
    # The extension builds the source when the server loads jupyter_server_ydoc.
    assert extension.shared_documents is not None
    return extension.shared_documents


def write(root: Path, name: str, sources: list[str]) -> str:
    cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), root / name)
    return name


async def opened(shared: SharedDocuments, path: str) -> SharedDocument:
    document = await shared.open(path, AGENT)
    assert document is not None
    return document


def edit(path: str, op: str, index: int, before: str, after: str, **more: Any) -> CellEdit:
    fields = {"op": op, "path": path, "cellType": "code", "index": index, "before": before}
    return cast(CellEdit, {**fields, "after": after, **more})


async def saved(root: Path, path: str, until: Any) -> nbformat.NotebookNode:
    """The file once ``until(notebook)`` holds (RTC saves a second after a change)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            notebook = nbformat.read(root / path, as_version=4)
        except NotJSONError:  # read while the save writes it
            notebook = None
        if notebook is not None and until(notebook):
            return notebook
        assert time.monotonic() < deadline, f"not saved: {notebook}"
        await asyncio.sleep(0.2)


async def test_an_insert_with_no_page_open_reaches_the_shared_document_and_the_file(
    shared: SharedDocuments, jp_root_dir: Path
) -> None:
    path = write(jp_root_dir, "no-tab.ipynb", ["x = 1"])
    document = await opened(shared, path)
    assert [cell["source"] for cell in await document.cells()] == ["x = 1"]

    applied = await document.apply(edit(path, "insert", 1, "", "y = x + 1"))

    assert applied["index"] == 1
    cells = await document.cells()
    assert [(c["id"], c["source"]) for c in cells][1] == (applied["cellId"], "y = x + 1")
    # Every collaborator (and a page that opens later) syncs from this same model.
    notebook = await shared.notebook(path)
    assert notebook.get_cell(1)["source"] == "y = x + 1"
    # The agent is a collaborator of the room, named after it.
    user = notebook.awareness.get_local_state()["user"]
    assert (user["name"], user["display_name"]) == (AGENT, AGENT)
    on_disk = await saved(jp_root_dir, path, lambda nb: len(nb.cells) == 2)
    assert on_disk.cells[1].source == "y = x + 1"
    assert on_disk.cells[1].id == applied["cellId"]


async def test_a_stale_edit_is_refused_with_the_current_source(
    shared: SharedDocuments, jp_root_dir: Path
) -> None:
    path = write(jp_root_dir, "stale.ipynb", ["a = 1", "b = 2"])
    document = await opened(shared, path)
    first, second = (cell["id"] for cell in await document.cells())
    # Someone (a collaborator) changed the cell after the agent read it.
    await document.apply(edit(path, "edit", 0, "a = 1", "a = 10", cellId=first))

    for stale in (
        edit(path, "edit", 0, "a = 1", "a = 3", cellId=first),
        edit(path, "delete", 0, "a = 1", "", cellId=first),
        edit(path, "move", 0, "a = 1", "a = 1", cellId=first, toIndex=1),
    ):
        with pytest.raises(EditRefused, match="a = 10"):
            await document.apply(stale)
    with pytest.raises(EditRefused, match="No cell"):
        await document.apply(edit(path, "edit", 0, "", "z", cellId="gone"))
    assert [c["source"] for c in await document.cells()] == ["a = 10", "b = 2"]

    moved = await document.apply(edit(path, "move", 0, "a = 10", "a = 10", cellId=first, toIndex=1))
    assert moved == {"cellId": first, "index": 1}
    assert [c["id"] for c in await document.cells()] == [second, first]
    deleted = await document.apply(edit(path, "delete", 0, "b = 2", "", cellId=second))
    assert deleted == {"cellId": second, "index": 0}
    # A new type makes a new cell of that type, with the same id.
    markdown = {**edit(path, "edit", 0, "a = 10", "# Title", cellId=first), "cellType": "markdown"}
    assert await document.apply(cast(CellEdit, markdown)) == {"cellId": first, "index": 0}
    on_disk = await saved(jp_root_dir, path, lambda nb: nb.cells[0].cell_type == "markdown")
    assert [(c.id, c.source) for c in on_disk.cells] == [(first, "# Title")]


async def test_a_run_writes_outputs_and_execution_count_into_the_shared_cell(
    shared: SharedDocuments, jp_root_dir: Path, jp_fetch: Any
) -> None:
    path = write(jp_root_dir, "run.ipynb", ["print('to stdout')\n6 * 7"])
    document = await opened(shared, path)
    with pytest.raises(EditRefused, match="No kernel runs"):
        await document.run((await document.cells())[0]["id"], 30, progress)
    session = {"path": path, "type": "notebook", "kernel": {"name": "python3"}}
    await jp_fetch("api", "sessions", method="POST", body=json.dumps(session))
    [cell] = await document.cells()

    parts = await document.run(cell["id"], 60, progress)

    assert "42" in json.dumps(parts) and "to stdout" in json.dumps(parts)
    [cell] = await document.cells()
    assert cell["execution_count"] == 1
    [stream, result] = cell["outputs"]
    assert (stream["output_type"], stream["text"]) == ("stream", "to stdout\n")
    assert result["output_type"] == "execute_result"
    assert result["data"]["text/plain"] == "42"
    on_disk = await saved(jp_root_dir, path, lambda nb: nb.cells[0].get("outputs"))
    assert on_disk.cells[0].execution_count == 1
    assert nbformat.validate(on_disk) is None


async def progress(message: str) -> None:
    pass
