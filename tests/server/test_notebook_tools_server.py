"""The notebook tools in server mode: the endpoint in the Jupyter server, a real kernel
opened through the sessions API (so the server knows its notebook), called over MCP."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from typing import Any

import nbformat
import pytest

from acp_notebook.agent.mcp_servers import SECRET_HEADER
from acp_notebook.notebook_tools.cells import revision
from acp_notebook.server.app import AcpNotebookApp
from tests.support.mcp_client import call_tool, images_of, post, text_of
from tests.support.processes import exists
from tests.support.server_peers import OPEN_CHAT

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()


def saved_notebook(marker: str) -> dict[str, Any]:
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("df.describe()", execution_count=3)
    code.outputs = [
        nbformat.v4.new_output(
            "error",
            ename="KeyError",
            evalue="'price'",
            traceback=["\x1b[31mKeyError\x1b[0m: 'price'"],
        ),
        nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
    ]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {marker}"), code]
    return dict(nb)


async def open_notebook(jp_fetch: Any, path: str, marker: str) -> str:
    """Save a notebook and start a session for it; the session's kernel id."""
    body = {"type": "notebook", "format": "json", "content": saved_notebook(marker)}
    await jp_fetch("api", "contents", path, method="PUT", body=json.dumps(body))
    response = await jp_fetch(
        "api",
        "sessions",
        method="POST",
        body=json.dumps({"path": path, "type": "notebook", "kernel": {"name": "python3"}}),
    )
    return str(json.loads(response.body)["kernel"]["id"])


async def chat_endpoint(
    extension: AcpNotebookApp, cells: Callable[[str], Any], kernel_id: str, options: str = ""
) -> tuple[str, str, Any]:
    kernel = await cells(kernel_id)
    out = await kernel.run(
        OPEN_CHAT.replace('env={"ACP_DEMO_DELAY": "0"}', f'env={{"ACP_DEMO_DELAY": "0"}}{options}')
    )
    chat_id = json.loads(out.split("chat:", 1)[1])["chat"]
    hub = extension.hubs.get(kernel_id)
    assert hub is not None
    return chat_id, kernel_id, hub.chats[chat_id].session.notebook


