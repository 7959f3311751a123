"""The edit tools' plans (pure) and the saved-file document they land in (local mode's
file, read and written with nbformat; the kernel run faked)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest

from acp_notebook.notebook_tools.cell_edits import find, plan, plan_insert
from acp_notebook.notebook_tools.cells import revision
from acp_notebook.notebook_tools.documents import EditRefused
from acp_notebook.notebook_tools.execute import Executed
from acp_notebook.notebook_tools.file_document import (
    CALLER,
    CHANGED,
    DiskStore,
    FileDocument,
    Sight,
)
from acp_notebook.notebook_tools.local_side import notebook_path
from acp_notebook.wire.contracts import MAX_EDIT_SOURCE


def edit(cells: list[dict[str, Any]] | None = None, **args: Any) -> Any:
    return plan("edit_cell", args, CELLS if cells is None else cells, "a.ipynb")


def delete(cells: list[dict[str, Any]] | None = None, **args: Any) -> Any:
    return plan("delete_cell", args, CELLS if cells is None else cells, "a.ipynb")


def move(cells: list[dict[str, Any]] | None = None, **args: Any) -> Any:
    return plan("move_cell", args, CELLS if cells is None else cells, "a.ipynb")


CELLS: list[dict[str, Any]] = [
    {"cell_type": "markdown", "id": "title", "source": "# Sales"},
    {"cell_type": "code", "id": "load", "source": "df = load()\ndf.head()"},
    {"cell_type": "code", "id": "plot", "source": "df.plot()"},
]


def test_a_cell_is_found_by_exactly_one_of_id_and_index() -> None:
    assert find(CELLS, "plot", None) == 2
    assert find(CELLS, None, 1) == 1 and find(CELLS, None, -1) == 2
    with pytest.raises(EditRefused, match="exactly one of cell_id and index"):
        find(CELLS, "plot", 2)
    with pytest.raises(EditRefused, match="exactly one"):
        find(CELLS, None, None)
    with pytest.raises(EditRefused, match="no cell has the id 'nope': read_cells shows the ids"):
        find(CELLS, "nope", None)
    with pytest.raises(EditRefused, match="index 3 is out of range: the notebook has 3 cells"):
        find(CELLS, None, 3)
    with pytest.raises(EditRefused, match="out of range"):
        find([], None, 0)


def test_an_insert_goes_at_the_end_at_an_index_or_after_a_cell() -> None:
    end = plan_insert(CELLS, "a.ipynb", "df.describe()")
    assert end == {
        "op": "insert",
        "path": "a.ipynb",
        "cellType": "code",
        "index": 3,
        "before": "",
        "after": "df.describe()",
    }
    assert plan_insert(CELLS, "a.ipynb", "x", "markdown", index=0)["index"] == 0
    after = plan_insert(CELLS, "a.ipynb", "x", after_cell_id="load")
    assert after["index"] == 2
    with pytest.raises(EditRefused, match="cell_type must be one of code, markdown, raw"):
        plan_insert(CELLS, "a.ipynb", "x", "python")
    with pytest.raises(EditRefused, match="not both"):
        plan_insert(CELLS, "a.ipynb", "x", index=1, after_cell_id="load")
    with pytest.raises(EditRefused, match=r"a new cell goes at 0..3"):
        plan_insert(CELLS, "a.ipynb", "x", index=4)
    with pytest.raises(EditRefused, match="no cell has the id"):
        plan_insert(CELLS, "a.ipynb", "x", after_cell_id="gone")


def test_an_edit_replaces_the_whole_source_or_one_exact_occurrence() -> None:
    whole = edit(cell_id="plot", source="df.plot(kind='bar')")
    assert whole == {
        "op": "edit",
        "path": "a.ipynb",
        "cellType": "code",
        "index": 2,
        "cellId": "plot",
        "before": "df.plot()",
        "after": "df.plot(kind='bar')",
    }
    part = edit(index=1, old="head()", new="tail()")
    assert part["after"] == "df = load()\ndf.tail()" and part["before"] == CELLS[1]["source"]
    with pytest.raises(EditRefused, match="old occurs 2 times in cell 1; it must occur exactly"):
        edit(index=1, old="df", new="frame")
    with pytest.raises(EditRefused, match="old occurs 0 times"):
        edit(index=1, old="missing", new="x")
    with pytest.raises(EditRefused, match="not both"):
        edit(index=1, source="x", old="df", new="y")
    with pytest.raises(EditRefused, match="give the new source, or old and new"):
        edit(index=1, old="df")
    with pytest.raises(EditRefused, match="old is empty"):
        edit(index=1, old="", new="x")
    with pytest.raises(EditRefused, match="leaves cell 2 as it is"):
        edit(index=2, source="df.plot()")


def test_a_stale_revision_is_refused_with_the_current_source() -> None:
    now = revision("code", "df.plot()")
    assert delete(cell_id="plot", rev=now)["after"] == ""
    with pytest.raises(EditRefused) as refused:
        edit(cell_id="plot", source="y", rev="0123456789ab")
    said = str(refused.value)
    assert f"cell 2 changed since you read it (its revision is {now}, not 0123456789ab)" in said
    assert said.endswith("its current source:\ndf.plot()")
    with pytest.raises(EditRefused, match="changed since you read it"):
        delete(cell_id="plot", rev="stale")
    with pytest.raises(EditRefused, match="changed since you read it"):
        move(cell_id="plot", rev="stale", to_index=0)
    # The source shown is clipped, the check is on the whole source.
    long = [{"cell_type": "code", "id": "big", "source": "x" * 10_000}]
    with pytest.raises(EditRefused) as refused:
        delete(long, index=0, rev=revision("code", "x" * 9_999))
    assert len(str(refused.value)) < 4_200


def test_a_move_names_where_the_cell_ends() -> None:
    moved = move(to_index=0, cell_id="plot")
    assert moved["index"] == 2 and moved["toIndex"] == 0
    assert moved["before"] == moved["after"] == "df.plot()"
    with pytest.raises(EditRefused, match="at index 2 already"):
        move(to_index=2, cell_id="plot")
    with pytest.raises(EditRefused, match=r"to_index 3 is out of range: 0..2"):
        move(to_index=3, index=0)


def test_sources_are_bounded() -> None:
    big = "x" * (MAX_EDIT_SOURCE + 1)
    with pytest.raises(EditRefused, match=f"the source has {MAX_EDIT_SOURCE + 1} characters"):
        plan_insert(CELLS, "a.ipynb", big)
    with pytest.raises(EditRefused, match="the new source has"):
        edit(index=2, source=big)
    huge = [{"cell_type": "code", "id": "huge", "source": big}]
    with pytest.raises(EditRefused, match=f"cell 0 has {MAX_EDIT_SOURCE + 1} characters"):
        delete(huge, index=0)


def test_plan_takes_a_tool_calls_raw_arguments() -> None:
    args = {"source": "1 + 1", "after_cell_id": "title"}
    assert plan("insert_cell", args, CELLS, "a.ipynb") == plan_insert(
        CELLS, "a.ipynb", "1 + 1", after_cell_id="title"
    )
    edit = plan("edit_cell", {"cell_id": "plot", "old": "()", "new": "(y='a')"}, CELLS, "p")
    assert edit["after"] == "df.plot(y='a')"
    assert plan("move_cell", {"index": 0, "to_index": 2}, CELLS, "p")["toIndex"] == 2
    assert plan("delete_cell", {"index": 0}, CELLS, "p")["op"] == "delete"
    with pytest.raises(EditRefused, match="index must be an integer"):
        plan("delete_cell", {"index": "0"}, CELLS, "p")
    with pytest.raises(EditRefused, match="index must be an integer"):
        plan("delete_cell", {"index": True}, CELLS, "p")
    with pytest.raises(EditRefused, match="source is needed"):
        plan("insert_cell", {}, CELLS, "p")
    with pytest.raises(EditRefused, match="to_index is needed"):
        plan("move_cell", {"index": 0}, CELLS, "p")
    with pytest.raises(EditRefused, match="no edit tool"):
        plan("run_cell", {"index": 0}, CELLS, "p")


# ------------------------------------------------------------ the saved file


class FakeRunner:
    """Runs nothing: answers as the kernel would have, after ``during`` (a user's save)."""

    def __init__(self) -> None:
        self.during: Any = None
        self.ran: list[str] = []

    async def execute(self, code: str, timeout: float, progress: Any) -> Executed:
        self.ran.append(code)
        if self.during is not None:
            self.during()
        outputs = [
            {"output_type": "stream", "name": "stdout", "text": "hello\n"},
            {"output_type": "display_data", "data": {"text/plain": "2"}, "metadata": {}},
        ]
        return Executed([{"type": "text", "text": "[stdout]\nhello"}], outputs, 7)


def saved(path: Path, *sources: str) -> list[str]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        (nbformat.v4.new_markdown_cell if source.startswith("#") else nbformat.v4.new_code_cell)(
            source
        )
        for source in sources
    ]
    nbformat.write(nb, str(path))
    return [cell.id for cell in nb.cells]


