"""An agent's edits as the page tests send them to a page (real or fake)."""

from __future__ import annotations

from acp_notebook.wire.contracts import CellEdit


def insert_edit(path: str, index: int, after: str) -> CellEdit:
    """A new code cell holding ``after`` at ``index`` of the notebook ``path``."""
    return {
        "op": "insert",
        "path": path,
        "cellType": "code",
        "index": index,
        "before": "",
        "after": after,
    }


INSERT = insert_edit("a.ipynb", 0, "x = 1")
