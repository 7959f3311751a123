"""The edit tools' plans: pure functions from the cells the agent edits to one ``CellEdit``.

Each names its cell by ``cell_id`` or ``index`` (exactly one), refuses what it cannot do
with a reason for the agent (``EditRefused``), and, given the ``rev`` the agent read,
refuses a cell that changed since, with the cell's current source: the agent never
overwrites what it has not seen. ``plan`` does the same from a tool call's raw arguments
(the agent's permission request, previewed for its review card).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar, cast

from ..wire.clip import clip
from ..wire.contracts import MAX_EDIT_SOURCE, CellEdit
from .cells import MAX_SOURCE, joined, revision
from .documents import EditRefused

CellType = Literal["code", "markdown", "raw"]
CELL_TYPES: tuple[CellType, ...] = ("code", "markdown", "raw")
EDIT_TOOLS = ("insert_cell", "edit_cell", "delete_cell", "move_cell")
Cells = Sequence[Mapping[str, Any]]
T = TypeVar("T")


def source_of(cell: Mapping[str, Any]) -> str:
    return joined(cell.get("source"))


def type_of(cell: Mapping[str, Any]) -> CellType:
    kind = cell.get("cell_type")
    if kind not in CELL_TYPES:
        raise EditRefused(f"the cell has an unknown type {clip(str(kind), 40)!r}")
    return cast(CellType, kind)


def find(cells: Cells, cell_id: str | None, index: int | None) -> int:
    """The index of the cell named by ``cell_id`` or ``index`` (negative: from the end)."""
    if (cell_id is None) == (index is None):
        raise EditRefused("name the cell by exactly one of cell_id and index")
    if cell_id is not None:
        for at, cell in enumerate(cells):
            if cell.get("id") == cell_id:
                return at
        raise EditRefused(f"no cell has the id {clip(cell_id, 80)!r}: read_cells shows the ids")
    assert index is not None
    if not -len(cells) <= index < len(cells):
        raise EditRefused(f"index {index} is out of range: the notebook has {len(cells)} cells")
    return index % len(cells)


def _bounded(text: str, what: str) -> str:
    if len(text) > MAX_EDIT_SOURCE:
        raise EditRefused(
            f"{what} has {len(text)} characters; an edit carries at most {MAX_EDIT_SOURCE}"
        )
    return text


def named(cells: Cells, cell_id: str | None, index: int | None, rev: str | None) -> int:
    """``find``, refusing a cell whose revision is no longer ``rev`` (the one the agent
    read) or that is too large for an edit to carry."""
    at = find(cells, cell_id, index)
    cell = cells[at]
    source = source_of(cell)
    now = revision(type_of(cell), source)
    if rev is not None and rev != now:
        raise EditRefused(
            f"cell {at} changed since you read it (its revision is {now}, not {rev}); "
            f"its current source:\n{clip(source, MAX_SOURCE)}"
        )
    _bounded(source, f"cell {at}")
    return at


def _edit(op: Literal["edit", "delete", "move"], path: str, cells: Cells, at: int) -> CellEdit:
    cell = cells[at]
    source = source_of(cell)
    edit: CellEdit = {
        "op": op,
        "path": path,
        "cellType": type_of(cell),
        "index": at,
        "before": source,
        "after": source,
    }
    if isinstance(cell.get("id"), str):
        edit["cellId"] = cell["id"]
    return edit


def plan_insert(
    cells: Cells,
    path: str,
    source: str,
    cell_type: str = "code",
    index: int | None = None,
    after_cell_id: str | None = None,
) -> CellEdit:
    """A new cell at ``index`` (None: the end), or right after the cell ``after_cell_id``."""
    if cell_type not in CELL_TYPES:
        raise EditRefused(f"cell_type must be one of {', '.join(CELL_TYPES)}")
    if index is not None and after_cell_id is not None:
        raise EditRefused("give index or after_cell_id, not both")
    if after_cell_id is not None:
        at = find(cells, after_cell_id, None) + 1
    elif index is None:
        at = len(cells)
    elif 0 <= index <= len(cells):
        at = index
    else:
        raise EditRefused(f"index {index} is out of range: a new cell goes at 0..{len(cells)}")
    return {
        "op": "insert",
        "path": path,
        "cellType": cell_type,
        "index": at,
        "before": "",
        "after": _bounded(source, "the source"),
    }


def plan_edit(
    cells: Cells, path: str, at: int, source: str | None, old: str | None, new: str | None
) -> CellEdit:
    """Cell ``at`` gets the whole new ``source``, or its one ``old`` replaced by ``new``."""
    edit = _edit("edit", path, cells, at)
    before = edit["before"]
    if source is not None:
        if old is not None or new is not None:
            raise EditRefused("give the whole source, or old and new, not both")
        after = source
    elif old is None or new is None:
        raise EditRefused("give the new source, or old and new")
    elif not old:
        raise EditRefused("old is empty: give the exact text to replace")
    else:
        found = before.count(old)
        if found != 1:
            raise EditRefused(
                f"old occurs {found} times in cell {at}; it must occur exactly once "
                "(include more of the text around it, or give the whole source)"
            )
        after = before.replace(old, new, 1)
    if after == before:
        raise EditRefused(f"the edit leaves cell {at} as it is")
    edit["after"] = _bounded(after, "the new source")
    return edit


def plan_delete(cells: Cells, path: str, at: int) -> CellEdit:
    edit = _edit("delete", path, cells, at)
    edit["after"] = ""
    return edit


def plan_move(cells: Cells, path: str, at: int, to_index: int) -> CellEdit:
    """Cell ``at`` taken out and put back so that it ends at ``to_index``."""
    if not 0 <= to_index < len(cells):
        raise EditRefused(f"to_index {to_index} is out of range: 0..{len(cells) - 1}")
    if to_index == at:
        raise EditRefused(f"the cell is at index {at} already")
    edit = _edit("move", path, cells, at)
    edit["toIndex"] = to_index
    return edit


def _arg(args: Mapping[str, Any], key: str, kind: type[T]) -> T | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise EditRefused(f"{key} must be {'an integer' if kind is int else 'a string'}")
    return value


def _needed(value: T | None, key: str) -> T:
    if value is None:
        raise EditRefused(f"{key} is needed")
    return value


def plan(tool: str, args: Mapping[str, Any], cells: Cells, path: str) -> CellEdit:
    """The edit of one edit tool's call (``EDIT_TOOLS``) from its raw arguments."""
    if tool == "insert_cell":
        return plan_insert(
            cells,
            path,
            _needed(_arg(args, "source", str), "source"),
            _arg(args, "cell_type", str) or "code",
            _arg(args, "index", int),
            _arg(args, "after_cell_id", str),
        )
    if tool not in EDIT_TOOLS:
        raise EditRefused(f"{clip(tool, 80)!r} is no edit tool")
    cell_id, index, rev = (
        _arg(args, "cell_id", str),
        _arg(args, "index", int),
        _arg(args, "rev", str),
    )
    at = named(cells, cell_id, index, rev)
    if tool == "edit_cell":
        source, old, new = (_arg(args, key, str) for key in ("source", "old", "new"))
        return plan_edit(cells, path, at, source, old, new)
    if tool == "delete_cell":
        return plan_delete(cells, path, at)
    return plan_move(cells, path, at, _needed(_arg(args, "to_index", int), "to_index"))
