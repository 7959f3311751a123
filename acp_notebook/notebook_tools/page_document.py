"""The open JupyterLab / Notebook 7 page as a ``LiveDocument`` (no real-time collaboration).

The lab extension (js/src/lab/documents.ts) keeps one socket to the server
(``acp-notebook/ws/pages``, server/page_socket.py) and reports on it the notebooks the
page holds open (``page:notebooks``) and which one the user is in (``page:focus``). The
server asks it (``page:request``) for a notebook's cells, to apply an edit to the
notebook's model (so the page's undo takes it back and the file on disk is not
touched), to run a cell as the user would, or for the active cell and selected text;
the page answers each with a ``page:reply``. An agent's read of the notebook as a file
(``fs/read_text_file``) asks for it as the text its save would write. This module is that
protocol without the socket: the socket hands ``Pages`` a send function and the frames it
reads.

Two pages with the same notebook open (two browser tabs; two views in one tab share
one model and report it once): every request goes to the page the user was in most
recently, at the time of the request. The other page keeps its own copy, as it would
for the user's own typing in the first tab: JupyterLab without collaboration never
merges two tabs. A page that closes, or does not answer in time, ends the request
with ``EditRefused`` saying so; nothing waits on a page without end.

Who may hold a page: any login that may execute on kernels (the socket's check), which
could already run code in any kernel of the server; a page's answers are untrusted input
all the same (validated, bounded).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import nbformat
from pydantic import TypeAdapter, ValidationError

from ..wire import bounded_json
from ..wire.contracts import (
    MAX_PAGE_FRAME,
    MAX_SELECTION,
    CellEdit,
    PageFocus,
    PageFrame,
    PageNotebooks,
    PageReply,
    PageRequest,
    why_invalid,
)
from .cells import CELL_ID, Part, Parts, add_output
from .documents import ActiveCell, Applied, EditRefused, Progress

Send = Callable[[dict[str, Any]], None]
Op = Literal["cells", "apply", "run", "active", "notebook", "text", "write"]
# The requests on a text file open in an editor (the others are on a notebook).
FILE_OPS = ("text", "write")
# Where an agent's write to a file open in a page lands.
IN_EDITOR = "the open editor (its undo takes the change back)"
# Where an agent's edits of a notebook open in a page land (and a read of it comes from).
IN_NOTEBOOK = "the open notebook page (its undo takes the change back)"

MAX_PAGES = 64  # page sockets one server holds at once
MAX_WAITING = 64  # requests waiting on one page at once
TIMEOUT = 15.0  # seconds a page has to answer a request other than run
RUN_GRACE = 15.0  # a run's answer may come this long after its timeout (the interrupt)
PROGRESS_EVERY = 10.0  # seconds between progress notes while a run waits

_frames: TypeAdapter[PageNotebooks | PageFocus | PageReply] = TypeAdapter(PageFrame)


class TooManyPages(Exception):
    """The server holds ``MAX_PAGES`` page sockets already."""


@dataclass
class _Asked:
    """A request waiting for the page's answer."""

    path: str
    op: Op
    future: asyncio.Future[PageReply]

    def held(self, page: Page) -> bool:
        """Whether ``page`` still holds what this request is on."""
        return self.path in (page.files if self.op in FILE_OPS else page.notebooks)

    def end(self, reason: str) -> None:
        if not self.future.done():
            self.future.set_exception(EditRefused(reason))


@dataclass(eq=False)
class Page:
    """One page's socket: the notebooks it holds and its requests waiting for answers."""

    send: Send
    notebooks: dict[str, str | None] = field(default_factory=dict)  # path -> kernel id
    files: set[str] = field(default_factory=set)  # text files open in its editors
    focused: float = field(default_factory=time.monotonic)
    waiting: dict[int, _Asked] = field(default_factory=dict)


