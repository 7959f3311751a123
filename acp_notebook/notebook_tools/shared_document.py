"""The server's shared document (real-time collaboration, jupyter-server-ydoc).

With jupyter-collaboration installed every page of a notebook edits one shared model held
by the server (a Y document in a "room"); the file is saved from it. The agent's edits go
into that model, so they need no open tab (the room is loaded from the file when no page
has it), every collaborator sees them live, and RTC saves them to the file as it saves a
person's. While it edits, the agent is a collaborator of the room, named after it.

A cell run goes to the notebook's kernel as the user's run would (counted, in the history)
and its outputs and execution count are written into the shared cell, as a page writes
them when it runs a cell.

While a page has the notebook open, the page makes the change in its copy of the shared
model instead (``pages``): it reaches every collaborator all the same, and that page's
undo (``z``) takes it back, which a change made by the server cannot offer (a page's undo
tracks only its own changes). The agent is a collaborator either way.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_ydoc.utils import cast_all
from pycrdt import Array, Map, Text

from ..wire.contracts import CellEdit
from .cells import Part
from .documents import ActiveCell, Applied, DocumentSource, EditRefused, LiveDocument, Progress
from .execute import Runner

log = logging.getLogger(__name__)

WHERE = "the shared document (real-time collaboration)"
LINGER = 60.0  # seconds the agent stays a collaborator after its last edit or run
# The collaborator colours JupyterLab gives people, one per agent name.
COLORS = ("#ef6c00", "#1976d2", "#388e3c", "#7b1fa2", "#c2185b", "#00838f", "#5d4037")
GLOBAL_AWARENESS = "JupyterLab:globalAwareness"  # the room of who is online, and where
# The kernel that runs the notebook at a path (None: no kernel runs it).
RunnerOf = Callable[[str], Awaitable[Runner | None]]


def collaborator(agent: str) -> dict[str, Any]:
    """The awareness ``user`` a page shows for a collaborator, for the agent."""
    initials = "".join(word[0] for word in agent.split()[:2]).upper() or "A"
    color = COLORS[hashlib.sha256(agent.encode()).digest()[0] % len(COLORS)]
    return {
        "username": f"agent:{agent}",
        "name": agent,
        "display_name": agent,
        "initials": initials,
        "color": color,
        "avatar_url": None,
    }


def _youtput(output: dict[str, Any]) -> Map[Any]:
    """One nbformat output as the shared model keeps it (a stream's text is shared text,
    numbers are floats as Yjs has them)."""
    value = dict(output)
    cast_all(value, int, float)
    if value.get("output_type") == "stream":
        value["text"] = Text(str(value.get("text", "")))
    return Map(value)


class SharedDocuments:
    """The document source of the shared documents: ``ydoc`` is the server's
    ``jupyter_server_ydoc`` extension app (its ``YDocExtension``)."""

    def __init__(self, ydoc: Any, runner_of: RunnerOf, pages: DocumentSource | None = None) -> None:
        self._ydoc = ydoc
        self._runner_of = runner_of
        self._pages = pages
        self._present: dict[str, asyncio.TimerHandle] = {}

    async def open(self, path: str, agent: str) -> LiveDocument | None:
        contents = self._ydoc.serverapp.contents_manager
        if not await ensure_async(contents.file_exists(path)):
            return None
        if self._pages is not None and (page := await self._pages.open(path, agent)):
            return _ThroughPage(page, self, agent)
        document = SharedDocument(self, path, agent)
        await document.notebook()  # the room is loaded now, so a page opening later has it
        return document

    async def notebook(self, path: str) -> Any:
        """The room's shared notebook (a ``YNotebook``), the room loaded from the file when
        no page has it open; the same object every page's edits reach."""
        notebook = await self._ydoc.get_document(
            path=path, content_type="notebook", file_format="json", copy=False, create=True
        )
        if notebook is None:
            raise EditRefused(f"{path} has no shared document (is it a notebook?)")
        return notebook

    async def runner(self, path: str) -> Runner:
        runner = await self._runner_of(path)
        if runner is None:
            raise EditRefused(f"No kernel runs {path}: open it with a kernel to run its cells.")
        return runner

    async def present(self, path: str, notebook: Any, agent: str) -> None:
        """The agent shows as a collaborator until ``LINGER`` seconds pass without an edit
        or a run: in the document's awareness (its remote users) and, once a page is
        open, in the server's global one (JupyterLab's collaborators panel, which names
        the document a collaborator is in)."""
        user = collaborator(agent)
        awarenesses = [notebook.awareness]
        notebook.awareness.set_local_state({"user": user})
        rooms = self._ydoc.ywebsocket_server
        if rooms.room_exists(GLOBAL_AWARENESS):
            everyone = (await rooms.get_room(GLOBAL_AWARENESS)).awareness
            everyone.set_local_state({"user": user, "current": f"notebook:{path}"})
            awarenesses.append(everyone)
        if (pending := self._present.pop(path, None)) is not None:
            pending.cancel()

        def leave() -> None:
            self._present.pop(path, None)
            for awareness in awarenesses:
                awareness.set_local_state(None)

        self._present[path] = asyncio.get_running_loop().call_later(LINGER, leave)


