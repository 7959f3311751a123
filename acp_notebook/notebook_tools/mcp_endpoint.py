"""The ``notebook`` MCP server every chat hands its agent.

One streamable HTTP endpoint per process (the Jupyter server in server mode, the kernel
in local mode) on a loopback port of its own, served by uvicorn inside the process's own
asyncio loop. Each chat gets a secret; a request is served only with a known chat's
secret in ``SECRET_HEADER``, and the tools act for that chat's kernel only (its
``Backend``). ``gate`` keeps it answering the chats under a flood of connections and
bounds request bodies before the SDK parses them; each call's arguments are checked
against its tool's schema (``arguments``).

The edit tools plan their change against the chat's live notebook (``cell_edits``),
have it reviewed (``Endpoint.review``, set by the chat session) and apply it to that
document, which checks again that the cell holds what the agent saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import socket
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol

import mcp_types
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ..agent.mcp_servers import SECRET_HEADER
from ..wire.clip import clip
from ..wire.contracts import MAX_EDIT_SOURCE, CellEdit
from ..wire.review import EditReview
from .arguments import MAX_ID, MAX_NAME, MAX_REV, Refused
from .arguments import check as check_arguments
from .cell_edits import EDIT_TOOLS, find, plan
from .cells import DEFAULT_COUNT, MAX_COUNT, MAX_SOURCE, Part, notebook_cells, revision
from .documents import Applied, EditRefused, LiveDocument
from .execute import DEFAULT_TIMEOUT, MAX_TIMEOUT, Progress
from .file_document import CALLER, Sight
from .gate import ACCEPT_BATCH, LISTEN_BACKLOG, MAX_BODY, Gate, connection_class, guarded
from .waiting import NOT_RUN

SERVER_NAME = "notebook"
MCP_PATH = "/mcp"
NOT_NOTEBOOK_FILES = (
    "For a Jupyter notebook (.ipynb) use these cell tools, never an edit of the .ipynb file "
    "itself: they change the notebook the user has open, unsaved work included."
)
# The tools' bounds, in their input schemas: ``arguments.check`` enforces them.
Timeout = Annotated[float, Field(allow_inf_nan=False, ge=1, le=MAX_TIMEOUT)]
Count = Annotated[int, Field(ge=1, le=MAX_COUNT)]
VariableName = Annotated[str, Field(min_length=1, max_length=MAX_NAME)]
CellId = Annotated[str, Field(min_length=1, max_length=MAX_ID)]
Rev = Annotated[str, Field(max_length=MAX_REV)]
Source = Annotated[str, Field(max_length=MAX_EDIT_SOURCE)]

log = logging.getLogger(__name__)


class KernelUnavailable(RuntimeError):
    """The kernel cannot be asked (no socket to it) or did not answer in time."""


class Backend(Protocol):
    """Where one chat's tools do their work (its kernel, its notebook).

    ``kernel`` runs a kernel-side tool (``notebook_tools.kernel.answer``) in the kernel.
    """

    async def kernel(self, tool: str, args: Mapping[str, Any]) -> str: ...
    async def document(self, agent: str, named: str | None) -> LiveDocument | str:
        """The notebook as the user sees it, edited in ``agent``'s name; else why none is.
        ``named``: the notebook file the chat was opened for, if any (local mode)."""
        ...

    async def read_cells(self, start: int, count: int) -> list[Part]:
        """The cells when no document is reachable (local mode: the kernel's history)."""
        ...

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
    # Who edits, as collaborators see it: set by the hub to the chat's agent.
    agent: str = "agent"
    # The notebook file the chat was opened for (local mode), set by the hub.
    notebook_path: str | None = None
    # What this chat last read or wrote of the notebook files it edits.
    sight: Sight = field(default_factory=Sight)

    def cancel_runs(self) -> None:
        """The turn was cancelled: stop every run_code of this chat."""
        for run in list(self.runs):
            run.cancel()

    def close(self) -> None:
        self.cancel_runs()
        self.host.remove(self.secret)

    async def preview(self, tool_call: Mapping[str, Any]) -> CellEdit | None:
        """The edit an agent's permission request for an edit tool would make, planned
        against the live document now; None when it is no edit or cannot be made."""
        name, args = _edit_call(tool_call)
        chat = self.host.chat_for(self.secret)
        if name is None or chat is None:
            return None
        try:
            with _calling(self, reading=False):
                planned = await _planned(chat[0], self, name, args)
        except Exception:  # EditRefused, or a document gone: the tool itself will say
            log.debug("acp_notebook: no preview of %s", name, exc_info=True)
            return None
        return None if isinstance(planned, str) else planned[1]


@contextlib.contextmanager
def _calling(endpoint: Endpoint, reading: bool) -> Iterator[None]:
    """Within a tool call of ``endpoint``'s chat (``file_document.CALLER``)."""
    token = CALLER.set((endpoint.sight, reading))
    try:
        yield
    finally:
        CALLER.reset(token)


def _edit_call(tool_call: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any]]:
    """An ACP tool call's edit tool (claude names it in ``_meta``, others in ``title`` or
    ``name``: ``mcp__notebook__insert_cell`` or ``insert_cell``) and its arguments."""
    meta = tool_call.get("_meta")
    claude = meta.get("claudeCode") if isinstance(meta, Mapping) else None
    named = claude.get("toolName") if isinstance(claude, Mapping) else None
    args = tool_call.get("rawInput")
    for name in (named, tool_call.get("title"), tool_call.get("name")):
        if isinstance(name, str) and name.removeprefix(f"mcp__{SERVER_NAME}__") in EDIT_TOOLS:
            bare = name.removeprefix(f"mcp__{SERVER_NAME}__")
            return bare, args if isinstance(args, Mapping) else {}
    return None, {}


