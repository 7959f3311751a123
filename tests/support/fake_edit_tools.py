"""A stand-in for the chat's ``notebook`` MCP server's edit tools, over stdio, for the demo
agent's ``edit`` keyword: ``python -m tests.support.fake_edit_tools``.

It keeps a notebook of its own in memory, answers as the real tools do ("Inserted ...
id=<id> index=<n> rev=<rev>") and runs a cell's source with ``exec``. The tools named in
``FAKE_EDIT_TOOLS_REFUSE`` (comma-separated) refuse instead (an MCP tool error that says why).
"""

from __future__ import annotations

import contextlib
import io
import os

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

REFUSE = set(filter(None, os.environ.get("FAKE_EDIT_TOOLS_REFUSE", "").split(",")))
server = MCPServer("notebook", log_level="WARNING")
cells: list[dict[str, str]] = [{"id": "first", "source": "x = 1"}]


def find(cell_id: str | None, index: int | None, tool: str) -> dict[str, str]:
    if tool in REFUSE:
        raise ToolError(f"{tool} refused: the user rejected the change")
    found = [c for i, c in enumerate(cells) if c["id"] == cell_id or i == index]
    if not found:
        raise ToolError(f"no cell id={cell_id} index={index}")
    return found[0]


def where(cell: dict[str, str]) -> str:
    return f"id={cell['id']} index={cells.index(cell)} rev=r{len(cell['source'])}"


@server.tool()
def insert_cell(source: str, cell_type: str = "code", index: int | None = None) -> str:
    if "insert_cell" in REFUSE:
        raise ToolError("insert_cell refused: no notebook document is reachable")
    cell = {"id": f"cell-{len(cells)}", "source": source}
    cells.insert(len(cells) if index is None else index, cell)
    return f"Inserted {cell_type} cell {where(cell)}"


@server.tool()
def edit_cell(old: str, new: str, cell_id: str | None = None, index: int | None = None) -> str:
    cell = find(cell_id, index, "edit_cell")
    if cell["source"].count(old) != 1:
        raise ToolError(f"{old!r} is not once in the cell")
    cell["source"] = cell["source"].replace(old, new)
    return f"Edited cell {where(cell)}"


@server.tool()
def run_cell(timeout: float, cell_id: str | None = None, index: int | None = None) -> str:
    cell = find(cell_id, index, "run_cell")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(cell["source"], {})
    return f"Ran cell {where(cell)}\n{out.getvalue()}"


if __name__ == "__main__":
    server.run("stdio")
