"""The notebook tools in local mode: served from a real kernel, called over real MCP."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.multikernelmanager import AsyncMultiKernelManager
from mcp import Client, StdioServerParameters

from acp_notebook.agent.mcp_servers import SECRET_HEADER, notebook_entry
from acp_notebook.notebook_tools.cells import revision
from tests.support.frontend import Cells, kernel_manager, local_kernel
from tests.support.kernel_chat import kernel_turn
from tests.support.mcp_client import call_tool, images_of, post, text_of

OPEN_CHAT = (
    "import json\n"
    "from acp_notebook.kernel.chat import Chat\n"
    "from acp_notebook.kernel.local_transport import local_client\n"
    "chat = Chat('demo', env={'ACP_DEMO_DELAY': '0'})\n"
    "_endpoint = local_client().hub.chats[chat.chat_id].session.notebook\n"
    "print('ENDPOINT ' + json.dumps([_endpoint.url, _endpoint.secret]))\n"
)


class Kernel:
    def __init__(self, cells: Cells, url: str, secret: str) -> None:
        self.cells, self.url, self.secret = cells, url, secret

    async def tool(self, tool: str, **arguments: object) -> str:
        return text_of(await call_tool(self.url, self.secret, tool, dict(arguments)))


async def start_kernel(manager: AsyncMultiKernelManager) -> Kernel:
    _kernel_id, cells = await local_kernel(manager)
    msg = cells.execute(OPEN_CHAT)
    url, secret = await cells.line(msg, "ENDPOINT ", timeout=60)
    return Kernel(cells, url, secret)


@pytest.fixture
async def kernels(tmp_path: Path) -> AsyncIterator[list[Kernel]]:
    manager = kernel_manager(tmp_path)
    started: list[Kernel] = []
    yield started  # the test starts what it needs with start_kernel(manager) below
    for kernel in started:
        await kernel.cells.stop()
    await manager.shutdown_all(now=True)


@pytest.fixture
async def kernel(tmp_path: Path) -> AsyncIterator[Kernel]:
    manager = kernel_manager(tmp_path)
    k = await start_kernel(manager)
    yield k
    await k.cells.stop()
    await manager.shutdown_all(now=True)


async def test_variables_answer_while_a_cell_runs(kernel: Kernel) -> None:
    await kernel.cells.run(
        "import pandas as pd\n"
        "from math import sqrt\n"
        "sales = pd.DataFrame({'region': ['north', 'south'], 'revenue': [10.5, 20.25]})\n"
        "count = 3\n"
        "def tidy(frame):\n    return frame\n"
    )
    busy = kernel.cells.execute("import time; time.sleep(30)")
    await asyncio.sleep(0.5)
    started = time.monotonic()
    listing = await kernel.tool("list_variables")
    took = time.monotonic() - started
    assert kernel.cells.busy(busy)
    assert took < 1.0, took
    assert "sales: pandas.DataFrame, (2, 2)" in listing
    assert "region (" in listing and "revenue (float64)" in listing
    assert "count: int" in listing and "pd:" not in listing and "time:" not in listing
    # The notebook's own function is the user's; the imported Chat class, the chat itself,
    # an imported function and IPython's In/Out/_ are not.
    names = [line.split(":")[0] for line in listing.splitlines()]
    assert names == ["count", "sales", "tidy"], listing
    inspected = await kernel.tool("inspect_variable", name="sales")
    assert "## columns\nregion:" in inspected and "revenue: float64" in inspected
    assert "## describe" in inspected and "20.25" in inspected
    assert kernel.cells.busy(busy)


async def test_last_error_and_run_code(kernel: Kernel) -> None:
    msg = kernel.cells.execute("def f():\n    raise ValueError('the answer is not 41')\nf()\n")
    await kernel.cells.finished(msg)
    error = await kernel.tool("last_error")
    assert error.startswith("ValueError: the answer is not 41")
    assert "raise ValueError('the answer is not 41')" in error  # the cell's source
    assert "\x1b[" not in error

    result = await kernel.tool("run_code", code="x = 6 * 7\nprint('printed', x)\nx + 1")
    assert "printed 42" in result and "43" in result
    assert "x: int" in await kernel.tool("list_variables")

    figure = await call_tool(
        kernel.url,
        kernel.secret,
        "run_code",
        {"code": "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()"},
    )
    images = images_of(figure)
    assert len(images) == 1 and images[0].mime_type == "image/png", text_of(figure)
    assert base64.b64decode(images[0].data).startswith(b"\x89PNG")

    cells = await kernel.tool("read_cells", start=0, count=50)
    assert "f()" in cells
    # Executions of the kernel's history have no cell ids; their revisions are given.
    assert "no cell ids" in cells and " id=" not in cells
    failing = "def f():\n    raise ValueError('the answer is not 41')\nf()"
    assert f"] rev={revision('code', failing)}\n{failing}" in cells


async def test_run_code_waits_for_a_running_cell_with_progress(kernel: Kernel) -> None:
    busy = kernel.cells.execute("import time; time.sleep(4); ran_first = True")
    await asyncio.sleep(0.3)
    progress: list[str | None] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    result = await call_tool(
        kernel.url, kernel.secret, "run_code", {"code": "print(ran_first)"}, on_progress
    )
    assert "True" in text_of(result)
    assert any(m and m.startswith("waiting for the kernel") for m in progress), progress
    await kernel.cells.finished(busy)


async def test_run_code_is_interrupted_at_its_timeout(kernel: Kernel) -> None:
    started = time.monotonic()
    result = await kernel.tool(
        "run_code", code="import time\nprint('before')\ntime.sleep(60)", timeout=2
    )
    assert time.monotonic() - started < 15
    assert "before" in result and "KeyboardInterrupt" in result and "interrupted" in result
    assert "2" in await kernel.tool("run_code", code="1 + 1")  # the kernel goes on


async def test_a_timeout_that_is_not_a_number_is_refused(kernel: Kernel) -> None:
    # The client sends NaN and Infinity as null; the server refuses them as literals too.
    for timeout in (float("nan"), float("inf"), "soon"):
        said = await kernel.tool("run_code", code="ran = 1", timeout=timeout)
        assert said.startswith("Not done: timeout is "), said
        assert said.endswith("; it must be a finite number"), said
    assert "NameError" in await kernel.tool("run_code", code="ran")  # nothing ran


async def test_hostile_values_stay_bounded(kernel: Kernel) -> None:
    await kernel.cells.run(
        "import time\n"
        "class Raises:\n    def __repr__(self): raise RuntimeError('repr exploded')\n"
        "class Sleeps:\n    def __repr__(self): time.sleep(60); return 'late'\n"
        "class Huge:\n    def __repr__(self): return 'x' * (1 << 30)\n"
        "raises, sleeps, huge = Raises(), Sleeps(), Huge()\n"
        "big = 'y' * (1 << 30)\n"
        "globals().update({f'v{i:06d}': i for i in range(100_000)})\n",
        timeout=60,
    )
    started = time.monotonic()
    listing = await kernel.tool("list_variables")
    assert time.monotonic() - started < 10
    assert len(listing) < 200 * 300
    assert "99800 more variables not listed" in listing or "more variables not listed" in listing
    for name in ("raises", "sleeps", "huge"):
        started = time.monotonic()
        text = await kernel.tool("inspect_variable", name=name)
        assert time.monotonic() - started < 15, name
        assert len(text) <= 20_000
    assert "repr exploded" in await kernel.tool("inspect_variable", name="raises")
    big = await kernel.tool("inspect_variable", name="big")
    assert "1073741824" in big and len(big) <= 20_000


async def test_the_kernel_hosting_the_chat_is_not_interrupted_or_restarted(kernel: Kernel) -> None:
    await kernel.cells.run("kept = 'still here'")
    state = await kernel.tool("kernel_state")
    assert state.startswith("This chat runs inside the kernel itself (local mode")
    assert state.endswith("no cell is running; no run_code of an agent is running.")
    # A cell that runs is named, by its number (this client sends no cell id).
    sleeping = kernel.cells.execute("import time\ntime.sleep(3)")
    async with asyncio.timeout(5):
        while "a cell (In [" not in (state := await kernel.tool("kernel_state")):
            await asyncio.sleep(0.05)
    assert "is running: import time;" in state, state
    await kernel.cells.finished(sleeping)
    for tool in ("interrupt_kernel", "restart_kernel"):
        said = await kernel.tool(tool)
        assert said.startswith("Not done: This chat runs inside the kernel itself"), said
    assert "still here" in await kernel.tool("run_code", code="kept")
    assert await kernel.cells.run("print(kept)") == "still here\n"


async def test_the_endpoint_refuses_wrong_secrets_and_bad_bodies(kernel: Kernel) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
    assert await post(kernel.url, {}, body) == 401
    assert await post(kernel.url, {SECRET_HEADER: "wrong"}, body) == 401
    assert await post(kernel.url, {SECRET_HEADER: kernel.secret + "x"}, body) == 401
    too_big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"a": "z" * 300_000}})
    assert await post(kernel.url, {SECRET_HEADER: kernel.secret}, too_big.encode()) == 413
    deep = b'{"a":' * 100 + b"1" + b"}" * 100
    assert await post(kernel.url, {SECRET_HEADER: kernel.secret}, deep) == 400

    # A closed chat's secret is refused from then on.
    await kernel.cells.run("chat.close()")
    assert await post(kernel.url, {SECRET_HEADER: kernel.secret}, body) == 401


async def test_one_kernels_secret_does_not_open_another(
    kernels: list[Kernel], tmp_path: Path
) -> None:
    manager = kernel_manager(tmp_path)
    try:
        a, b = await start_kernel(manager), await start_kernel(manager)
        kernels.extend([a, b])
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
        assert await post(a.url, {SECRET_HEADER: b.secret}, body) == 401
        await a.cells.run("only_in_a = 1")
        assert "only_in_a" not in await b.tool("list_variables")
    finally:
        await manager.shutdown_all(now=True)


async def test_the_stdio_proxy_reaches_the_same_tools(kernel: Kernel) -> None:
    await kernel.cells.run("through_the_proxy = [1, 2, 3]")
    entry = notebook_entry(kernel.url, kernel.secret, {"mcpCapabilities": {"sse": True}})
    env = {**os.environ, **{pair["name"]: pair["value"] for pair in entry["env"]}}
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    async with Client(params) as client:
        tools = await client.list_tools()
        assert {t.name for t in tools.tools} == {
            "list_variables",
            "inspect_variable",
            "read_cells",
            "last_error",
            "run_code",
            "kernel_state",
            "interrupt_kernel",
            "restart_kernel",
            "insert_cell",
            "edit_cell",
            "delete_cell",
            "move_cell",
            "run_cell",
            "active_cell",
        }
        listing = text_of(await client.call_tool("list_variables", {}))
    assert "through_the_proxy: list, len 3" in listing


async def notebook_turn(kernel: Kernel, frame: str, setup: str) -> dict[str, Any]:
    """Defines a DataFrame (``frame``: ``name = pd.DataFrame(...)``) in the kernel, runs
    ``setup``, then a ``notebook`` turn of its chat: the ended turn."""
    await kernel.cells.run(f"import pandas as pd\n{frame}\n{setup}")
    ended = await kernel_turn(kernel.cells, "notebook")
    assert ended["ok"], ended
    return ended


async def test_the_demo_agent_reads_the_notebook_and_runs_a_line(kernel: Kernel) -> None:
    sales = "sales = pd.DataFrame({'region': ['north', 'south'], 'revenue': [10.5, 20.25]})"
    asking = "asked = []\nchat.on_permission(lambda request: asked.append(request) or 'allow-once')"
    ended = await notebook_turn(kernel, sales, asking)
    assert "I inspected `sales` (pandas.DataFrame) and ran `sales.shape`: (2, 2)" in ended["text"]
    calls = json.loads(
        await kernel.cells.run(
            "print(json.dumps([(c['title'], c['status'], c['rawInput']) "
            "for c in chat.state['toolCalls'].values()]))"
        )
    )
    assert calls == [
        ["mcp__notebook__list_variables", "completed", {}],
        ["mcp__notebook__inspect_variable", "completed", {"name": "sales"}],
        ["mcp__notebook__run_code", "completed", {"code": "sales.shape"}],
    ]
    asked = await kernel.cells.run("print(asked[0]['toolCall']['rawInput']['code'])")
    assert asked.strip() == "sales.shape"


async def test_an_agent_without_http_mcp_gets_the_stdio_proxy(kernel: Kernel) -> None:
    ended = await notebook_turn(
        kernel,
        "frame = pd.DataFrame({'a': [1]})",
        "chat.close()\n"
        "chat = Chat('demo', env={'ACP_DEMO_DELAY': '0', 'ACP_DEMO_STDIO_MCP': '1'})\n"
        "chat.on_permission(lambda request: 'allow-once')\n",
    )
    assert "I inspected `frame` (pandas.DataFrame) and ran `frame.shape`: (1, 1)" in ended["text"]


async def test_run_code_from_a_turn_a_cell_waits_for_says_so_at_once(kernel: Kernel) -> None:
    # The cell awaits the turn; code queued behind it could only run after the turn.
    out = await kernel.cells.run(
        "chat.on_permission(lambda request: 'allow-once')\n"
        "turn = await chat.ask('notebook')\n"
        "print(turn.ok)\n"
        "print(chat.state['toolCalls']['call-1-run']['content'][0]['content']['text'])\n",
        timeout=30,
    )
    assert out.startswith("True\nNot run: a cell of this kernel is waiting for this chat's turn")


async def test_the_secret_stays_out_of_widget_state_and_the_agents_command_line(
    kernel: Kernel,
) -> None:
    out = await kernel.cells.run(
        "import json\n"
        "from pathlib import Path\n"
        "await chat.ready()\n"
        "_conn = local_client().hub.chats[chat.chat_id].session.conn\n"
        "_argv = ' '.join(Path(f'/proc/{p}/cmdline').read_text() for p in "
        "{_conn.pid, _conn.agent_pid} if p and Path(f'/proc/{p}/cmdline').exists())\n"
        "print(json.dumps([json.dumps(chat.state), json.dumps(chat.snapshot), "
        "str(chat._repr_mimebundle_()), _argv]))\n"
    )
    state, snapshot, bundle, argv = json.loads(out)
    assert "acp_notebook.demo.agent" in argv
    for shown in (state, snapshot, bundle, argv):
        assert kernel.secret not in shown


async def test_edits_in_local_mode_go_to_the_notebook_file_the_frontend_names(
    kernel: Kernel, tmp_path: Path
) -> None:
    await kernel.cells.run(
        "from acp_notebook.wire.review import Review\n"
        "async def _accept(edit):\n"
        "    return Review(True, 'accepted by the test')\n"
        "_endpoint.review = _accept\n"
    )
    said = await kernel.tool("insert_cell", source="x = 1")
    prefix = "Error executing tool insert_cell: Not done: no notebook document is reachable"
    assert said.startswith(f"{prefix} in local mode: "), said
    assert "input history" in await kernel.tool("read_cells")

    path = tmp_path / "local.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Local")]
    nbformat.write(notebook, str(path))
    # As VS Code names the notebook a kernel runs.
    await kernel.cells.run(f"__vsc_ipynb_file__ = {str(path)!r}")
    read = await kernel.tool("read_cells")
    assert read.startswith(f"Notebook {path} (the saved file (a page that has it open "), read
    said = await kernel.tool("insert_cell", source="answer = 6 * 7\nanswer")
    cell = nbformat.read(str(path), as_version=4).cells[1]
    assert cell.source == "answer = 6 * 7\nanswer"
    assert said.startswith(f"Inserted code cell id={cell.id} at index 1 ")
    ran = await kernel.tool("run_cell", cell_id=cell.id)
    assert "[result]\n42" in ran and "its outputs are in the notebook file" in ran
    cell = nbformat.read(str(path), as_version=4).cells[1]
    assert cell.outputs[0].data["text/plain"] == "42" and isinstance(cell.execution_count, int)
    # It ran in this kernel's namespace, as a cell of it.
    assert (await kernel.cells.run("print(answer)")).strip() == "42"


async def test_a_chat_opened_for_a_notebook_file_edits_it(kernel: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "named.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(notebook, str(path))
    # As a notebook run by nbval names itself: no frontend says which file the kernel runs.
    out = await kernel.cells.run(
        "from acp_notebook.wire.review import Review\n"
        "async def _accept(edit):\n"
        "    return Review(True, 'accepted by the test')\n"
        f"named = Chat('demo', env={{'ACP_DEMO_DELAY': '0'}}, notebook={str(path)!r})\n"
        "_named = local_client().hub.chats[named.chat_id].session.notebook\n"
        "_named.review = _accept\n"
        "print(json.dumps([_named.url, _named.secret]))\n"
    )
    url, secret = json.loads(out)
    said = text_of(await call_tool(url, secret, "insert_cell", {"source": "y = 2", "index": 0}))
    assert said.startswith("Inserted code cell id=")
    assert [c.source for c in nbformat.read(str(path), as_version=4).cells] == ["y = 2", "x = 1"]
    # The kernel's first chat named no notebook: it still has none.
    assert "input history" in await kernel.tool("read_cells")
