"""Local mode: the notebook tools served from the kernel process itself.

Variables and the last error are read on a worker thread; the cells and the edits
are the notebook file's when its path is known (the chat's ``Chat(notebook=...)``,
``JPY_SESSION_NAME``, which a Jupyter server sets for the kernels it starts, or VS
Code's ``__vsc_ipynb_file__``), else
``read_cells`` gives the kernel's own input/output history; ``run_code`` goes to
this very kernel's shell channel through a client made from its connection file,
and an interrupt is a SIGINT to this process, as the kernel manager would send.
The agent may not interrupt or restart the kernel here: the chat lives in it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient

from . import running_cell
from .cells import Part, history_cells
from .documents import LiveDocument
from .execute import Progress, Runner
from .file_document import DiskStore, FileDocument
from .kernel_side import answer
from .variables import ipython_shell

LOCAL = (
    "This chat runs inside the kernel itself (local mode: no Jupyter server with "
    "acp_notebook started the kernel)"
)


# A page may show the notebook here (a Jupyter server without acp_notebook): it sees the
# change once it reloads the file.
OPEN_PAGE = "the saved file (a page that has it open shows the change once reloaded)"


async def _connect() -> AsyncKernelClient:
    app = sys.modules["ipykernel.kernelapp"].IPKernelApp.instance()
    client = AsyncKernelClient(connection_file=str(app.abs_connection_file))
    client.load_connection_file()
    return client


async def _interrupt() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def notebook_path(namespace: Mapping[str, Any], environ: Mapping[str, str]) -> str | None:
    """The notebook file this kernel runs, when a frontend says which: VS Code in the
    user's namespace, a Jupyter server in the environment (a path relative to the
    kernel's directory, or the notebook's name in it)."""
    named = [namespace.get("__vsc_ipynb_file__"), environ.get("JPY_SESSION_NAME")]
    for name in named:
        if not isinstance(name, str) or not name.endswith(".ipynb"):
            continue
        for path in (name, os.path.basename(name)):
            if os.path.isfile(path):
                return os.path.abspath(path)
    return None


class LocalBackend:
    """The tools of every chat of this kernel (local mode)."""

    def __init__(self) -> None:
        self._runner = Runner(_connect, _interrupt)
        self._store = DiskStore()

    async def kernel(self, tool: str, args: Mapping[str, Any]) -> str:
        # This process is the kernel: the tool runs on a worker thread, as the kernel
        # answers the server's query in server mode, so while a cell runs.
        return await asyncio.to_thread(answer, tool, args)

    async def document(self, agent: str, named: str | None) -> LiveDocument | str:
        namespace = getattr(ipython_shell(), "user_ns", None) or {}
        path = named if named and os.path.isfile(named) else notebook_path(namespace, os.environ)
        if path is None:
            return (
                "no notebook document is reachable in local mode: the kernel does not know "
                "its notebook file (no Jupyter server with acp_notebook, no JPY_SESSION_NAME, "
                "no VS Code, no Chat(notebook=...)); ask the user, or use run_code"
            )
        return FileDocument(path, self._store, self._runner, OPEN_PAGE)

    async def read_cells(self, start: int, count: int) -> list[Part]:
        def read() -> list[Part]:
            shell = ipython_shell()
            history = getattr(shell, "history_manager", None)
            inputs = list(getattr(history, "input_hist_raw", None) or [""])
            outputs = dict(getattr(history, "output_hist", None) or {})
            return history_cells(inputs, outputs, start, count)

        return await asyncio.to_thread(read)

    async def run_code(self, code: str, timeout: float, progress: Progress) -> list[Part]:
        app = sys.modules.get("ipykernel.kernelapp")
        if app is None or not app.IPKernelApp.initialized():
            return [{"type": "text", "text": "Not run: this Python is not a Jupyter kernel."}]
        return await self._runner.run(code, timeout, progress)

    async def kernel_state(self) -> str:
        cell = running_cell.running_cell() or "no cell is running"
        doing = self._runner.running() or "no run_code of an agent is running"
        return f"{LOCAL}, so the kernel is alive: {cell}; {doing}."

    async def interrupt_kernel(self) -> str:
        return f"Not done: {LOCAL}; ask the user to interrupt it from the notebook."

    async def restart_kernel(self) -> str:
        return f"Not done: {LOCAL}, and a restart would end this chat; ask the user to restart it."
