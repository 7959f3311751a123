"""The notebook tools under a connection flood, and their refusals (issue 27, items 3 and
4), through the real endpoint in both modes: served by the Jupyter server (server_side)
and by the kernel itself (local_side).

Any process on the machine can connect to the tools' loopback port: idle connections,
half-sent request heads and junk requests made every chat's tool calls fail with 503.
A bad argument got "Error executing tool" and a traceback in the log; inspect_variable
read names list_variables hides.

The server fixtures are ``tests/server``'s (imported, not copied).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from jupyter_client.multikernelmanager import AsyncMultiKernelManager

from acp_notebook.notebook_tools.gate import HEADER_SECONDS
from tests.server.conftest import *  # noqa: F403  (pytest-jupyter's and tests/server's fixtures)
from tests.server.test_notebook_tools_local import Kernel
from tests.server.test_notebook_tools_local import start_kernel as start_local_kernel
from tests.server.test_notebook_tools_server import chat_endpoint
from tests.support.flood import Flood
from tests.support.frontend import kernel_manager
from tests.support.mcp_client import call_tool, text_of

CALL_TIMEOUT = 120.0  # generous: the proof is that the call answers, not how fast
VARIABLES = "import os\nsales = [10.5, 20.25]\n"


@dataclass
class ToolChat:
    """One chat's way to its tools, and a way to run code in its kernel."""

    url: str
    secret: str
    run: Callable[[str], Awaitable[Any]]

    async def tool(self, tool: str, /, **arguments: Any) -> mcp_types.CallToolResult:
        call = call_tool(self.url, self.secret, tool, arguments)
        return await asyncio.wait_for(call, CALL_TIMEOUT)

    async def answers(self) -> None:
        """list_variables answers, with the kernel's variable."""
        result = await self.tool("list_variables")
        assert not result.is_error and "sales: list" in text_of(result), text_of(result)


@pytest.fixture
async def local_kernels(
    tmp_path: Path,
) -> AsyncIterator[tuple[AsyncMultiKernelManager, list[Kernel]]]:
    manager = kernel_manager(tmp_path)
    started: list[Kernel] = []
    yield manager, started
    for kernel in started:
        await kernel.cells.stop()
    await manager.shutdown_all(now=True)


@pytest.fixture(params=["server", "local"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_chat(
    mode: str,
    request: pytest.FixtureRequest,
    local_kernels: tuple[AsyncMultiKernelManager, list[Kernel]],
) -> Callable[[], Awaitable[ToolChat]]:
    """Opens a chat whose kernel holds ``VARIABLES``, its tools served in ``mode``."""
    if mode == "local":

        async def open_local() -> ToolChat:
            manager, started = local_kernels
            kernel = await start_local_kernel(manager)
            started.append(kernel)
            await kernel.cells.run(VARIABLES)
            return ToolChat(kernel.url, kernel.secret, kernel.cells.run)

        return open_local
    extension = request.getfixturevalue("extension")
    start_kernel = request.getfixturevalue("start_kernel")
    cells = request.getfixturevalue("cells")

    async def open_server() -> ToolChat:
        kernel_id = await start_kernel()
        _, _, endpoint = await chat_endpoint(extension, cells, kernel_id)
        kernel = await cells(kernel_id)
        await kernel.run(VARIABLES)
        return ToolChat(endpoint.url, endpoint.secret, kernel.run)

    return open_server


async def closed_by_the_server(flood: Flood, count: int) -> None:
    """Until the server closed ``count`` of the flood's connections (a deadline it keeps,
    well past ``HEADER_SECONDS``)."""
    deadline = asyncio.get_running_loop().time() + HEADER_SECONDS + 30
    while flood.closed < count:
        assert asyncio.get_running_loop().time() < deadline, (flood.closed, count)
        await asyncio.sleep(0.1)


@pytest.mark.fault("300 idle connections to the tools port, held open ({mode} mode)")
async def test_idle_connections_leave_the_tools_answering(
    open_chat: Callable[[], Awaitable[ToolChat]],
) -> None:
    chat = await open_chat()
    async with Flood(chat.url, idle=300) as flood:
        await chat.answers()
        await chat.answers()  # and again, while the flood goes on
        await closed_by_the_server(flood, 300)
    await chat.answers()


@pytest.mark.fault("300 half-sent request heads to the tools port ({mode} mode)")
async def test_half_sent_heads_are_dropped(open_chat: Callable[[], Awaitable[ToolChat]]) -> None:
    chat = await open_chat()
    async with Flood(chat.url, half=100) as few:  # under the bound: only the deadline closes
        await closed_by_the_server(few, 100)
        assert not few.answered, few.answered
    async with Flood(chat.url, half=300) as flood:
        await chat.answers()
        await closed_by_the_server(flood, 300)
    await chat.answers()


@pytest.mark.fault("1,000 junk requests and 300 idle connections open at once ({mode} mode)")
async def test_junk_requests_are_refused_and_the_chat_answers(
    open_chat: Callable[[], Awaitable[ToolChat]],
) -> None:
    chat = await open_chat()
    async with Flood(chat.url, idle=300, junk=1000) as flood:
        await chat.answers()
        await chat.answers()
    # Every junk request the server answered was refused for its secret, never 503.
    assert flood.answered and set(flood.answered) == {401}, flood.answered


@pytest.mark.fault("inspect_variable with a 300-character name ({mode} mode)")
async def test_a_long_name_is_refused_naming_its_bound(
    open_chat: Callable[[], Awaitable[ToolChat]],
) -> None:
    chat = await open_chat()
    result = await chat.tool("inspect_variable", name="n" * 300)
    assert result.is_error
    assert text_of(result) == "Not done: name is 300 characters; at most 256"
    result = await chat.tool("read_cells", count=500)
    assert result.is_error and text_of(result) == "Not done: count is 500; at most 50"
    await chat.answers()


@pytest.mark.fault("inspect_variable of a name list_variables hides ({mode} mode)")
async def test_hidden_names_are_refused_naming_the_rule(
    open_chat: Callable[[], Awaitable[ToolChat]],
) -> None:
    chat = await open_chat()
    listing = text_of(await chat.tool("list_variables"))
    for name, rule in [
        ("__builtins__", "names starting with _"),
        ("_ih", "names starting with _"),
        ("In", "IPython's own names"),
        ("os", "modules (imports)"),
    ]:
        assert f"\n{name}:" not in f"\n{listing}"
        said = text_of(await chat.tool("inspect_variable", name=name))
        assert said.startswith(f"Not shown: {name!r} is hidden, as list_variables hides "), said
        assert rule in said and "hidden=true" in said
        opted = text_of(await chat.tool("inspect_variable", name=name, hidden=True))
        assert opted.startswith(f"{name}: "), opted
