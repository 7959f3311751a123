"""Server mode: the notebook tools served from the Jupyter server process.

The kernel-side tools (variables, the last error) are asked of the kernel over its
socket to the extension (``KernelQuery``), answered from the kernel's loop thread
while a cell runs. The cells come from the notebook of the kernel's session
(session -> path), from the first document source that has it: the shared document
or the open page when their sources are given, else the saved file through the
contents manager (``file_document``). ``run_code`` is a client of the kernel's
channels from the kernel manager, interrupted through the kernel manager.
``kernel_state``, ``interrupt_kernel`` and ``restart_kernel`` go through the kernel
manager too, as JupyterLab's toolbar does; the chats live in the server and outlive a
restart, as they do the user's.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_core.utils import ensure_async
from jupyter_server.gateway.managers import GatewayKernelManager

from .cells import Part
from .documents import DocumentSource, LiveDocument
from .execute import Progress, Runner
from .file_document import ContentsStore, FileSource
from .mcp_endpoint import Endpoint, ToolHost, ToolsFactory

# Asks the kernel to run one kernel-side tool (kernel.answer); its text.
KernelQuery = Callable[[str, Mapping[str, Any]], Awaitable[str]]
SETTLE = 10.0  # seconds an interrupted or restarted kernel has to become idle
QUERY_WAIT = 2.0  # seconds kernel_state waits for the kernel to say which cell runs
GONE = "dead: the kernel is gone (shut down)"
NO_NOTEBOOK = "no notebook is open with this kernel (no session of the server names one)"


class ServerBackend:
    """The tools of one kernel's chats, in the server process."""

    def __init__(
        self,
        kernel_id: str,
        kernel_manager: Any,
        session_manager: Any,
        query: KernelQuery,
        sources: Sequence[DocumentSource],
        store: ContentsStore,
    ) -> None:
        self.kernel_id = kernel_id
        self._kernels = kernel_manager
        self._sessions = session_manager
        self._query = query

        async def connect() -> AsyncKernelClient:
            manager = kernel_manager.get_kernel(kernel_id)
            if isinstance(manager, GatewayKernelManager):
                # Behind a kernel gateway: no ports here, a WebSocket of its own to it.
                return cast(AsyncKernelClient, manager.client())  # type: ignore[no-untyped-call]
            # A session of its own: sharing the manager's would share its zmq identity,
            # and the kernel would drop one of the two clients.
            client = AsyncKernelClient()
            client.load_connection_info(manager.get_connection_info(session=False))
            return client

        async def interrupt() -> None:
            await ensure_async(kernel_manager.interrupt_kernel(kernel_id))

        self._runner = Runner(connect, interrupt)
        # The saved file comes last: it needs this kernel's runner for run_cell.
        self._sources = [*sources, FileSource(store, self._runner)]

    @property
    def runner(self) -> Runner:
        """The kernel's runner: run_code's, which a document's cell runs share."""
        return self._runner

    async def kernel(self, tool: str, args: Mapping[str, Any]) -> str:
        return await self._query(tool, args)

    async def _notebook_path(self) -> str | None:
        for session in await ensure_async(self._sessions.list_sessions()):
            kernel = session.get("kernel") or {}
            if kernel.get("id") == self.kernel_id and session.get("type") == "notebook":
                return str(session["path"])
        return None

    async def document(self, agent: str, named: str | None) -> LiveDocument | str:
        # The server knows the notebook from its session (``named`` is the kernel's path).
        path = await self._notebook_path()
        if path is None:
            return NO_NOTEBOOK
        for source in self._sources:
            document = await source.open(path, agent)
            if document is not None:
                return document
        return f"no document of the notebook {path} is reachable"

    async def read_cells(self, start: int, count: int) -> list[Part]:
        return [{"type": "text", "text": f"No cells: {NO_NOTEBOOK}."}]

    async def run_code(self, code: str, timeout: float, progress: Progress) -> list[Part]:
        return await self._runner.run(code, timeout, progress)

    async def _state(self) -> str | None:
        """The kernel's execution state as the kernel manager tracks it; None when gone."""
        if self.kernel_id not in self._kernels:
            return None
        kernel = self._kernels.get_kernel(self.kernel_id)
        if not await ensure_async(kernel.is_alive()):
            return "dead"
        return str(kernel.execution_state or "unknown")

    async def _settled(self) -> str | None:
        """The state once the kernel is idle again, or after ``SETTLE`` seconds."""
        deadline = time.monotonic() + SETTLE
        state = await self._state()
        while state not in (None, "idle", "dead") and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            state = await self._state()
        return state

    async def kernel_state(self) -> str:
        state = await self._state()
        if state is None:
            return GONE
        doing = self._runner.running()
        if doing is None and state == "busy":
            doing = await self._running_cell() or (
                "a cell is running (sent by the notebook or another client)"
            )
        elif doing is None and state == "idle":
            doing = "nothing is running"
        return f"{state}: {doing}" if doing else state

    async def _running_cell(self) -> str:
        """The cell the kernel says it runs ("" when it cannot say: no Chat in it yet)."""
        try:
            return await asyncio.wait_for(self._query("running_cell", {}), QUERY_WAIT)
        except Exception:  # no socket to the kernel, no answer in time, an older kernel
            return ""

    async def interrupt_kernel(self) -> str:
        before = await self._state()
        if before is None:
            return GONE
        await ensure_async(self._kernels.interrupt_kernel(self.kernel_id))
        after = await self._settled()
        return f"Interrupted the kernel (it was {before}); it is now {after or 'gone'}."

    async def restart_kernel(self) -> str:
        if await self._state() is None:
            return GONE
        # As the server does when a restart moves the kernel's ports: the new kernel's
        # first status then counts, else the old kernel's last state (busy) would stay.
        self._kernels.get_kernel(self.kernel_id).execution_state = "starting"
        try:
            # The server's restart returns a future of the new kernel's first answer.
            started = await ensure_async(self._kernels.restart_kernel(self.kernel_id))
            if inspect.isawaitable(started):
                await started
        except Exception as exc:  # the server's own: a timeout, a kernel that died
            return f"The restart failed: {str(exc) or type(exc).__name__}"
        finally:
            # Not announced as the toolbar's restart is (a kernel_actions event): say it.
            self.restarted()
        after = await self._settled()
        return (
            f"Restarted the kernel: its variables and imports are gone; it is now "
            f"{after or 'gone'}. The chat goes on."
        )

    def restarted(self) -> None:
        """The kernel restarted (this tool, the toolbar, the REST API): a run_code in
        progress ends now, the next one reconnects."""
        self._runner.restarted()

    def close(self) -> None:
        self._runner.close()


