"""Where the notebook's cells live while the agent edits them: one ``LiveDocument``.

Three kinds, tried in this order for the chat's notebook path (DESIGN.md, "Agent edits"):
the server's shared document when real-time collaboration is installed
(``shared_document``; a page that has the notebook open makes the change there, so its
undo takes it back), the open JupyterLab / Notebook 7 page through the lab extension
(``page_document``), and the saved file through the contents manager
(``file_document``), never while a page holds it open. Each applies an edit only when
the live cell still holds ``edit["before"]``: the user's unsaved work is never
overwritten.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypedDict

from ..wire.contracts import CellEdit
from .cells import Part

Progress = Callable[[str], Awaitable[None]]


class EditRefused(Exception):
    """An edit not made; the message is for the agent (with the cell's current source
    when the cell changed since it was read)."""


class Applied(TypedDict):
    """Where an applied edit left its cell (a delete: where it was)."""

    cellId: str
    index: int


class ActiveCell(TypedDict, total=False):
    """The cell the user has selected in the page, and the text selected in it."""

    cellId: str
    index: int
    selection: str


class LiveDocument(Protocol):
    """One notebook as the user sees it now."""

    # Where the edits land, for the agent and the person: "the shared document", ...
    where: str
    # The notebook's path (the server's contents path; local mode: the file's).
    path: str

    async def cells(self, outputs: bool = True) -> list[dict[str, Any]]:
        """The cells as nbformat v4 dicts (``source`` a string; ``id`` always set);
        without ``outputs`` a document may leave them out (planning an edit needs none)."""
        ...

    async def apply(self, edit: CellEdit) -> Applied:
        """Make ``edit``; ``EditRefused`` when the live cell no longer holds ``before``
        (or the cell or the document is gone)."""
        ...

    async def run(self, cell_id: str, timeout: float, progress: Progress) -> list[Part]:
        """Run the cell as if the user ran it (its outputs and execution count land in
        the document); its outputs, bounded as ``run_code``'s."""
        ...

    async def active_cell(self) -> ActiveCell | None:
        """The user's selected cell and text, where a page knows it; else None."""
        ...


class DocumentSource(Protocol):
    """Finds the live document of a notebook path, or None when this kind has none."""

    async def open(self, path: str, agent: str) -> LiveDocument | None:
        """``agent``: who edits (the agent's display name), as collaborators see it."""
        ...
