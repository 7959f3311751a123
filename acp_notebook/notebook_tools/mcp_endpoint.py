"""The ``notebook`` MCP server every chat hands its agent.

One streamable HTTP endpoint per process (the Jupyter server in server mode, the kernel
in local mode) on a loopback port of its own, served by uvicorn inside the process's own
asyncio loop. Each chat gets a secret; a request is served only with a known chat's
secret in ``SECRET_HEADER``, and the tools act for that chat's kernel only (its
``Backend``). Request bodies are bounded in size and depth before the SDK parses them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import socket
from collections.abc import Awaitable, Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol

import mcp_types
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from ..agent.mcp_servers import SECRET_HEADER
from ..wire import bounded_json
from ..wire.contracts import CellEdit
from ..wire.review import EditReview
from .cells import DEFAULT_COUNT, Part
from .execute import DEFAULT_TIMEOUT, Progress
from .waiting import NOT_RUN

SERVER_NAME = "notebook"
MCP_PATH = "/mcp"
MAX_BODY = 256 * 1024  # an MCP request: the longest is run_code's source
MAX_DEPTH = 16
# Requests in progress at once, over every chat of the process (a run_code may wait
# minutes for a busy kernel); more get 503. Each holds up to MAX_BODY: an agent opening
# connections in a loop held the server's memory without end.
MAX_CONCURRENT = 256

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class KernelUnavailable(RuntimeError):
    """The kernel cannot be asked (no socket to it) or did not answer in time."""


class Backend(Protocol):
    """Where one chat's tools do their work (its kernel, its notebook).

    ``kernel`` runs a kernel-side tool (``notebook_tools.kernel.answer``) in the kernel.
    """

    async def kernel(self, tool: str, args: Mapping[str, Any]) -> str: ...
    async def read_cells(self, start: int, count: int) -> list[Part]: ...
    async def run_code(self, code: str, timeout: float, progress: Progress) -> list[Part]: ...
    async def kernel_state(self) -> str: ...
    async def interrupt_kernel(self) -> str: ...
    async def restart_kernel(self) -> str: ...


@dataclass
class Endpoint:
    """One chat's way in: the URL and the secret that names the chat."""

    host: ToolHost
    url: str
    secret: str
    runs: set[asyncio.Future[list[Part]]] = field(default_factory=set)
    # Set by the chat session: how this chat's edits are reviewed (None: not reviewable,
    # so the edit tools refuse).
    review: EditReview | None = None

    def cancel_runs(self) -> None:
        """The turn was cancelled: stop every run_code of this chat."""
        for run in list(self.runs):
            run.cancel()

    def close(self) -> None:
        self.cancel_runs()
        self.host.remove(self.secret)

    async def preview(self, tool_call: Mapping[str, Any]) -> CellEdit | None:
        """The edit an agent's permission request for an edit tool would make."""
        return None  # the edit tools land with the next commits


def _content(parts: list[Part]) -> list[mcp_types.TextContent | mcp_types.ImageContent]:
    return [
        mcp_types.ImageContent(type="image", data=part["data"], mime_type=part["mimeType"])
        if part["type"] == "image"
        else mcp_types.TextContent(type="text", text=part["text"])
        for part in parts
    ]


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The host process (Jupyter server, kernel) owns its signals.
        yield