class ServerTools:
    """The extension's notebook tools: one endpoint, one backend per kernel."""

    def __init__(
        self,
        kernel_manager: Any,
        session_manager: Any,
        query: Callable[[str, str, Mapping[str, Any]], Awaitable[str]],
        sources: Sequence[DocumentSource] = (),
    ) -> None:
        """``sources``: where a kernel's notebook is found live, tried in order before
        its saved file."""
        self.host = ToolHost()
        self._sources = sources
        self._store = ContentsStore(session_manager.contents_manager)
        self._kernels = kernel_manager
        self._sessions = session_manager
        self._query = query
        self._backends: dict[str, ServerBackend] = {}

    def factory(self, kernel_id: str) -> ToolsFactory:
        """What a kernel's hub calls to give a new chat its endpoint."""

        async def add() -> Endpoint:
            return await self.host.add(self._backend(kernel_id))

        return add

    def _backend(self, kernel_id: str) -> ServerBackend:
        backend = self._backends.get(kernel_id)
        if backend is None:
            query = functools.partial(self._query, kernel_id)
            backend = self._backends[kernel_id] = ServerBackend(
                kernel_id, self._kernels, self._sessions, query, self._sources, self._store
            )
        return backend

    async def runner_of(self, path: str) -> Runner | None:
        """The runner of the kernel of the notebook at ``path`` (the one its chats'
        ``run_code`` uses: one run at a time, restarts known); None without a kernel."""
        for session in await ensure_async(self._sessions.list_sessions()):
            kernel = session.get("kernel") or {}
            if session.get("path") == path and session.get("type") == "notebook" and kernel:
                return self._backend(str(kernel["id"])).runner
        return None

    def restarted(self, kernel_id: str) -> None:
        backend = self._backends.get(kernel_id)
        if backend is not None:
            backend.restarted()

    def drop(self, kernel_id: str) -> None:
        backend = self._backends.pop(kernel_id, None)
        if backend is not None:
            backend.close()

    async def close(self) -> None:
        for kernel_id in list(self._backends):
            self.drop(kernel_id)
        await self.host.close()