class Pages:
    """Every page socket of the server; the ``DocumentSource`` of open pages."""

    def __init__(self, max_pages: int = MAX_PAGES) -> None:
        self._pages: list[Page] = []
        self._max_pages = max_pages
        self._ids = itertools.count(1)

    def connect(self, send: Send) -> Page:
        if len(self._pages) >= self._max_pages:
            raise TooManyPages(f"{self._max_pages} pages are connected already")
        page = Page(send)
        self._pages.append(page)
        return page

    def disconnect(self, page: Page) -> None:
        """The page's socket closed: what waits on it ends with the reason."""
        if page in self._pages:
            self._pages.remove(page)
        for asked in page.waiting.values():
            asked.end("the page closed (or reloaded) before it answered")

    def receive(self, page: Page, message: str | bytes) -> None:
        """One frame from the page; raises ``ValueError`` saying what is wrong with it."""
        try:
            frame = _frames.validate_python(bounded_json.loads(message, max_bytes=MAX_PAGE_FRAME))
        except ValidationError as exc:
            raise ValueError(why_invalid(exc)) from None
        if isinstance(frame, PageNotebooks):
            page.notebooks = {n.path: n.kernelId for n in frame.notebooks}
            page.files = set(frame.files)
            for asked in page.waiting.values():
                if not asked.held(page):
                    asked.end(f"{asked.path} was closed in the page before it answered")
        elif isinstance(frame, PageFocus):
            page.focused = time.monotonic()
        else:
            answered = page.waiting.get(frame.id)
            if answered is not None and not answered.future.done():
                answered.future.set_result(frame)

    def restarted(self, kernel_id: str) -> None:
        """The kernel restarted: the runs waiting in its notebooks end now (a page does
        not hear of a restart it did not ask for; the cell would wait for its timeout)."""
        for page in self._pages:
            for number, asked in page.waiting.items():
                kernel = page.notebooks.get(asked.path)
                if asked.op == "run" and kernel == kernel_id and not asked.future.done():
                    result = {"outputs": [], "restarted": True}
                    reply = PageReply(type="page:reply", id=number, result=result)
                    asked.future.set_result(reply)

    def holding(self, path: str, file: bool = False) -> Page | None:
        """The page the user was in most recently of those that hold ``path`` open (``file``:
        in a text editor, else as a notebook)."""
        pages = [p for p in self._pages if path in (p.files if file else p.notebooks)]
        return max(pages, key=lambda p: p.focused, default=None)

    async def editor_text(self, path: str) -> str | None:
        """The text of ``path`` as an editor of a page shows it, unsaved changes included;
        None when no page has it open."""
        if self.holding(path, file=True) is None:
            return None
        return _text(await self.ask(path, "text", TIMEOUT))

    async def notebook_text(self, path: str) -> str | None:
        """The notebook ``path`` as a page holds it now, unsaved cells included, as the
        nbformat text its save would write; None when no page has it open."""
        if self.holding(path) is None:
            return None
        result = await self.ask(path, "notebook", TIMEOUT)
        notebook = result.get("notebook") if isinstance(result, Mapping) else None
        if not isinstance(notebook, dict):
            raise EditRefused("the page answered with no notebook")
        return await asyncio.to_thread(_saved_text, notebook)

    async def write_editor(self, path: str, before: str, after: str) -> str | None:
        """Replace ``before`` with ``after`` in the editor of a page that has ``path`` open
        (one undo step there); where it landed, or None when no page has it open."""
        if self.holding(path, file=True) is None:
            return None
        await self.ask(path, "write", TIMEOUT, before=before, text=after)
        return IN_EDITOR

    async def open(self, path: str, agent: str) -> PageDocument | None:
        return PageDocument(self, path) if self.holding(path) is not None else None

    async def ask(
        self,
        path: str,
        op: Op,
        timeout: float,
        *,
        edit: CellEdit | None = None,
        cell_id: str | None = None,
        run_timeout: float | None = None,
        progress: Progress | None = None,
        before: str | None = None,
        text: str | None = None,
    ) -> Any:
        """The result of ``op`` on ``path`` from the page holding it; ``EditRefused``
        when no page holds it, the page refuses, closes or does not answer in time."""
        page = self.holding(path, file=op in FILE_OPS)
        if page is None:
            raise EditRefused(f"no open page holds {path} any more")
        if len(page.waiting) >= MAX_WAITING:
            raise EditRefused(f"{MAX_WAITING} requests wait on the page already")
        number = next(self._ids)
        future: asyncio.Future[PageReply] = asyncio.get_running_loop().create_future()
        page.waiting[number] = _Asked(path, op, future)
        request = PageRequest(
            type="page:request",
            id=number,
            path=path,
            op=op,
            edit=edit,
            cellId=cell_id,
            timeout=run_timeout,
            before=before,
            text=text,
        )
        try:
            page.send(request.model_dump(exclude_none=True))
            reply = await _wait(future, timeout, progress)
        finally:
            page.waiting.pop(number, None)
        if reply.error is not None:
            current = (
                "" if reply.source is None else f"\nThe cell's current source:\n{reply.source}"
            )
            raise EditRefused(f"the page refused: {reply.error}{current}")
        return reply.result


