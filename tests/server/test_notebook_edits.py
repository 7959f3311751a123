"""The edit tools in server mode, called over MCP as an agent calls them: a notebook with
no page open, so each edit lands in its saved file through the contents manager; the
review is a stand-in that accepts or rejects (the chat's own review is tested with it)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from acp_notebook.agent.mcp_servers import SECRET_HEADER
from acp_notebook.notebook_tools.cells import revision
from acp_notebook.notebook_tools.mcp_endpoint import MAX_BODY
from acp_notebook.server.app import AcpNotebookApp
from acp_notebook.wire.contracts import MAX_EDIT_SOURCE, CellEdit
from acp_notebook.wire.review import Review
from tests.server.test_notebook_tools_server import chat_endpoint, open_notebook, tool
from tests.support.mcp_client import call_tool, post, text_of


class Reviewer:
    """Answers every review with ``accept``; ``during`` runs while the review is open."""

    def __init__(self, accept: bool = True) -> None:
        self.accept = accept
        self.edits: list[CellEdit] = []
        self.during: Callable[[], Awaitable[None]] | None = None

    async def __call__(self, edit: CellEdit) -> Review:
        self.edits.append(edit)
        if self.during is not None:
            await self.during()
        return Review(True, "accepted by Ana") if self.accept else Review(False, "rejected by Ana")


async def saved_cells(jp_fetch: Any, path: str) -> list[dict[str, Any]]:
    model = json.loads((await jp_fetch("api", "contents", path)).body)
    return list(model["content"]["cells"])


async def put(jp_fetch: Any, path: str, cells: list[dict[str, Any]]) -> None:
    """The user saves the notebook (another page, an editor): the file changes."""
    model = json.loads((await jp_fetch("api", "contents", path)).body)
    model["content"]["cells"] = cells
    body = {"type": "notebook", "format": "json", "content": model["content"]}
    await jp_fetch("api", "contents", path, method="PUT", body=json.dumps(body))


async def refused(endpoint: Any, name: str, **arguments: object) -> str:
    """An edit not made: an error of the tool call; its text after the SDK's prefix."""
    result = await call_tool(endpoint.url, endpoint.secret, name, dict(arguments))
    assert result.is_error, text_of(result)
    return text_of(result).removeprefix(f"Error executing tool {name}: ")


async def edits_chat(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any], path: str
) -> tuple[Any, Reviewer, str]:
    kernel_id = await open_notebook(jp_fetch, path, "Edits")
    _, _, endpoint = await chat_endpoint(extension, cells, kernel_id)
    reviewer = Reviewer()
    endpoint.review = reviewer
    return endpoint, reviewer, kernel_id