async def test_cells_and_run_code_from_the_server(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    kernel_id = await open_notebook(jp_fetch, "analysis.ipynb", "Sales analysis")
    _, _, endpoint = await chat_endpoint(extension, cells, kernel_id)
    read = await call_tool(endpoint.url, endpoint.secret, "read_cells", {"start": 0, "count": 10})
    text = text_of(read)
    assert "analysis.ipynb" in text and "# Sales analysis" in text
    saved = json.loads((await jp_fetch("api", "contents", "analysis.ipynb")).body)["content"]
    code_id, code_rev = saved["cells"][1]["id"], revision("code", "df.describe()")
    assert f"--- cell 1 (code) [3] id={code_id} rev={code_rev}\ndf.describe()" in text
    assert "[error] KeyError: 'price'" in text and "\x1b[" not in text
    assert [i.mime_type for i in images_of(read)] == ["image/png"]

    kernel = await cells(kernel_id)
    busy = kernel.execute("import time; time.sleep(3); ready = 'yes'")
    await asyncio.sleep(0.3)
    result = await call_tool(endpoint.url, endpoint.secret, "run_code", {"code": "print(ready)"})
    assert "yes" in text_of(result)
    await kernel.finished(busy)


async def test_each_chat_has_its_own_secret(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    a = await open_notebook(jp_fetch, "a.ipynb", "Notebook A")
    b = await open_notebook(jp_fetch, "b.ipynb", "Notebook B")
    _, _, endpoint_a = await chat_endpoint(extension, cells, a)
    _, _, endpoint_b = await chat_endpoint(extension, cells, b)
    assert endpoint_a.url == endpoint_b.url and endpoint_a.secret != endpoint_b.secret
    assert await post(endpoint_a.url, {}, LIST) == 401
    assert await post(endpoint_a.url, {SECRET_HEADER: "guess"}, LIST) == 401
    # B's secret reads B's notebook, never A's.
    read = text_of(await call_tool(endpoint_b.url, endpoint_b.secret, "read_cells"))
    assert "Notebook B" in read and "Notebook A" not in read
    # A closed chat's secret opens nothing any more.
    await (await cells(b)).run("chat.close()")
    assert await post(endpoint_b.url, {SECRET_HEADER: endpoint_b.secret}, LIST) == 401
    assert await post(endpoint_a.url, {SECRET_HEADER: endpoint_a.secret}, LIST) == 200


async def test_chat_can_turn_the_tools_off(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    kernel_id = await open_notebook(jp_fetch, "off.ipynb", "Off")
    _, _, endpoint = await chat_endpoint(extension, cells, kernel_id, ", notebook_tools=False")
    assert endpoint is None


@pytest.mark.acp_config(AcpNotebookApp={"notebook_tools": False})
async def test_the_server_can_turn_the_tools_off(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    kernel_id = await open_notebook(jp_fetch, "off.ipynb", "Off")
    _, _, endpoint = await chat_endpoint(extension, cells, kernel_id)
    assert endpoint is None


async def test_variables_and_last_error_come_from_the_kernel_while_it_runs(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    kernel_id = await open_notebook(jp_fetch, "vars.ipynb", "Vars")
    _, _, endpoint = await chat_endpoint(extension, cells, kernel_id)
    kernel = await cells(kernel_id)
    failed = kernel.execute(
        "import pandas as pd\n"
        "prices = pd.DataFrame({'item': ['tea', 'cake'], 'price': [2.5, 4.0]})\n"
        "prices['cost']\n"
    )
    await kernel.finished(failed)
    busy = kernel.execute("import time; time.sleep(30)")
    await asyncio.sleep(0.5)
    started = asyncio.get_running_loop().time()
    listing = text_of(await call_tool(endpoint.url, endpoint.secret, "list_variables"))
    assert asyncio.get_running_loop().time() - started < 1.0
    assert "prices: pandas.DataFrame, (2, 2)" in listing and "price (float64)" in listing
    inspected = text_of(
        await call_tool(endpoint.url, endpoint.secret, "inspect_variable", {"name": "prices"})
    )
    assert "## columns\nitem:" in inspected and "price: float64" in inspected
    error = text_of(await call_tool(endpoint.url, endpoint.secret, "last_error"))
    assert error.startswith("KeyError: 'cost'") and "prices['cost']" in error
    assert kernel.busy(busy)
    await extension._server.kernel_manager.interrupt_kernel(kernel_id)


async def test_cancelling_the_turn_interrupts_run_code(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    kernel_id = await open_notebook(jp_fetch, "cancel.ipynb", "Cancel")
    chat_id, _, endpoint = await chat_endpoint(extension, cells, kernel_id)
    code = "import time\nprint('started', flush=True)\ntime.sleep(60)\nprint('finished')"
    started = asyncio.get_running_loop().time()
    call = asyncio.create_task(
        call_tool(endpoint.url, endpoint.secret, "run_code", {"code": code, "timeout": 120})
    )
    await asyncio.sleep(2)
    hub = extension.hubs.get(kernel_id)
    assert hub is not None
    hub.chats[chat_id].session.cancel()  # what chat:cancel (the Stop button) does
    result = await asyncio.wait_for(call, 30)
    assert text_of(result) == "Cancelled: the turn was cancelled."
    # The kernel was interrupted: the next run starts at once, long before the 60 s sleep.
    after = text_of(await call_tool(endpoint.url, endpoint.secret, "run_code", {"code": "6 * 7"}))
    assert "42" in after
    assert asyncio.get_running_loop().time() - started < 30


async def tool(endpoint: Any, name: str, **arguments: object) -> str:
    return text_of(await call_tool(endpoint.url, endpoint.secret, name, dict(arguments)))


async def printed(kernel: Any, msg_id: str, text: str, timeout: float = 30) -> None:
    """Wait until the cell ``msg_id`` printed ``text`` (so it runs)."""
    async with asyncio.timeout(timeout):
        while text not in kernel.stdout.get(msg_id, ""):
            await asyncio.sleep(0.05)


async def state_becomes(endpoint: Any, expected: str, timeout: float = 30) -> None:
    """Wait until kernel_state says ``expected`` (the server sees the kernel's status
    messages on a socket of its own, a moment after the test's client does)."""
    async with asyncio.timeout(timeout):
        while await tool(endpoint, "kernel_state") != expected:
            await asyncio.sleep(0.1)


async def agent_sleeps(endpoint: Any, deaf: bool = False) -> asyncio.Task[str]:
    """A run_code of the chat that sleeps a minute, once kernel_state says it runs;
    ``deaf``: it ignores interrupts (so only the end of its kernel ends it)."""
    first = "import signal, time" if deaf else "import time"
    ignore = "signal.signal(signal.SIGINT, signal.SIG_IGN)\n" if deaf else ""
    code = f"{first}\n{ignore}print('agent sleeps', flush=True)\ntime.sleep(60)"
    run = asyncio.create_task(tool(endpoint, "run_code", code=code, timeout=120))
    await state_becomes(endpoint, f"busy: an agent's run_code is running: {first}")
    return run


async def test_cell_ids_stay_and_revisions_follow_the_saved_source(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    kernel_id = await open_notebook(jp_fetch, "revs.ipynb", "Revisions")
    _, _, endpoint = await chat_endpoint(extension, cells, kernel_id)
    saved = json.loads((await jp_fetch("api", "contents", "revs.ipynb")).body)["content"]
    ids = [cell["id"] for cell in saved["cells"]]
    assert all(ids) and len(set(ids)) == 2
    first = await tool(endpoint, "read_cells")
    title_rev, code_rev = revision("markdown", "# Revisions"), revision("code", "df.describe()")
    assert f"--- cell 0 (markdown) id={ids[0]} rev={title_rev}\n# Revisions" in first
    assert f"--- cell 1 (code) [3] id={ids[1]} rev={code_rev}\n" in first
    assert first == await tool(endpoint, "read_cells")  # the same notebook, the same revisions

    # The user edits the code cell and saves: its id stays, its revision moves.
    saved["cells"][1]["source"] = "df.describe(include='all')"
    body = {"type": "notebook", "format": "json", "content": saved}
    await jp_fetch("api", "contents", "revs.ipynb", method="PUT", body=json.dumps(body))
    second = await tool(endpoint, "read_cells")
    new_rev = revision("code", "df.describe(include='all')")
    assert new_rev != code_rev
    assert f"--- cell 1 (code) [3] id={ids[1]} rev={new_rev}\ndf.describe(include='all')" in second
    assert f"--- cell 0 (markdown) id={ids[0]} rev={title_rev}\n" in second


async def test_kernel_state_and_interrupt_kernel(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    kernel_id = await open_notebook(jp_fetch, "state.ipynb", "State")
    _, _, endpoint = await chat_endpoint(extension, cells, kernel_id)
    await state_becomes(endpoint, "idle: nothing is running", 5)

    kernel = await cells(kernel_id)
    sleeping = kernel.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(60)")
    await printed(kernel, sleeping, "sleeping")
    # The kernel names the cell (a client that sends no cell id: by its number).
    async with asyncio.timeout(5):
        while not re.fullmatch(
            r"busy: a cell \(In \[\d+\]\) is running: import time",
            await tool(endpoint, "kernel_state"),
        ):
            await asyncio.sleep(0.1)
    started = asyncio.get_running_loop().time()
    said = await tool(endpoint, "interrupt_kernel")
    assert said == "Interrupted the kernel (it was busy); it is now idle.", said
    await kernel.finished(sleeping, timeout=10)
    assert asyncio.get_running_loop().time() - started < 15
    assert "KeyboardInterrupt" in kernel.errors[sleeping]
    assert await tool(endpoint, "kernel_state") == "idle: nothing is running"

    # A run_code of the chat counts as what runs, and an interrupt stops it too.
    run = await agent_sleeps(endpoint)
    assert (await tool(endpoint, "interrupt_kernel")).endswith("it is now idle.")
    ran = await asyncio.wait_for(run, 15)
    assert "agent sleeps" in ran and "KeyboardInterrupt" in ran
    assert await tool(endpoint, "kernel_state") == "idle: nothing is running"


async def test_restart_kernel_clears_the_namespace_and_the_chat_goes_on(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any], browser: Any
) -> None:
    kernel_id = await open_notebook(jp_fetch, "restart.ipynb", "Restart")
    chat_id, _, endpoint = await chat_endpoint(extension, cells, kernel_id)
    hub = extension.hubs.get(kernel_id)
    assert hub is not None
    agent = hub.chats[chat_id].session.conn.pid
    kernel = await cells(kernel_id)
    await kernel.run("before_restart = 41")
    assert "42" in await tool(endpoint, "run_code", code="before_restart + 1")
    old_pid = extension._server.kernel_manager.get_kernel(kernel_id).provisioner.process.pid
    # A run_code in progress ends with the restart, never waiting out its timeout, even
    # one the restart's interrupt does not stop (the old kernel is killed under it).
    run = await agent_sleeps(endpoint, deaf=True)

    said = await tool(endpoint, "restart_kernel")
    assert said.startswith("Restarted the kernel") and "it is now idle" in said, said
    ran = await asyncio.wait_for(run, 15)
    assert "agent sleeps" in ran and "[the kernel was restarted while this ran]" in ran
    assert "KeyboardInterrupt" not in ran
    new_pid = extension._server.kernel_manager.get_kernel(kernel_id).provisioner.process.pid
    assert new_pid != old_pid
    assert "NameError" in await tool(endpoint, "run_code", code="before_restart")
    assert await tool(endpoint, "kernel_state") == "idle: nothing is running"

    # The chat lives in the server: same hub, same agent, and it answers a prompt.
    assert extension.hubs.get(kernel_id) is hub and hub.chats[chat_id].session.conn.pid == agent
    assert agent is not None and exists(agent)
    tab = await browser(kernel_id, chat_id)
    prompt = {"type": "chat:prompt", "chatId": chat_id, "text": "after the restart"}
    turn = (await tab.request(prompt))["turn"]
    await tab.event(chat_id, "turn_ended", turn=turn)
    assert "You said: after the restart" in tab.text(chat_id)


async def test_a_restart_from_the_toolbar_ends_a_run_in_progress(
    extension: AcpNotebookApp, jp_fetch: Any, cells: Callable[[str], Any]
) -> None:
    kernel_id = await open_notebook(jp_fetch, "toolbar.ipynb", "Toolbar")
    _, _, endpoint = await chat_endpoint(extension, cells, kernel_id)
    run = await agent_sleeps(endpoint, deaf=True)
    # JupyterLab's restart button: the REST API, which announces it as a kernel action.
    await jp_fetch("api", "kernels", kernel_id, "restart", method="POST", body="")
    ran = await asyncio.wait_for(run, 15)
    assert "[the kernel was restarted while this ran]" in ran
    assert "2" in await tool(endpoint, "run_code", code="1 + 1")