async def _wait(
    future: asyncio.Future[PageReply], timeout: float, progress: Progress | None
) -> PageReply:
    """The reply within ``timeout`` seconds, with a progress note every ``PROGRESS_EVERY``."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise EditRefused(f"the page did not answer within {timeout:g} s")
        step = left if progress is None else min(left, PROGRESS_EVERY)
        try:
            return await asyncio.wait_for(asyncio.shield(future), step)
        except asyncio.TimeoutError:
            if progress is not None and time.monotonic() < deadline:
                await progress("running in the page")


def _saved_text(notebook: dict[str, Any]) -> str:
    """The text a save of ``notebook`` writes: nbformat's writer, with the final newline
    ``nbformat.write`` adds (as the contents manager saves it)."""
    text: str = nbformat.writes(nbformat.from_dict(notebook), nbformat.NO_CONVERT)
    return text + "\n"


def _text(result: Any) -> str:
    text = result.get("text") if isinstance(result, Mapping) else None
    if not isinstance(text, str):
        raise EditRefused("the page answered with no text")
    return text


def _applied(result: Any) -> Applied:
    if not isinstance(result, Mapping):
        raise EditRefused("the page answered the edit with no cell")
    cell, index = result.get("cellId"), result.get("index")
    if not isinstance(cell, str) or not CELL_ID.fullmatch(cell) or not isinstance(index, int):
        raise EditRefused("the page answered the edit with a malformed cell")
    return {"cellId": cell, "index": index}


class PageDocument:
    """A notebook as the page holding it shows it (see the module's text)."""

    where = IN_NOTEBOOK

    def __init__(self, pages: Pages, path: str) -> None:
        self._pages = pages
        self.path = path

    async def cells(self, outputs: bool = True) -> list[dict[str, Any]]:
        result = await self._pages.ask(self.path, "cells", TIMEOUT)
        if not isinstance(result, list):
            raise EditRefused("the page answered with no cells")
        return [c for c in result if isinstance(c, dict) and isinstance(c.get("id"), str)]

    async def apply(self, edit: CellEdit) -> Applied:
        return _applied(await self._pages.ask(self.path, "apply", TIMEOUT, edit=edit))

    async def run(self, cell_id: str, timeout: float, progress: Progress) -> list[Part]:
        await progress("running in the page")
        result = await self._pages.ask(
            self.path,
            "run",
            timeout + RUN_GRACE,
            cell_id=cell_id,
            run_timeout=timeout,
            progress=progress,
        )
        if not isinstance(result, Mapping):
            raise EditRefused("the page answered the run with no outputs")
        parts = Parts()
        count = result.get("executionCount")
        if isinstance(count, int):
            parts.text(f"[execution count {count}]")
        outputs = result.get("outputs")
        for output in outputs if isinstance(outputs, list) else []:
            if isinstance(output, Mapping):
                add_output(parts, output)
        if result.get("timedOut") is True:
            parts.text(f"[interrupted: it ran longer than the timeout of {timeout:g} s]")
        if result.get("restarted") is True:
            parts.text(
                "[the kernel was restarted while this ran; what it printed is in the notebook]"
            )
        if result.get("restarted") is True:
            parts.text("[the kernel was restarted while this ran]")
        if not parts.parts:
            parts.text("(no output)")
        return parts.parts

    async def active_cell(self) -> ActiveCell | None:
        result = await self._pages.ask(self.path, "active", TIMEOUT)
        if not isinstance(result, Mapping):
            return None
        active: ActiveCell = {}
        cell, index, selection = result.get("cellId"), result.get("index"), result.get("selection")
        if isinstance(cell, str) and CELL_ID.fullmatch(cell):
            active["cellId"] = cell
        if isinstance(index, int):
            active["index"] = index
        if isinstance(selection, str) and selection:
            active["selection"] = selection[:MAX_SELECTION]
        return active or None