class _ThroughPage:
    """The shared notebook edited by the page that has it open (undoable there), with the
    agent among the collaborators as when the server edits it."""

    def __init__(self, page: LiveDocument, source: SharedDocuments, agent: str) -> None:
        self._page = page
        self._source = source
        self._agent = agent
        self.path = page.path
        self.where = f"{page.where}, shared with every collaborator"

    async def _announce(self) -> None:
        notebook = await self._source.notebook(self.path)
        await self._source.present(self.path, notebook, self._agent)

    async def cells(self, outputs: bool = True) -> list[dict[str, Any]]:
        return await self._page.cells(outputs)

    async def apply(self, edit: CellEdit) -> Applied:
        applied = await self._page.apply(edit)
        await self._announce()
        return applied

    async def run(self, cell_id: str, timeout: float, progress: Progress) -> list[Part]:
        await self._announce()
        return await self._page.run(cell_id, timeout, progress)

    async def active_cell(self) -> ActiveCell | None:
        return await self._page.active_cell()


class SharedDocument:
    """One notebook's shared model, as the agent edits and runs it."""

    where = WHERE

    def __init__(self, source: SharedDocuments, path: str, agent: str) -> None:
        self._source = source
        self.path = path
        self.agent = agent

    async def notebook(self) -> Any:
        # Fetched for each call: the room may have been dropped (every page closed) and
        # loaded again since.
        return await self._source.notebook(self.path)

    async def cells(self, outputs: bool = True) -> list[dict[str, Any]]:
        notebook = await self.notebook()
        if not outputs:  # what an edit's plan reads: 15 ms for 1,000 cells against 50
            return [
                {"id": str(c.get("id")), "cell_type": c["cell_type"], "source": str(c["source"])}
                for c in notebook.ycells
            ]
        # One conversion of the whole array: get_cell(i) walks to cell i and converts the
        # notebook's metadata each time, 185 ms for 1,000 cells against 50.
        cells: list[dict[str, Any]] = notebook.ycells.to_py() or []
        for cell in cells:
            cell.pop("execution_state", None)  # the page's, not nbformat's
            count = cell.get("execution_count")
            if isinstance(count, float):  # numbers come back from the shared model as floats
                cell["execution_count"] = int(count)
            cell["id"] = str(cell.get("id"))  # kept even where nbformat 4.4 would drop it
        return cells

    async def apply(self, edit: CellEdit) -> Applied:
        notebook = await self.notebook()
        # Checked and written in one go (nothing awaited in between) and one transaction:
        # no other change can come between the check and the edit.
        with notebook.ydoc.transaction():
            applied = self._apply(notebook, edit)
        await self._source.present(self.path, notebook, self.agent)
        return applied

    def _apply(self, notebook: Any, edit: CellEdit) -> Applied:
        ycells: Array[Any] = notebook.ycells
        op = edit["op"]
        if op == "insert":
            index = edit["index"]
            if not 0 <= index <= len(ycells):
                raise EditRefused(f"No place {index} in {self.path}: it has {len(ycells)} cells.")
            cell_id = edit.get("cellId") or str(uuid.uuid4())
            cell: dict[str, Any] = {
                "id": cell_id,
                "cell_type": edit["cellType"],
                "source": edit["after"],
                "metadata": {},
            }
            if edit["cellType"] == "code":
                cell.update(outputs=[], execution_count=None)
            ycells.insert(index, notebook.create_ycell(cell))
            return Applied(cellId=cell_id, index=index)
        index = self._unchanged(ycells, edit)
        ycell = ycells[index]
        cell_id = str(ycell["id"])
        if op == "edit":
            if ycell["cell_type"] == edit["cellType"]:
                notebook.set_cell(index, source=edit["after"])
            else:  # a new type is a new cell (as the page changes one), with the same id
                value = {"id": cell_id, "cell_type": edit["cellType"], "source": edit["after"]}
                ycells[index] = notebook.create_ycell({**value, "metadata": {}})
        elif op == "delete":
            del ycells[index]
        else:  # move: the shared model has no move a page reads, so out and in again
            to = edit.get("toIndex")
            if to is None or not 0 <= to < len(ycells):
                raise EditRefused(f"No place {to} in {self.path}: it has {len(ycells)} cells.")
            value = ycell.to_py()
            del ycells[index]
            ycells.insert(to, notebook.create_ycell(value))
            index = to
        return Applied(cellId=cell_id, index=index)

    def _find(self, ycells: Array[Any], cell_id: str | None, index: int) -> int:
        """The cell's index: by its id when the edit names one, else ``index``."""
        if cell_id:
            for at, ycell in enumerate(ycells):
                if ycell.get("id") == cell_id:
                    return at
            raise EditRefused(f"No cell {cell_id} in {self.path} (deleted?).")
        if not 0 <= index < len(ycells):
            raise EditRefused(f"No cell {index} in {self.path}: it has {len(ycells)} cells.")
        return index

    def _unchanged(self, ycells: Array[Any], edit: CellEdit) -> int:
        """The index of the edit's cell, which must hold what the agent read."""
        index = self._find(ycells, edit.get("cellId"), edit["index"])
        source = str(ycells[index]["source"])
        if source != edit["before"]:
            raise EditRefused(
                "The cell changed since it was read; not changed. Its source now:\n" + source
            )
        return index

    async def run(self, cell_id: str, timeout: float, progress: Progress) -> list[Part]:
        notebook = await self.notebook()
        ycells: Array[Any] = notebook.ycells
        ycell = ycells[self._find(ycells, cell_id, -1)]
        if ycell["cell_type"] != "code":
            raise EditRefused(f"Cell {cell_id} is a {ycell['cell_type']} cell: nothing to run.")
        runner = await self._source.runner(self.path)
        await self._source.present(self.path, notebook, self.agent)
        # As a page does: the old outputs go, the cell shows it runs.
        with notebook.ydoc.transaction():
            _set_outputs(ycell, [])
            ycell["execution_count"] = None
            ycell["execution_state"] = "running"
        try:
            executed = await runner.execute(str(ycell["source"]), timeout, progress)
        except BaseException:  # cancelled with the turn: the cell does not stay running
            await self._ran(cell_id, {"execution_state": "idle"})
            raise
        outputs = [_youtput(output) for output in executed.outputs]
        count = executed.execution_count
        await self._ran(
            cell_id,
            {
                "outputs": outputs,
                "execution_count": None if count is None else float(count),
                "execution_state": "idle",
            },
        )
        return executed.parts

    async def _ran(self, cell_id: str, fields: dict[str, Any]) -> None:
        """Writes the end of a run into the cell, which may have gone while it ran (the
        room too, when every page closed): it is looked for again."""
        notebook = await self.notebook()
        for ycell in notebook.ycells:
            if ycell.get("id") == cell_id:
                with notebook.ydoc.transaction():
                    for key, value in fields.items():
                        if key == "outputs":
                            _set_outputs(ycell, value)
                        else:
                            ycell[key] = value
                await self._source.present(self.path, notebook, self.agent)
                return
        log.info("acp_notebook: cell %s of %s went while it ran", cell_id, self.path)

    async def active_cell(self) -> ActiveCell | None:
        # The server knows no page's selection.
        return None


def _set_outputs(ycell: Map[Any], outputs: list[Map[Any]]) -> None:
    """Replace the cell's outputs in place: a page follows the cell's own outputs array,
    and one put in its place is never shown."""
    youtputs = ycell.get("outputs")
    if isinstance(youtputs, Array):
        youtputs.clear()
        youtputs.extend(outputs)
    else:
        ycell["outputs"] = Array(outputs)