STORE = DiskStore()  # one per process, as local mode has: its locks are shared


def document(path: Path, runner: FakeRunner | None = None) -> FileDocument:
    return FileDocument(str(path), STORE, runner or FakeRunner())  # type: ignore[arg-type]


def on_disk(path: Path) -> list[Any]:
    return list(nbformat.read(str(path), as_version=4).cells)


def touched(path: Path, source: str) -> None:
    """The user (another editor) changes the file."""
    nb = nbformat.read(str(path), as_version=4)
    nb.cells[0].source = source
    nbformat.write(nb, str(path))
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))


async def test_the_file_takes_each_kind_of_edit(tmp_path: Path) -> None:
    path = tmp_path / "a.ipynb"
    ids = saved(path, "a = 1", "b = 2")
    doc = document(path)
    cells = await doc.cells()
    assert [c["source"] for c in cells] == ["a = 1", "b = 2"]
    added = await doc.apply(plan_insert(cells, doc.path, "# notes", "markdown", index=1))
    after = on_disk(path)
    assert added == {"cellId": after[1].id, "index": 1} and after[1].cell_type == "markdown"
    assert after[1].id not in ids

    cells = await doc.cells()
    await doc.apply(plan("edit_cell", {"cell_id": ids[1], "old": "2", "new": "3"}, cells, doc.path))
    assert on_disk(path)[2].source == "b = 3"
    cells = await doc.cells()
    moved = await doc.apply(plan("move_cell", {"cell_id": ids[1], "to_index": 0}, cells, doc.path))
    assert moved == {"cellId": ids[1], "index": 0}
    assert [c.source for c in on_disk(path)] == ["b = 3", "a = 1", "# notes"]
    cells = await doc.cells()
    gone = await doc.apply(plan("delete_cell", {"index": 1}, cells, doc.path))
    assert gone == {"cellId": ids[0], "index": 1}
    assert [c.source for c in on_disk(path)] == ["b = 3", "# notes"]


