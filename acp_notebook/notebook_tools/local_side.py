"""Local mode: the notebook tools served from the kernel process itself.

Variables and the last error are read on a worker thread; the cells are the
kernel's own input/output history (no notebook is known here); ``run_code`` goes to
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

from .cells import Part, history_cells
from .execute import Progress, Runner
from .kernel_side import answer
from .variables import ipython_shell

LOCAL = (
    "This chat runs inside the kernel itself (local mode: no Jupyter server with "
    "acp_notebook started the kernel)"
)


async def _connect() -> AsyncKernelClient:
    app = sys.modules["ipykernel.kernelapp"].IPKernelApp.instance()
    client = AsyncKernelClient(connection_file=str(app.abs_connection_file))
    client.load_connection_file()
    return client


async def _interrupt() -> None:
    os.kill(os.getpid(), signal.SIGINT)


class LocalBackend:
    """The tools of every chat of this kernel (local mode)."""

    def __init__(self) -> None:
        self._runner = Runner(_connect, _interrupt)

    async def kernel(self, tool: str, args: Mapping[str, Any]) -> str:
        # This process is the kernel: the tool runs on a worker thread, as the kernel
        # answers the server's query in server mode, so while a cell runs.
        return await asyncio.to_thread(answer, tool, args)

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
        doing = self._runner.running() or "no run_code of an agent is running"
        return (
            f"{LOCAL}, so the kernel is alive; whether a cell of the notebook is running is "
            f"not known here; {doing}."
        )

    async def interrupt_kernel(self) -> str:
        return f"Not done: {LOCAL}; ask the user to interrupt it from the notebook."

    async def restart_kernel(self) -> str:
        return f"Not done: {LOCAL}, and a restart would end this chat; ask the user to restart it."
