"""The saved ``.ipynb`` as the live document, where nothing holds the notebook open
(no tab, nbclient, VS Code, local mode): the server's contents manager, or the file
itself in local mode.

An edit is written only when the file is as the chat last saw it (read_cells, or its
own last edit) and the cell still holds what the edit replaces; else it is refused, so
nothing written since is lost. ``run`` runs the cell's source in the kernel as a cell
the user ran (stored in the history, the execution count moves) and writes its outputs
and execution count into the cell, again only into an unchanged file.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
from contextvars import ContextVar
from typing import Any, Protocol

import nbformat
from jupyter_core.utils import ensure_async
from nbformat.corpus.words import generate_corpus_id as random_cell_id

from ..wire.clip import clip
from ..wire.contracts import CellEdit
from .cell_edits import find, source_of, type_of
from .cells import MAX_SOURCE, Part
from .documents import Applied, EditRefused, Progress
from .execute import Runner

CHANGED = "the file changed since you read it: read_cells again"


class Sight:
    """One chat's view of the notebook files it works on: each file's stamp when the
    chat last read it (read_cells) or wrote it (an edit, a run's outputs)."""

    def __init__(self) -> None:
        self.stamps: dict[str, str] = {}


# Set by the endpoint for each tool call: the calling chat's Sight, and whether the call
# reads (read_cells: what it reads is what the chat has seen) or plans an edit (a file
# changed since the chat saw it is refused before anyone reviews the edit).
CALLER: ContextVar[tuple[Sight, bool] | None] = ContextVar("acp_notebook_caller", default=None)


class Store(Protocol):
    """Reads and writes whole notebooks; a stamp changes whenever the file does."""

    # One lock per path: an edit's read, check and write are not interleaved with another's.
    locks: dict[str, asyncio.Lock]

    async def read(self, path: str) -> tuple[dict[str, Any], str]: ...
    async def write(self, path: str, notebook: dict[str, Any]) -> str: ...


class ContentsStore:
    """Server mode: the Jupyter server's contents manager (stamp: ``last_modified`` and
    the size)."""

    def __init__(self, contents_manager: Any) -> None:
        self._contents = contents_manager
        self.locks: dict[str, asyncio.Lock] = {}

    async def read(self, path: str) -> tuple[dict[str, Any], str]:
        try:
            model = await ensure_async(self._contents.get(path, content=True, type="notebook"))
        except Exception as exc:  # the server's own: HTTPError 404, a file that is no notebook
            raise EditRefused(f"the notebook {path} cannot be read: {clip(str(exc), 300)}") from exc
        return model["content"], f"{model['last_modified']}-{model.get('size')}"

    async def write(self, path: str, notebook: dict[str, Any]) -> str:
        model = {"type": "notebook", "format": "json", "content": notebook}
        try:
            saved = await ensure_async(self._contents.save(model, path))
        except Exception as exc:  # the server's own: no permission, a full disk
            raise EditRefused(
                f"the notebook {path} cannot be written: {clip(str(exc), 300)}"
            ) from exc
        return f"{saved['last_modified']}-{saved.get('size')}"


def _stamp(data: bytes) -> str:
    # Of the bytes, not the mtime: the kernel's clock ticks coarsely enough for two saves
    # of the same size to share an mtime.
    return hashlib.sha256(data).hexdigest()


class DiskStore:
    """Local mode: the file itself, through nbformat (stamp: a hash of its bytes)."""

    def __init__(self) -> None:
        self.locks: dict[str, asyncio.Lock] = {}

    async def read(self, path: str) -> tuple[dict[str, Any], str]:
        def read() -> tuple[dict[str, Any], str]:
            with open(path, "rb") as file:
                data = file.read()
            return nbformat.reads(data.decode("utf-8"), as_version=4), _stamp(data)

        try:
            return await asyncio.to_thread(read)
        except Exception as exc:  # OSError, a file that is no notebook
            raise EditRefused(f"the notebook {path} cannot be read: {clip(str(exc), 300)}") from exc

    async def write(self, path: str, notebook: dict[str, Any]) -> str:
        def write() -> str:
            data = nbformat.writes(nbformat.from_dict(notebook)).encode("utf-8")
            # A whole new file moved over the old: a reader never sees half of it.
            fd, temporary = tempfile.mkstemp(".ipynb", dir=os.path.dirname(path) or ".")
            try:
                with os.fdopen(fd, "wb") as file:
                    file.write(data)
                os.replace(temporary, path)
            except BaseException:
                os.unlink(temporary)
                raise
            return _stamp(data)

        try:
            return await asyncio.to_thread(write)
        except OSError as exc:
            raise EditRefused(
                f"the notebook {path} cannot be written: {clip(str(exc), 300)}"
            ) from exc


def _with_ids(notebook: dict[str, Any]) -> None:
    """nbformat 4.5 (cell ids) for a notebook written with edits: every cell gets an id."""
    if notebook.get("nbformat_minor", 0) < 5:
        notebook["nbformat_minor"] = 5
    for cell in notebook["cells"]:
        if not isinstance(cell.get("id"), str):
            cell["id"] = random_cell_id()


def _new_cell(edit: CellEdit) -> Any:
    if edit["cellType"] == "markdown":
        return nbformat.v4.new_markdown_cell(edit["after"])
    if edit["cellType"] == "raw":
        return nbformat.v4.new_raw_cell(edit["after"])
    return nbformat.v4.new_code_cell(edit["after"])


class FileDocument:
    """One notebook file, for the tool calls of one chat (``CALLER``)."""

    def __init__(
        self, path: str, store: Store, runner: Runner, where: str = "the saved file"
    ) -> None:
        self.path = path
        self.where = where
        self._store = store
        self._runner = runner
        self._lock = store.locks.setdefault(path, asyncio.Lock())
        self._stamp: str | None = None  # the file as cells() read it

    async def _read(self) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
        notebook, stamp = await self._store.read(self.path)
        cells = notebook.get("cells")
        if not isinstance(cells, list):
            raise EditRefused(f"{self.path} holds no notebook cells")
        return notebook, cells, stamp

    async def _write(self, notebook: dict[str, Any], read: str) -> None:
        """Write the notebook read at stamp ``read``; the chat has seen what it wrote,
        unless the file had changed unseen before."""
        written = await self._store.write(self.path, notebook)
        caller = CALLER.get()
        if caller is not None and caller[0].stamps.get(self.path, read) == read:
            caller[0].stamps[self.path] = written
        self._stamp = written

    async def cells(self, outputs: bool = True) -> list[dict[str, Any]]:
        _, cells, stamp = await self._read()
        caller = CALLER.get()
        if caller is not None:
            sight, reading = caller
            if reading:
                sight.stamps[self.path] = stamp
            elif sight.stamps.get(self.path, stamp) != stamp:
                raise EditRefused(CHANGED)
        self._stamp = stamp
        return [{**cell, "source": source_of(cell)} for cell in cells]

    async def apply(self, edit: CellEdit) -> Applied:
        async with self._lock:
            notebook, cells, stamp = await self._read()
            if self._stamp is not None and stamp != self._stamp:
                raise EditRefused(CHANGED)
            if edit["op"] == "insert":
                at = edit["index"]
                if at > len(cells):
                    raise EditRefused(
                        f"index {at} is out of range: the notebook has {len(cells)} cells"
                    )
            else:
                at = self._holding(cells, edit)
            _with_ids(notebook)
            cell = _new_cell(edit) if edit["op"] == "insert" else cells[at]
            if edit["op"] == "insert":
                cells.insert(at, cell)
            elif edit["op"] == "edit":
                cell["source"] = edit["after"]
            elif edit["op"] == "delete":
                del cells[at]
            else:
                cells.pop(at)
                at = edit.get("toIndex") or 0
                cells.insert(at, cell)
            await self._write(notebook, stamp)
            return {"cellId": cell["id"], "index": at}

    def _holding(self, cells: list[dict[str, Any]], edit: CellEdit) -> int:
        """The edit's cell, refused unless it still holds ``before``."""
        cell_id = edit.get("cellId")
        try:
            at = find(cells, cell_id, None if cell_id else edit["index"])
        except EditRefused as exc:
            raise EditRefused(f"the cell is gone: {exc}") from exc
        source = source_of(cells[at])
        if source != edit["before"] or type_of(cells[at]) != edit["cellType"]:
            raise EditRefused(
                f"cell {at} changed since the edit was planned; its current source:\n"
                f"{clip(source, MAX_SOURCE)}"
            )
        return at

    async def run(self, cell_id: str, timeout: float, progress: Progress) -> list[Part]:
        _, cells, stamp = await self._read()
        at = find(cells, cell_id, None)
        if type_of(cells[at]) != "code":
            return [{"type": "text", "text": f"Not run: cell {at} is no code cell."}]
        ran = await self._runner.execute(source_of(cells[at]), timeout, progress)
        note = "its outputs are in the notebook file"
        async with self._lock:
            try:
                notebook, cells, now = await self._read()
                if now != stamp:
                    raise EditRefused("the file changed while the cell ran")
                cell = cells[find(cells, cell_id, None)]
                cell["outputs"] = ran.outputs
                cell["execution_count"] = ran.execution_count
                await self._write(notebook, now)
            except EditRefused as exc:
                note = f"its outputs were not written into the file: {exc}"
        return [*ran.parts, {"type": "text", "text": f"[cell {at}, id={cell_id}: {note}]"}]

    async def active_cell(self) -> None:
        return None  # a file has no selection


class FileSource:
    """Opens any notebook path as its saved file; the last source tried."""

    def __init__(self, store: Store, runner: Runner) -> None:
        self._store = store
        self._runner = runner

    async def open(self, path: str, agent: str) -> FileDocument:
        return FileDocument(path, self._store, self._runner)