async def test_the_file_refuses_a_cell_that_changed_since_the_plan(tmp_path: Path) -> None:
    path = tmp_path / "a.ipynb"
    saved(path, "a = 1")
    doc = document(path)
    edit = plan("edit_cell", {"index": 0, "source": "a = 2"}, await doc.cells(), doc.path)
    touched(path, "a = 100  # the user's")
    with pytest.raises(EditRefused, match=CHANGED):
        await doc.apply(edit)
    # Read again, an edit planned on the old source still finds the cell changed.
    await doc.cells()
    with pytest.raises(
        EditRefused,
        match=r"cell 0 changed since the edit was planned; its current source:\na = 100  # the user's",
    ):
        await doc.apply(edit)
    assert on_disk(path)[0].source == "a = 100  # the user's"


async def test_a_file_changed_since_the_chat_read_it_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.ipynb"
    saved(path, "a = 1")
    sight = Sight()
    token = CALLER.set((sight, True))  # read_cells
    await document(path).cells()
    CALLER.set((sight, False))  # an edit tool: its own read sees the change
    touched(path, "a = 5")
    with pytest.raises(EditRefused, match=CHANGED):
        await document(path).cells()
    CALLER.set((sight, True))  # read_cells again
    await document(path).cells()
    CALLER.set((sight, False))
    doc = document(path)
    await doc.apply(plan("edit_cell", {"index": 0, "source": "a = 6"}, await doc.cells(), doc.path))
    # Its own write is what the chat has seen: the next edit goes through.
    doc = document(path)
    await doc.apply(plan("edit_cell", {"index": 0, "source": "a = 7"}, await doc.cells(), doc.path))
    CALLER.reset(token)
    assert on_disk(path)[0].source == "a = 7"


