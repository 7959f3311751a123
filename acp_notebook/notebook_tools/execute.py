"""``run_code``: code sent to the kernel's shell channel, exactly like a cell.

So it queues behind a running cell (and says so with progress messages), runs in the
user's namespace, and its outputs come back on iopub. On a timeout, or when the tool
call is cancelled (the turn was cancelled), the kernel is interrupted, but only once our
own request is the one running: a request still queued cannot be withdrawn, so it is
interrupted the moment it starts instead of cutting the user's cell short.

Both modes use this: the server with a client of the kernel from its kernel
manager, local mode with a client of its own kernel from the connection file.
``Runner.execute`` runs a notebook cell's source the same way but as the user's run
(in the history, the execution count moves) and returns the outputs as nbformat too,
for a document path that writes them into the cell.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient

from ..wire.clip import clip
from .cells import Part, Parts, add_output

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 600.0
PROGRESS_EVERY = 2.0
MAX_STREAM = 20_000  # characters of stdout / stderr kept
SETTLE = 5.0  # after an interrupt, how long the outputs may take to end
Progress = Callable[[str], Awaitable[None]]
Interrupt = Callable[[], Awaitable[None]]


async def wait_subscribed(client: AsyncKernelClient, seconds: float = 10.0) -> None:
    """Wait until iopub delivers to this client (a new subscription drops what comes
    first). A kernel_info_request on the control channel is answered even while a
    cell runs, and its busy/idle status arrives on iopub."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        request = client.session.msg("kernel_info_request")
        msg_id = request["header"]["msg_id"]
        client.control_channel.send(request)
        until = time.monotonic() + 0.5
        while (left := until - time.monotonic()) > 0:
            try:
                msg = await client.get_iopub_msg(timeout=left)
            except Exception:  # queue.Empty: nothing yet
                break
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                with contextlib.suppress(Exception):
                    await client.get_control_msg(timeout=1)
                return
    raise TimeoutError("the kernel's iopub channel did not answer")


class Runner:
    """Runs one request at a time on a kernel (they queue in the kernel anyway)."""

    def __init__(self, connect: Callable[[], Awaitable[AsyncKernelClient]], interrupt: Interrupt):
        self._connect = connect
        self._interrupt = interrupt
        self._client: AsyncKernelClient | None = None
        self._lock = asyncio.Lock()
        self._current: _Run | None = None
        self._reconnect = False

    def running(self) -> str | None:
        """What the run in progress does (running, or queued behind a cell), else None."""
        run = self._current
        if run is None or run.finished or run.lost:
            return None
        lines = run.code.strip().splitlines()
        doing = "is running" if run.started else "waits for the kernel"
        tool = "run_cell" if run.as_cell else "run_code"
        return f"an agent's {tool} {doing}: {clip(lines[0] if lines else '', 200)}"

    def restarted(self) -> None:
        """The kernel was restarted: the run in progress ends without its reply (and
        without an interrupt, which would hit the new kernel), the next run reconnects."""
        if self._current is not None:
            self._current.lost = True
        self._reconnect = True

    async def run(self, code: str, timeout: float, progress: Progress) -> list[Part]:
        return (await self._execute(code, timeout, progress, as_cell=False)).parts

    async def execute(self, code: str, timeout: float, progress: Progress) -> Executed:
        """Runs ``code`` as a notebook cell: counted, in the history."""
        return await self._execute(code, timeout, progress, as_cell=True)

    async def _execute(
        self, code: str, timeout: float, progress: Progress, as_cell: bool
    ) -> Executed:
        timeout = min(max(timeout, 1.0), MAX_TIMEOUT)
        run: _Run | None = None
        await self._lock.acquire()
        try:
            if self._reconnect and self._client is not None:
                self._client.stop_channels()
                self._client = None
            self._reconnect = False
            if self._client is None:
                client = await self._connect()
                # A kernel gateway's client starts them over a WebSocket, asynchronously.
                started = client.start_channels()  # type: ignore[func-returns-value]
                if inspect.isawaitable(started):
                    await started
                await wait_subscribed(client)
                self._client = client
            run = self._current = _Run(self._client, code, as_cell)
            parts = await run.collect(timeout, progress, self._interrupt)
            return Executed(parts, run.nbformat_outputs(), run.execution_count)
        finally:
            if run is not None and not run.finished and not run.lost:
                # Cancelled (the turn was), or still running after the interrupt: stop it
                # and let its outputs drain in the background, holding the lock, so the
                # next run starts clean.
                asyncio.get_running_loop().create_task(self._abandon(run))
            else:
                self._current = None
                self._lock.release()

    async def _abandon(self, run: _Run) -> None:
        try:
            await run.abandon(self._interrupt)
        finally:
            self._current = None
            self._lock.release()

    def close(self) -> None:
        if self._client is not None:
            self._client.stop_channels()
            self._client = None


