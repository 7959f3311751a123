"""An agent's edit as the page tests send it to a page (real or fake)."""

from __future__ import annotations

from acp_notebook.wire.contracts import CellEdit

INSERT: CellEdit = {
    "op": "insert",
    "path": "a.ipynb",
    "cellType": "code",
    "index": 0,
    "before": "",
    "after": "x = 1",
}