async def _planned(
    backend: Backend, endpoint: Endpoint, tool: str, args: Mapping[str, Any]
) -> tuple[LiveDocument, CellEdit] | str:
    """The live document and the edit ``tool`` would make in it; else why there is none."""
    document = await backend.document(endpoint.agent, endpoint.notebook_path)
    if isinstance(document, str):
        return document
    return document, plan(tool, args, await document.cells(outputs=False), document.path)


def _done(edit: CellEdit, applied: Applied, where: str) -> str:
    cell, at = f"cell id={applied['cellId']}", applied["index"]
    rev = revision(edit["cellType"], edit["after"])
    if edit["op"] == "insert":
        return f"Inserted {edit['cellType']} {cell} at index {at} (rev={rev}) in {where}."
    if edit["op"] == "edit":
        return f"Edited {cell} at index {at}: its rev is now {rev}, in {where}."
    if edit["op"] == "delete":
        return f"Deleted {cell} (it was at index {at}) from {where}."
    return f"Moved {cell} from index {edit['index']} to index {at} (rev={rev}) in {where}."


def _content(parts: list[Part]) -> list[mcp_types.TextContent | mcp_types.ImageContent]:
    return [
        mcp_types.ImageContent(type="image", data=part["data"], mime_type=part["mimeType"])
        if part["type"] == "image"
        else mcp_types.TextContent(type="text", text=part["text"])
        for part in parts
    ]