async def test_run_writes_outputs_and_count_into_an_unchanged_file(tmp_path: Path) -> None:
    path = tmp_path / "a.ipynb"
    ids = saved(path, "print('hello')", "# title")
    runner = FakeRunner()
    parts = await document(path, runner).run(ids[0], 30, lambda _: asyncio.sleep(0))
    assert runner.ran == ["print('hello')"]
    assert parts[-1] == {
        "type": "text",
        "text": f"[cell 0, id={ids[0]}: its outputs are in the notebook file]",
    }
    cell = on_disk(path)[0]
    assert cell.execution_count == 7 and cell.outputs[0].text == "hello\n"
    assert cell.outputs[1].data == {"text/plain": "2"}
    # A save while the cell ran: the outputs are not written over it.
    runner.during = lambda: touched(path, "print('edited while running')")
    parts = await document(path, runner).run(ids[0], 30, lambda _: asyncio.sleep(0))
    assert "not written into the file: the file changed while the cell ran" in parts[-1]["text"]  # type: ignore[typeddict-item]
    assert on_disk(path)[0].source == "print('edited while running')"
    not_code = await document(path, runner).run(ids[1], 30, lambda _: asyncio.sleep(0))
    assert not_code == [{"type": "text", "text": "Not run: cell 1 is no code cell."}]


def test_local_mode_finds_the_notebook_vs_code_or_a_server_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here.ipynb").write_text("{}")
    (tmp_path / "vs.ipynb").write_text("{}")
    here = str(tmp_path / "here.ipynb")
    assert notebook_path({}, {}) is None
    assert notebook_path({}, {"JPY_SESSION_NAME": "sub/dir/here.ipynb"}) == here
    assert notebook_path({}, {"JPY_SESSION_NAME": here}) == here
    assert notebook_path({}, {"JPY_SESSION_NAME": "a-session-id"}) is None
    vs = {"__vsc_ipynb_file__": str(tmp_path / "vs.ipynb")}
    assert notebook_path(vs, {"JPY_SESSION_NAME": here}) == str(tmp_path / "vs.ipynb")
    assert notebook_path({}, {"JPY_SESSION_NAME": "missing.ipynb"}) is None


async def test_two_edits_at_once_one_lands_the_other_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.ipynb"
    saved(path, "a = 1")
    first, second = document(path), document(path)
    one = plan("edit_cell", {"index": 0, "source": "a = 2"}, await first.cells(), first.path)
    two = plan("insert_cell", {"source": "b = 1"}, await second.cells(), second.path)
    results = await asyncio.gather(first.apply(one), second.apply(two), return_exceptions=True)
    refused = [r for r in results if isinstance(r, EditRefused)]
    assert len(refused) == 1 and str(refused[0]) == CHANGED
    assert len(on_disk(path)) == (1 if isinstance(results[1], EditRefused) else 2)


async def test_a_file_that_cannot_be_written_refuses_the_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.ipynb"
    saved(path, "a = 1")
    doc = document(path)
    edit = plan("insert_cell", {"source": "b = 2"}, await doc.cells(), doc.path)

    def full_disk(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(
        EditRefused, match=f"the notebook {path} cannot be written: .*No space left"
    ):
        await doc.apply(edit)
    monkeypatch.undo()
    assert [c.source for c in on_disk(path)] == ["a = 1"]
    assert [p.name for p in tmp_path.iterdir()] == ["a.ipynb"]  # no temporary file left