@dataclass
class Executed:
    """A run's answer for the agent (``parts``) and for the notebook cell."""

    parts: list[Part]
    outputs: list[dict[str, Any]]  # nbformat v4 outputs
    execution_count: int | None


class _Run:
    def __init__(self, client: AsyncKernelClient, code: str, as_cell: bool = False) -> None:
        self.client = client
        self.code = code
        self.as_cell = as_cell
        self.msg_id: str = client.execute(
            code, silent=False, store_history=as_cell, allow_stdin=False, stop_on_error=False
        )
        self.execution_count: int | None = None
        self.started = False
        self.finished = False  # only ever set once started (see _take)
        self.lost = False  # the kernel restarted under it: no reply will come
        self.outputs: list[dict[str, Any]] = []
        self._streams: dict[str, dict[str, Any]] = {}

    def _take(self, msg: dict[str, Any]) -> None:
        if msg.get("parent_header", {}).get("msg_id") != self.msg_id:
            return
        kind = msg["header"]["msg_type"]
        content = msg.get("content") or {}
        if kind == "status":
            if content.get("execution_state") == "busy":
                self.started = True
            elif content.get("execution_state") == "idle" and self.started:
                self.finished = True
        elif kind == "execute_input":
            self.started = True
            count = content.get("execution_count")
            self.execution_count = count if isinstance(count, int) else None
        elif kind == "stream":
            name = content.get("name", "stdout")
            stream = self._streams.get(name)
            if stream is None:
                stream = self._streams[name] = {"output_type": "stream", "name": name, "text": ""}
                self.outputs.append(stream)
            if len(stream["text"]) < MAX_STREAM:
                stream["text"] = (stream["text"] + str(content.get("text", "")))[:MAX_STREAM]
        elif kind in ("execute_result", "display_data", "error") and len(self.outputs) < 100:
            self.outputs.append({"output_type": kind, **content})

    def nbformat_outputs(self) -> list[dict[str, Any]]:
        """The outputs as a notebook keeps them (a display's transient id is not kept)."""
        return [
            {key: value for key, value in output.items() if key != "transient"}
            for output in self.outputs
        ]

    async def _pump(self, until: float) -> None:
        """Take iopub messages until this request is done or ``until``."""
        while not (self.finished or self.lost) and (left := until - time.monotonic()) > 0:
            try:
                msg = await self.client.get_iopub_msg(timeout=min(left, 0.5))
            except Exception:  # queue.Empty
                continue
            self._take(msg)

    async def collect(self, timeout: float, progress: Progress, interrupt: Interrupt) -> list[Part]:
        begun = time.monotonic()
        parts = Parts()
        # Queued behind a running cell: say so, and do not count it against the timeout.
        while not self.started and not self.lost:
            await self._pump(time.monotonic() + PROGRESS_EVERY)
            if not self.started and not self.lost:
                waited = time.monotonic() - begun
                await progress(f"waiting for the kernel: another cell is running ({waited:.0f} s)")
                if waited > MAX_TIMEOUT:
                    parts.text(f"Not run: the kernel stayed busy for {waited:.0f} s.")
                    return parts.parts
        if begun + 1 < time.monotonic():
            parts.text(f"[waited {time.monotonic() - begun:.0f} s for the kernel]")
        await progress("running")
        await self._pump(time.monotonic() + timeout)
        timed_out = not self.finished and not self.lost
        if timed_out:
            await interrupt()
            await self._pump(time.monotonic() + SETTLE)
        # The execute_reply adds nothing to iopub's outputs; read it so replies do not
        # pile up in the client.
        asyncio.get_running_loop().create_task(self._read_reply())
        for output in self.outputs:
            add_output(parts, output)
        if timed_out:
            parts.text(f"[interrupted: it ran longer than the timeout of {timeout:g} s]")
        if self.lost:
            parts.text("[the kernel was restarted while this ran]")
        if not parts.parts:
            parts.text("(no output)")
        return parts.parts

    async def _read_reply(self) -> None:
        with contextlib.suppress(Exception):
            await self.client.get_shell_msg(timeout=SETTLE)

    async def abandon(self, interrupt: Interrupt) -> None:
        """Wait for this request to start, interrupt it, let it end."""
        try:
            give_up = time.monotonic() + 2 * MAX_TIMEOUT
            while not (self.started or self.lost) and time.monotonic() < give_up:
                await self._pump(time.monotonic() + 1.0)
            if not (self.finished or self.lost):
                await interrupt()
                await self._pump(time.monotonic() + SETTLE)
            await self._read_reply()
        except Exception:
            log.exception("acp_notebook: could not interrupt an abandoned run_code")