class _CheckedServer(MCPServer):
    """The SDK's server, each tool call's arguments first checked against that tool's
    input schema (``arguments.check``): a refusal names the argument and the bound, logs
    one line and is the call's error, before the SDK's own validation would answer in
    pydantic's words."""

    _schemas: dict[str, Mapping[str, Any]] | None = None

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        if self._schemas is None:
            self._schemas = {tool.name: tool.input_schema for tool in await self.list_tools()}
        try:
            check_arguments(self._schemas.get(name, {}), arguments)
        except Refused as exc:
            log.warning("acp_notebook: %s refused: %s", name, exc)
            raise ToolError(f"Not done: {exc}") from None
        return await super().call_tool(name, arguments, context)


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
        self.gate = Gate()
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
            raise ToolError("Not done: this chat has ended")
        return chat

    async def _kernel(self, ctx: Context[Any, Any], tool: str, args: Mapping[str, Any]) -> str:
        """A kernel-side tool's answer; a kernel that cannot answer is the call's error."""
        backend, _ = self._of(ctx)
        try:
            return await backend.kernel(tool, args)
        except KernelUnavailable as exc:
            raise ToolError(f"Not answered: {exc}") from None

    # ------------------------------------------------------------ tools

    def _tools(self) -> MCPServer:
        # MCPServer calls logging.basicConfig, which would give the root logger of the
        # user's kernel (or the Jupyter server) a handler of its own: not ours to change.
        root = logging.getLogger()
        placeholder = logging.NullHandler()
        root.addHandler(placeholder)
        try:
            server = _CheckedServer(
                SERVER_NAME,
                instructions=(
                    "Tools for the Jupyter notebook this chat sits in: the kernel's variables, "
                    "the notebook's cells (read, insert, edit, delete, move, run: each edit is "
                    "reviewed by the user in the chat), the last error, running code in the "
                    "kernel, and the kernel's state (interrupt, restart). " + NOT_NOTEBOOK_FILES
                ),
                log_level="WARNING",
            )
        finally:
            root.removeHandler(placeholder)

        @server.tool()
        async def list_variables(ctx: Context[Any, Any]) -> str:
            """List the user's variables in the notebook's kernel: name, type, shape or
            length, approximate size and a one-line preview. Works while a cell runs."""
            return await self._kernel(ctx, "list_variables", {})

        @server.tool()
        async def inspect_variable(
            name: VariableName, ctx: Context[Any, Any], hidden: bool = False
        ) -> str:
            """A summary of one variable: DataFrame columns, dtypes, head, describe and null
            counts; array shape and statistics; dict/list contents; object attributes.
            Names list_variables hides (starting with _, IPython's own, modules) are refused
            unless ``hidden`` is true."""
            return await self._kernel(ctx, "inspect_variable", {"name": name, "hidden": hidden})

        @server.tool()
        async def read_cells(
            ctx: Context[Any, Any], start: int = 0, count: Count = DEFAULT_COUNT
        ) -> list[mcp_types.TextContent | mcp_types.ImageContent]:
            """Read the notebook's cells as the user sees them, unsaved changes included (id,
            revision, source, execution count, outputs, images), from index ``start``
            (negative counts from the end), at most ``count`` (<= 50). A cell's revision
            changes whenever its type or source does."""
            backend, endpoint = self._of(ctx)
            with _calling(endpoint, reading=True):
                document = await backend.document(endpoint.agent, endpoint.notebook_path)
                if isinstance(document, str):
                    return _content(await backend.read_cells(start, count))
                try:
                    cells = await document.cells()
                except EditRefused as exc:
                    return _content([{"type": "text", "text": f"Not read: {exc}"}])
            title = f"Notebook {document.path} ({document.where}): "
            return _content(notebook_cells({"cells": cells}, start, count, title))

        @server.tool()
        async def last_error(ctx: Context[Any, Any]) -> str:
            """The most recent exception raised in the kernel: type, message, traceback and
            the source of the cell that raised it."""
            return await self._kernel(ctx, "last_error", {})

        @server.tool()
        async def run_code(
            code: Source, ctx: Context[Any, Any], timeout: Timeout = DEFAULT_TIMEOUT
        ) -> list[mcp_types.TextContent | mcp_types.ImageContent]:
            """Run Python code in the notebook's kernel, in the user's namespace, like a
            cell; returns stdout, stderr, the result, displayed images or the error.
            Waits for a running cell first; interrupted after ``timeout`` seconds."""
            backend, _ = self._of(ctx)
            return await self._run(ctx, lambda progress: backend.run_code(code, timeout, progress))

        @server.tool()
        async def insert_cell(
            source: Source,
            ctx: Context[Any, Any],
            cell_type: Literal["code", "markdown", "raw"] = "code",
            index: int | None = None,
            after_cell_id: CellId | None = None,
        ) -> str:
            """Insert a new cell into the notebook the user has open: at ``index``, right
            after the cell ``after_cell_id``, or (neither) at the end. The user reviews it
            in the chat first. Returns the new cell's id, index and revision. For .ipynb
            notebooks use this, never an edit of the .ipynb file."""
            return await self._edit(
                ctx,
                "insert_cell",
                {
                    "source": source,
                    "cell_type": cell_type,
                    "index": index,
                    "after_cell_id": after_cell_id,
                },
            )

        @server.tool()
        async def edit_cell(
            ctx: Context[Any, Any],
            cell_id: CellId | None = None,
            index: int | None = None,
            source: Source | None = None,
            old: Source | None = None,
            new: Source | None = None,
            rev: Rev | None = None,
        ) -> str:
            """Change one cell of the open notebook, named by ``cell_id`` or ``index``: its
            whole new ``source``, or ``old`` replaced by ``new`` (``old`` must occur exactly
            once in the cell). With ``rev`` (from read_cells) a cell changed since is refused
            and its current source shown. The user reviews the change in the chat first. For
            .ipynb notebooks use this, never an edit of the .ipynb file."""
            args = {"cell_id": cell_id, "index": index, "source": source, "old": old}
            return await self._edit(ctx, "edit_cell", {**args, "new": new, "rev": rev})

        @server.tool()
        async def delete_cell(
            ctx: Context[Any, Any],
            cell_id: CellId | None = None,
            index: int | None = None,
            rev: Rev | None = None,
        ) -> str:
            """Delete one cell of the open notebook, named by ``cell_id`` or ``index`` (with
            ``rev``: only if unchanged since read). The user reviews it in the chat first."""
            return await self._edit(
                ctx, "delete_cell", {"cell_id": cell_id, "index": index, "rev": rev}
            )

        @server.tool()
        async def move_cell(
            to_index: int,
            ctx: Context[Any, Any],
            cell_id: CellId | None = None,
            index: int | None = None,
            rev: Rev | None = None,
        ) -> str:
            """Move one cell of the open notebook, named by ``cell_id`` or ``index``, so that
            it ends at ``to_index``. The user reviews it in the chat first."""
            args = {"cell_id": cell_id, "index": index, "rev": rev, "to_index": to_index}
            return await self._edit(ctx, "move_cell", args)

        @server.tool()
        async def run_cell(
            ctx: Context[Any, Any],
            cell_id: CellId | None = None,
            index: int | None = None,
            timeout: Timeout = DEFAULT_TIMEOUT,
        ) -> list[mcp_types.TextContent | mcp_types.ImageContent]:
            """Run one cell of the open notebook, named by ``cell_id`` or ``index``, as if the
            user ran it: its outputs show in the notebook and the execution count moves.
            Returns its outputs like run_code; interrupted after ``timeout`` seconds."""
            backend, endpoint = self._of(ctx)

            async def run(progress: Progress) -> list[Part]:
                document = await backend.document(endpoint.agent, endpoint.notebook_path)
                if isinstance(document, str):
                    return [{"type": "text", "text": f"Not run: {document}"}]
                try:
                    cells = await document.cells()
                    at = find(cells, cell_id, index)
                    named = cells[at].get("id")
                    if not isinstance(named, str):
                        raise EditRefused(f"cell {at} has no id to run it by")
                    return await document.run(named, timeout, progress)
                except EditRefused as exc:
                    return [{"type": "text", "text": f"Not run: {exc}"}]

            with _calling(endpoint, reading=False):
                return await self._run(ctx, run)

        @server.tool()
        async def active_cell(ctx: Context[Any, Any]) -> str:
            """The cell the user has selected in the notebook page, and any text selected in
            it."""
            backend, endpoint = self._of(ctx)
            document = await backend.document(endpoint.agent, endpoint.notebook_path)
            if isinstance(document, str):
                return f"No active cell: {document}"
            active = await document.active_cell()
            if active is None:
                return f"No page reports a selection: the notebook is reached through {document.where}."
            said = f"The user's cell: index {active.get('index')}, id={active.get('cellId')}"
            selection = active.get("selection")
            return f"{said}; selected text:\n{clip(selection, MAX_SOURCE)}" if selection else said

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

    async def _edit(self, ctx: Context[Any, Any], tool: str, args: Mapping[str, Any]) -> str:
        """Plan ``tool``'s edit in the live document, have it reviewed, apply it. An edit
        not made is the call's error (``ToolError``), saying why."""
        backend, endpoint = self._of(ctx)
        if endpoint.review is None:
            raise ToolError("Not done: this chat has no way to review notebook edits.")
        try:
            with _calling(endpoint, reading=False):
                planned = await _planned(backend, endpoint, tool, args)
                if isinstance(planned, str):
                    raise EditRefused(planned)
                document, edit = planned
                review = await endpoint.review(edit)
                if not review.accepted:
                    raise EditRefused(review.detail)
                applied = await document.apply(edit)
        except EditRefused as exc:
            raise ToolError(f"Not done: {exc}") from None
        return _done(edit, applied, document.where)

    async def _run(
        self, ctx: Context[Any, Any], work: Callable[[Progress], Awaitable[list[Part]]]
    ) -> list[mcp_types.TextContent | mcp_types.ImageContent]:
        """Run code in the kernel for the chat (``run_code``, ``run_cell``): cancelled with
        the turn, never waiting on the chat's own cell."""
        backend, endpoint = self._of(ctx)

        async def progress(message: str) -> None:
            with contextlib.suppress(Exception):  # a client without a progress token
                await ctx.report_progress(0, None, message)

        async def run() -> list[Part]:
            # No socket to the kernel (restarted, no Chat yet): no cell waits.
            with contextlib.suppress(KernelUnavailable):
                if await backend.kernel("cell_waits", {}) == "yes":  # it would wait on itself
                    return [{"type": "text", "text": NOT_RUN}]
            return await work(progress)

        running = asyncio.ensure_future(run())
        endpoint.runs.add(running)
        try:
            return _content(await asyncio.shield(running))
        except asyncio.CancelledError:
            if not running.cancelled():  # this tool call itself was cancelled
                raise
            return _content([{"type": "text", "text": "Cancelled: the turn was cancelled."}])
        finally:
            endpoint.runs.discard(running)
            running.cancel()

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
                guarded(app, self.chat_for, self.gate),
                log_config=None,  # the host process's logging stays as it is
                log_level="warning",
                access_log=False,
                lifespan="on",
                ws="none",
                http=connection_class(self.gate),
                backlog=ACCEPT_BATCH,
            )
            server = _Server(config)
            self._task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
            while not server.started:
                if self._task.done():
                    self._task.result()  # raises what stopped it
                    raise RuntimeError("the notebook tools' endpoint did not start")
                await asyncio.sleep(0.01)
            sock.listen(LISTEN_BACKLOG)  # asyncio listened with ACCEPT_BATCH (gate.py)
            self._server = server
            self.url = f"http://127.0.0.1:{port}{MCP_PATH}"

    async def close(self) -> None:
        self._chats.clear()
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 5)
        self._server = None


ToolsFactory = Callable[[], Awaitable[Endpoint]]