class ToolHost:
    """The process's MCP endpoint: one loopback port, one secret per chat."""

    def __init__(self) -> None:
        self._chats: dict[str, tuple[Backend, Endpoint]] = {}
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._starting = asyncio.Lock()
        self.url = ""
        self.mcp = self._tools()

    # ------------------------------------------------------------ chats

    async def add(self, backend: Backend) -> Endpoint:
        """Serve ``backend`` under a fresh secret (starting the endpoint on first use)."""
        await self._start()
        secret = secrets.token_urlsafe(32)
        endpoint = Endpoint(self, self.url, secret)
        self._chats[secret] = (backend, endpoint)
        return endpoint

    def remove(self, secret: str) -> None:
        self._chats.pop(secret, None)

    def chat_for(self, secret: str | None) -> tuple[Backend, Endpoint] | None:
        if not secret:
            return None
        given = secret.encode()  # compare_digest raises TypeError on a str that is not ASCII
        for known, chat in self._chats.items():
            if secrets.compare_digest(known.encode(), given):
                return chat
        return None

    def _of(self, ctx: Context[Any, Any]) -> tuple[Backend, Endpoint]:
        # Starlette's Headers: case-insensitive, so this one lookup finds any spelling.
        chat = self.chat_for((ctx.headers or {}).get(SECRET_HEADER.lower()))
        if chat is None:  # the guard let it through, then the chat closed
            raise RuntimeError("this chat has ended")
        return chat

    # ------------------------------------------------------------ tools

    def _tools(self) -> MCPServer:
        # MCPServer calls logging.basicConfig, which would give the root logger of the
        # user's kernel (or the Jupyter server) a handler of its own: not ours to change.
        root = logging.getLogger()
        placeholder = logging.NullHandler()
        root.addHandler(placeholder)
        try:
            server: MCPServer = MCPServer(
                SERVER_NAME,
                instructions=(
                    "Tools for the Jupyter notebook this chat sits in: the kernel's variables, "
                    "the notebook's cells, the last error, running code in the kernel, and the "
                    "kernel's state (interrupt, restart)."
                ),
                log_level="WARNING",
            )
        finally:
            root.removeHandler(placeholder)

        @server.tool()
        async def list_variables(ctx: Context[Any, Any]) -> str:
            """List the user's variables in the notebook's kernel: name, type, shape or
            length, approximate size and a one-line preview. Works while a cell runs."""
            backend, _ = self._of(ctx)
            return await backend.kernel("list_variables", {})

        @server.tool()
        async def inspect_variable(name: str, ctx: Context[Any, Any]) -> str:
            """A summary of one variable: DataFrame columns, dtypes, head, describe and null
            counts; array shape and statistics; dict/list contents; object attributes."""
            backend, _ = self._of(ctx)
            return await backend.kernel("inspect_variable", {"name": name})

        @server.tool()
        async def read_cells(
            ctx: Context[Any, Any], start: int = 0, count: int = DEFAULT_COUNT
        ) -> list[mcp_types.TextContent | mcp_types.ImageContent]:
            """Read the notebook's cells (id, revision, source, execution count, outputs,
            images), from index ``start`` (negative counts from the end), at most ``count``
            (<= 50). A cell's revision changes whenever its type or source does."""
            backend, _ = self._of(ctx)
            return _content(await backend.read_cells(start, count))

        @server.tool()
        async def last_error(ctx: Context[Any, Any]) -> str:
            """The most recent exception raised in the kernel: type, message, traceback and
            the source of the cell that raised it."""
            backend, _ = self._of(ctx)
            return await backend.kernel("last_error", {})

        @server.tool()
        async def run_code(
            code: str,
            ctx: Context[Any, Any],
            # NaN would pass every clamp and interrupt the code at once.
            timeout: Annotated[float, Field(allow_inf_nan=False)] = DEFAULT_TIMEOUT,
        ) -> list[mcp_types.TextContent | mcp_types.ImageContent]:
            """Run Python code in the notebook's kernel, in the user's namespace, like a
            cell; returns stdout, stderr, the result, displayed images or the error.
            Waits for a running cell first; interrupted after ``timeout`` seconds."""
            backend, endpoint = self._of(ctx)

            async def progress(message: str) -> None:
                with contextlib.suppress(Exception):  # a client without a progress token
                    await ctx.report_progress(0, None, message)

            async def run() -> list[Part]:
                # No socket to the kernel (restarted, no Chat yet): no cell waits.
                with contextlib.suppress(KernelUnavailable):
                    if await backend.kernel("cell_waits", {}) == "yes":  # it would wait on itself
                        return [{"type": "text", "text": NOT_RUN}]
                return await backend.run_code(code, timeout, progress)

            work = asyncio.ensure_future(run())
            endpoint.runs.add(work)
            try:
                return _content(await asyncio.shield(work))
            except asyncio.CancelledError:
                if not work.cancelled():  # this tool call itself was cancelled
                    raise
                return _content([{"type": "text", "text": "Cancelled: the turn was cancelled."}])
            finally:
                endpoint.runs.discard(work)
                work.cancel()

        @server.tool()
        async def kernel_state(ctx: Context[Any, Any]) -> str:
            """The user's kernel's state (idle, busy, starting, dead) and what it runs, if known."""
            backend, _ = self._of(ctx)
            return await backend.kernel_state()

        @server.tool()
        async def interrupt_kernel(ctx: Context[Any, Any]) -> str:
            """Interrupt the user's kernel, like the notebook's stop button (the cell ends)."""
            backend, _ = self._of(ctx)
            return await backend.interrupt_kernel()

        @server.tool()
        async def restart_kernel(ctx: Context[Any, Any]) -> str:
            """Restart the user's kernel, like the restart button: all its variables are lost."""
            backend, _ = self._of(ctx)
            return await backend.restart_kernel()

        return server

    # ------------------------------------------------------------ HTTP

    async def _start(self) -> None:
        async with self._starting:
            if self._server is not None:
                return
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
            app = self.mcp.streamable_http_app(
                streamable_http_path=MCP_PATH, stateless_http=True, max_request_body_size=MAX_BODY
            )
            config = uvicorn.Config(
                _guarded(app, self),
                log_config=None,  # the host process's logging stays as it is
                log_level="warning",
                access_log=False,
                lifespan="on",
                ws="none",
                limit_concurrency=MAX_CONCURRENT,
            )
            server = _Server(config)
            self._task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
            while not server.started:
                if self._task.done():
                    self._task.result()  # raises what stopped it
                    raise RuntimeError("the notebook tools' endpoint did not start")
                await asyncio.sleep(0.01)
            self._server = server
            self.url = f"http://127.0.0.1:{port}{MCP_PATH}"

    async def close(self) -> None:
        self._chats.clear()
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 5)
        self._server = None


def _guarded(app: ASGIApp, host: ToolHost) -> ASGIApp:
    """``app`` behind a guard that refuses a request without a live chat's secret, or whose
    body is too large or too deep, before the SDK reads it."""

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await app(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        raw = scope.get("headers") or []
        headers = {n.decode("latin-1").lower(): v.decode("latin-1") for n, v in raw}
        if host.chat_for(headers.get(SECRET_HEADER.lower())) is None:
            await _refuse(send, 401, "missing or unknown notebook secret")
            return
        if scope["method"] != "POST":
            await app(scope, receive, send)
            return
        declared = headers.get("content-length", "0")
        if not declared.isdigit() or int(declared) > MAX_BODY:
            await _refuse(send, 413, "request body too large")
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > MAX_BODY:
                await _refuse(send, 413, "request body too large")
                return
            if not message.get("more_body"):
                break
        try:
            bounded_json.loads(bytes(body), max_bytes=MAX_BODY, max_depth=MAX_DEPTH)
        except bounded_json.Rejected as exc:
            await _refuse(send, 400, f"bad request body: {exc}")
            return
        # The SDK reads the body again: the one read here, then what comes (a disconnect).
        unread: list[Message] = [{"type": "http.request", "body": bytes(body), "more_body": False}]

        async def replay() -> Message:
            return unread.pop() if unread else await receive()

        await app(scope, replay, send)

    return guard


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"error": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


ToolsFactory = Callable[[], Awaitable[Endpoint]]
