"""Server mode: the notebook tools served from the Jupyter server process.

The kernel-side tools (variables, the last error) are asked of the kernel over its
socket to the extension (``KernelQuery``), answered from the kernel's loop thread
while a cell runs. The cells come from the notebook of the kernel's session
(session -> path -> contents manager). ``run_code`` is a client of the kernel's
channels from the kernel manager, interrupted through the kernel manager.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_core.utils import ensure_async

from .cells import Part, notebook_cells
from .execute import Progress, Runner
from .mcp_endpoint import Endpoint, ToolHost, ToolsFactory

# Asks the kernel to run one kernel-side tool (kernel.answer); its text.
KernelQuery = Callable[[str, Mapping[str, Any]], Awaitable[str]]


class ServerBackend:
    """The tools of one kernel's chats, in the server process."""

    def __init__(
        self, kernel_id: str, kernel_manager: Any, session_manager: Any, query: KernelQuery
    ) -> None:
        self.kernel_id = kernel_id
        self._sessions = session_manager
        self._query = query

        async def connect() -> AsyncKernelClient:
            # A session of its own: sharing the manager's would share its zmq identity,
            # and the kernel would drop one of the two clients.
            client = AsyncKernelClient()
            client.load_connection_info(
                kernel_manager.get_kernel(kernel_id).get_connection_info(session=False)
            )
            return client

        async def interrupt() -> None:
            await ensure_async(kernel_manager.interrupt_kernel(kernel_id))

        self._runner = Runner(connect, interrupt)

    async def kernel(self, tool: str, args: Mapping[str, Any]) -> str:
        return await self._query(tool, args)

    async def _notebook_path(self) -> str | None:
        for session in await ensure_async(self._sessions.list_sessions()):
            kernel = session.get("kernel") or {}
            if kernel.get("id") == self.kernel_id and session.get("type") == "notebook":
                return str(session["path"])
        return None

    async def read_cells(self, start: int, count: int) -> list[Part]:
        path = await self._notebook_path()
        if path is None:
            return [{"type": "text", "text": "No notebook is open with this kernel."}]
        contents = self._sessions.contents_manager
        model = await ensure_async(contents.get(path, content=True, type="notebook"))
        return notebook_cells(model["content"], start, count, f"Notebook {path} (as last saved): ")

    async def run_code(self, code: str, timeout: float, progress: Progress) -> list[Part]:
        return await self._runner.run(code, timeout, progress)

    def close(self) -> None:
        self._runner.close()


class ServerTools:
    """The extension's notebook tools: one endpoint, one backend per kernel."""

    def __init__(
        self,
        kernel_manager: Any,
        session_manager: Any,
        query: Callable[[str, str, Mapping[str, Any]], Awaitable[str]],
    ) -> None:
        self.host = ToolHost()
        self._kernels = kernel_manager
        self._sessions = session_manager
        self._query = query
        self._backends: dict[str, ServerBackend] = {}

    def factory(self, kernel_id: str) -> ToolsFactory:
        """What a kernel's hub calls to give a new chat its endpoint."""

        async def add() -> Endpoint:
            backend = self._backends.get(kernel_id)
            if backend is None:
                query = functools.partial(self._query, kernel_id)
                backend = self._backends[kernel_id] = ServerBackend(
                    kernel_id, self._kernels, self._sessions, query
                )
            return await self.host.add(backend)

        return add

    def drop(self, kernel_id: str) -> None:
        backend = self._backends.pop(kernel_id, None)
        if backend is not None:
            backend.close()

    async def close(self) -> None:
        for kernel_id in list(self._backends):
            self.drop(kernel_id)
        await self.host.close()