async def test_insert_edit_move_delete_land_in_the_saved_file_after_review(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    endpoint, reviewer, _ = await edits_chat(extension, jp_fetch, cells, "edits.ipynb")
    title, code = [c["id"] for c in await saved_cells(jp_fetch, "edits.ipynb")]
    read = await tool(endpoint, "read_cells")
    assert read.startswith("Notebook edits.ipynb (the saved file): 2 cells")

    said = await tool(endpoint, "insert_cell", source="df.plot()")
    new = (await saved_cells(jp_fetch, "edits.ipynb"))[2]
    assert new["source"] == "df.plot()" and new["cell_type"] == "code"
    rev = revision("code", "df.plot()")
    assert said == f"Inserted code cell id={new['id']} at index 2 (rev={rev}) in the saved file."
    assert reviewer.edits[-1] == {
        "op": "insert",
        "path": "edits.ipynb",
        "cellType": "code",
        "index": 2,
        "before": "",
        "after": "df.plot()",
    }
    said = await tool(
        endpoint, "insert_cell", source="## Notes", cell_type="markdown", after_cell_id=title
    )
    notes = (await saved_cells(jp_fetch, "edits.ipynb"))[1]
    assert notes["source"] == "## Notes" and notes["cell_type"] == "markdown"
    assert said.startswith(f"Inserted markdown cell id={notes['id']} at index 1 ")

    said = await tool(
        endpoint, "edit_cell", cell_id=code, old="describe()", new="describe(include='all')"
    )
    assert (await saved_cells(jp_fetch, "edits.ipynb"))[2]["source"] == "df.describe(include='all')"
    rev = revision("code", "df.describe(include='all')")
    assert said == f"Edited cell id={code} at index 2: its rev is now {rev}, in the saved file."
    await tool(endpoint, "edit_cell", index=3, source="df.plot(kind='bar')")
    assert (await saved_cells(jp_fetch, "edits.ipynb"))[3]["source"] == "df.plot(kind='bar')"

    said = await tool(endpoint, "move_cell", cell_id=code, to_index=0)
    assert said.startswith(f"Moved cell id={code} from index 2 to index 0 ")
    order = [c["id"] for c in await saved_cells(jp_fetch, "edits.ipynb")]
    assert order == [code, title, notes["id"], new["id"]]
    said = await tool(endpoint, "delete_cell", cell_id=notes["id"])
    assert said == f"Deleted cell id={notes['id']} (it was at index 2) from the saved file."
    assert [c["id"] for c in await saved_cells(jp_fetch, "edits.ipynb")] == [code, title, new["id"]]
    assert [e["op"] for e in reviewer.edits] == [
        "insert",
        "insert",
        "edit",
        "edit",
        "move",
        "delete",
    ]


async def test_a_rejected_edit_changes_nothing(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    endpoint, reviewer, _ = await edits_chat(extension, jp_fetch, cells, "reject.ipynb")
    before = await saved_cells(jp_fetch, "reject.ipynb")
    reviewer.accept = False
    assert await refused(endpoint, "insert_cell", source="x = 1") == "Not done: rejected by Ana"
    assert await refused(endpoint, "delete_cell", index=0) == "Not done: rejected by Ana"
    assert await saved_cells(jp_fetch, "reject.ipynb") == before
    endpoint.review = None  # no chat to review in
    said = await refused(endpoint, "insert_cell", source="x = 1")
    assert said == "Not done: this chat has no way to review notebook edits."
    assert len(reviewer.edits) == 2
    assert not (await call_tool(endpoint.url, endpoint.secret, "read_cells")).is_error


async def test_stale_unknown_and_changed_since_read_are_refused_before_review(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    endpoint, reviewer, _ = await edits_chat(extension, jp_fetch, cells, "stale.ipynb")
    saved = await saved_cells(jp_fetch, "stale.ipynb")
    code_id = saved[1]["id"]
    old_rev = revision("code", "df.describe()")
    assert f"id={code_id} rev={old_rev}" in await tool(endpoint, "read_cells")

    said = await refused(endpoint, "edit_cell", cell_id="no-such-cell", source="x")
    assert said == "Not done: no cell has the id 'no-such-cell': read_cells shows the ids"
    said = await refused(endpoint, "delete_cell", index=7)
    assert said == "Not done: index 7 is out of range: the notebook has 2 cells"

    # The user saves a change behind the agent's back: its next edit is refused.
    saved[1]["source"] = "df.describe()  # the user's"
    await put(jp_fetch, "stale.ipynb", saved)
    said = await refused(endpoint, "insert_cell", source="x = 1")
    assert said == "Not done: the file changed since you read it: read_cells again"
    # Read again; an edit that names the old revision is refused with the current source.
    await tool(endpoint, "read_cells")
    said = await refused(endpoint, "edit_cell", cell_id=code_id, source="df.head()", rev=old_rev)
    now = revision("code", "df.describe()  # the user's")
    assert said == (
        f"Not done: cell 1 changed since you read it (its revision is {now}, not {old_rev}); "
        "its current source:\ndf.describe()  # the user's"
    )
    assert reviewer.edits == []
    said = await tool(endpoint, "edit_cell", cell_id=code_id, source="df.head()", rev=now)
    assert said.startswith(f"Edited cell id={code_id} at index 1")

    # The user saves while the edit waits for review: it is refused, the save stays.
    async def user_saves() -> None:
        current = await saved_cells(jp_fetch, "stale.ipynb")
        current[1]["source"] = "df.tail()  # typed during the review"
        await put(jp_fetch, "stale.ipynb", current)

    reviewer.during = user_saves
    said = await refused(endpoint, "edit_cell", cell_id=code_id, source="df.sample()")
    assert said == "Not done: the file changed since you read it: read_cells again"
    assert (await saved_cells(jp_fetch, "stale.ipynb"))[1][
        "source"
    ] == "df.tail()  # typed during the review"


async def test_a_notebook_deleted_during_the_review_is_refused(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    endpoint, reviewer, _ = await edits_chat(extension, jp_fetch, cells, "gone.ipynb")

    async def deleted() -> None:
        await jp_fetch("api", "contents", "gone.ipynb", method="DELETE")

    reviewer.during = deleted
    said = await refused(endpoint, "insert_cell", source="x = 1")
    assert said.startswith("Not done: the notebook gone.ipynb cannot be read: "), said
    assert "Not read: the notebook gone.ipynb cannot be read" in await tool(endpoint, "read_cells")


async def test_sources_too_large_get_a_clear_answer(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    endpoint, reviewer, _ = await edits_chat(extension, jp_fetch, cells, "big.ipynb")
    # Larger than any MCP request may be: the endpoint refuses it before parsing.
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "insert_cell", "arguments": {"source": "x" * 10_000_000}},
    }
    status = await post(endpoint.url, {SECRET_HEADER: endpoint.secret}, json.dumps(call).encode())
    assert status == 413
    # Within the request bound but above what an edit carries: the argument check (the
    # tool's schema) says so, naming the argument and its bound.
    size = MAX_EDIT_SOURCE + 1
    assert size < MAX_BODY
    said = await refused(endpoint, "insert_cell", source="y" * size)
    assert said == f"Not done: source is {size:,} characters; at most {MAX_EDIT_SOURCE:,}"
    assert reviewer.edits == [] and len(await saved_cells(jp_fetch, "big.ipynb")) == 2


async def test_preview_plans_the_edit_the_tool_then_has_reviewed(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    endpoint, reviewer, _ = await edits_chat(extension, jp_fetch, cells, "preview.ipynb")
    code_id = (await saved_cells(jp_fetch, "preview.ipynb"))[1]["id"]
    args = {"cell_id": code_id, "old": "describe", "new": "info"}
    claude = {"_meta": {"claudeCode": {"toolName": "mcp__notebook__edit_cell"}}, "rawInput": args}
    previewed = await endpoint.preview(claude)
    assert previewed == {
        "op": "edit",
        "path": "preview.ipynb",
        "cellType": "code",
        "index": 1,
        "cellId": code_id,
        "before": "df.describe()",
        "after": "df.info()",
    }
    assert await endpoint.preview({"title": "edit_cell", "rawInput": args}) == previewed
    assert (
        await endpoint.preview({"name": "mcp__notebook__edit_cell", "rawInput": args}) == previewed
    )
    # Nothing was applied or reviewed by a preview.
    assert (await saved_cells(jp_fetch, "preview.ipynb"))[1]["source"] == "df.describe()"
    await tool(endpoint, "edit_cell", **args)
    assert reviewer.edits == [previewed]
    # No edit tool, another server's tool, or an edit that cannot be planned: no preview.
    assert (
        await endpoint.preview({"title": "mcp__notebook__run_cell", "rawInput": {"index": 0}})
        is None
    )
    assert await endpoint.preview({"title": "mcp__other__edit_cell", "rawInput": args}) is None
    assert await endpoint.preview({"title": "Edit notebook.ipynb", "rawInput": args}) is None
    assert await endpoint.preview({"title": "delete_cell", "rawInput": {"index": 99}}) is None
    assert await endpoint.preview({"title": "delete_cell", "rawInput": "not a mapping"}) is None


async def test_active_cell_without_a_page(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    endpoint, _, _ = await edits_chat(extension, jp_fetch, cells, "active.ipynb")
    assert endpoint.agent == "demo"  # the name its edits are made in
    said = await tool(endpoint, "active_cell")
    assert said == "No page reports a selection: the notebook is reached through the saved file."


async def test_run_cell_runs_it_as_the_user_would_and_writes_its_outputs(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    endpoint, _, kernel_id = await edits_chat(extension, jp_fetch, cells, "run.ipynb")
    await tool(endpoint, "insert_cell", source="total = 6 * 7\nprint('total', total)\ntotal")
    said = await tool(endpoint, "run_cell", index=2)
    assert "[stdout]\ntotal 42" in said and "[result]\n42" in said
    ran = (await saved_cells(jp_fetch, "run.ipynb"))[2]
    count = ran["execution_count"]
    assert isinstance(count, int) and count >= 1
    assert [o["output_type"] for o in ran["outputs"]] == ["stream", "execute_result"]
    assert ran["outputs"][1]["data"]["text/plain"] == "42"
    assert said.endswith(f"[cell 2, id={ran['id']}: its outputs are in the notebook file]")
    # It ran in the user's namespace, in the history: the counts go on from it.
    kernel = await cells(kernel_id)
    assert "42" in await kernel.run("print(total)")
    await tool(endpoint, "run_cell", cell_id=ran["id"])
    assert (await saved_cells(jp_fetch, "run.ipynb"))[2]["execution_count"] == count + 2
    assert (await tool(endpoint, "run_cell", index=0)).startswith(
        "Not run: cell 0 is no code cell."
    )
    assert await tool(endpoint, "run_cell", cell_id="nope") == (
        "Not run: no cell has the id 'nope': read_cells shows the ids"
    )


async def test_a_restart_during_run_cell_ends_it_with_what_it_printed(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    endpoint, _, kernel_id = await edits_chat(extension, jp_fetch, cells, "restart.ipynb")
    # Deaf to the restart's interrupt: only the end of its kernel ends it.
    code = (
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "print('started', flush=True)\ntime.sleep(60)"
    )
    await tool(endpoint, "insert_cell", source=code)
    run = asyncio.create_task(tool(endpoint, "run_cell", index=2, timeout=120))
    async with asyncio.timeout(30):
        while not (await tool(endpoint, "kernel_state")).startswith(
            "busy: an agent's run_cell is running"
        ):
            await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)  # its print reaches the runner
    await jp_fetch("api", "kernels", kernel_id, "restart", method="POST", body="")
    said = await asyncio.wait_for(run, 15)
    assert "started" in said and "[the kernel was restarted while this ran]" in said
    cell = (await saved_cells(jp_fetch, "restart.ipynb"))[2]
    assert cell["outputs"][0]["text"] == "started\n" and cell["source"] == code


async def test_a_notebook_closed_during_the_review_gets_the_edit_in_its_file(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    endpoint, reviewer, kernel_id = await edits_chat(extension, jp_fetch, cells, "closed.ipynb")
    sessions = json.loads((await jp_fetch("api", "sessions")).body)
    [session] = [s for s in sessions if s["kernel"]["id"] == kernel_id]

    async def closed() -> None:  # the user closes the notebook: its session and kernel end
        await jp_fetch("api", "sessions", session["id"], method="DELETE")

    reviewer.during = closed
    # The chat ends with its kernel: the client's next request (it lists the tools to
    # check the answer) is refused, as the agent ends with the chat.
    with pytest.raises(Exception, match="unhandled errors in a TaskGroup"):
        await tool(endpoint, "insert_cell", source="kept = True")
    assert await post(endpoint.url, {SECRET_HEADER: endpoint.secret}, b"{}") == 401
    # The document was the saved file all along: with no page, the edit lands there.
    assert (await saved_cells(jp_fetch, "closed.ipynb"))[2]["source"] == "kept = True"
