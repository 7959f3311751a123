"""The agent process and the JSON-RPC conversation with it.

Owns the subprocess (on Linux under ``reaper.py``, which ends every descendant of the
agent on teardown and when the server dies; elsewhere in a process group of its own,
which teardown ends), drains stdout and stderr continuously, matches responses to our
requests, and hands every agent->client request and notification to the session. When
the agent goes away every request still waiting on it is settled, so nothing hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import jsonrpc
from .chunk_lines import ChunkLines
from .jsonrpc import (
    Id,
    Invalid,
    LineBudget,
    Message,
    Notification,
    Oversized,
    Request,
    Response,
    RpcError,
)
from .spawn import kill_group, spawn

log = logging.getLogger(__name__)

AGENT_GONE = -32099  # our own code for "the agent process ended before answering"
STDERR_TAIL = 4096
READ_CHUNK = 1 << 18
EXIT_DRAIN = 2.0  # how long output is still read after the agent exited
# Lines longer than this are parsed in a worker thread: the loop runs between its
# C passes, so one big line stalls other chats and requests for tens of ms, not more.
THREAD_PARSE = 1 << 20
# One such parse at a time in the process: parsing costs a few times a line's size,
# and n chats parsing at once would cost n times that.
_BIG_PARSE = threading.Lock()
# What the unfinished lines of all agents in this process may hold together.
LINE_BUDGET = LineBudget(64 * 1024 * 1024)
# What the agent may leave unread of what we send it, as much as it may send in a line;
# ours are a prompt (its attachments a few MB at most) and short answers.
MAX_UNREAD = jsonrpc.MAX_LINE


class AgentConnection:
    """One agent subprocess speaking ACP on stdin/stdout."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        on_request: Callable[[Request], None],
        on_notification: Callable[[Notification], None],
        on_exit: Callable[[int | None], None],
        on_notice: Callable[[str], None] = lambda text: None,
        on_chunk: Callable[[tuple[str, object], dict[str, Any], str], None] | None = None,
        max_line: int = jsonrpc.MAX_LINE,
        line_budget: LineBudget | None = None,
    ) -> None:
        self.argv = list(argv)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self._on_request = on_request
        self._on_notification = on_notification
        self._on_exit = on_exit
        self._on_notice = on_notice  # what the agent did wrong, for the person
        # A text chunk read by its line's template (chunk_lines.py): its key, the
        # template's update, its text. None: every line is parsed whole.
        self._on_chunk = on_chunk
        self._chunk_lines = ChunkLines()
        self._max_line = max_line
        self._framer = jsonrpc.LineFramer(
            max_line, LINE_BUDGET if line_budget is None else line_budget
        )
        self._last_output = time.monotonic()
        self._told = False  # the person heard of the line being skipped
        self._failed_lines = 0  # lines a handler failed on (each skipped)
        self._proc: asyncio.subprocess.Process | None = None
        self._pending: dict[Id, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._ending: asyncio.Task[None] | None = None  # the close() of a deaf agent
        self._exit = asyncio.Event()  # the process ended (its pipes may still be open)
        self._closed = False
        self.exited = asyncio.Event()
        self.agent_pid: int | None = None  # pid is the reaper's, where there is one

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Spawn the agent; raises ``OSError`` when the command cannot run (a NUL byte in
        its command, cwd or environment, or an "=" in a variable's name, too)."""
        loop = asyncio.get_running_loop()
        protocol = _Protocol(loop, self._exit)
        transport, self.agent_pid = await spawn(
            lambda: protocol,
            self.argv,
            env=self.env,
            cwd=self.cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        self._proc = asyncio.subprocess.Process(transport, protocol, loop)
        self._tasks = [
            asyncio.create_task(self._read_stderr()),
            asyncio.create_task(self._supervise()),
        ]

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def stderr_tail(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")[-STDERR_TAIL:]

    async def close(self, grace: float = 2.0) -> None:
        """End the agent and its whole process group; idempotent."""
        proc = self._proc
        if proc is None:
            return
        if not self._closed:
            self._closed = True
            if proc.stdin and not proc.stdin.is_closing():
                proc.stdin.close()  # a polite agent exits on EOF
            await self._end(proc.pid, grace)
        await self.exited.wait()

    async def _end(self, pid: int, grace: float) -> None:
        if not await self._exited_within(grace):
            kill_group(pid, signal.SIGTERM)
            if not await self._exited_within(grace):
                kill_group(pid, signal.SIGKILL)

    async def _exited_within(self, seconds: float) -> bool:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._exit.wait(), seconds)
        return self._exit.is_set()

    # ------------------------------------------------------------ sending

    def _write(self, data: bytes) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.is_closing():
            raise RpcError(AGENT_GONE, "the agent is not running")
        proc.stdin.write(data)
        if proc.stdin.transport.get_write_buffer_size() > MAX_UNREAD:
            self._deaf(proc.stdin)

    def _deaf(self, stdin: asyncio.StreamWriter) -> None:
        """The agent does not read what it is sent: every answer to its requests would
        wait in our buffer (an agent that writes requests and never reads grew it by a
        gigabyte). Drop what waits, tell the person, end the agent."""
        stdin.transport.abort()
        log.warning(
            "agent %s: over %d bytes sent to it unread; ending it", self.argv[0], MAX_UNREAD
        )
        self._on_notice(
            f"the agent left {_size(MAX_UNREAD)} of what it was sent unread; it is ended"
        )
        self._ending = asyncio.get_running_loop().create_task(self.close())

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its result; ``RpcError`` on error or exit."""
        if self.exited.is_set():
            raise RpcError(AGENT_GONE, "the agent is not running")
        id_ = self._next_id
        self._next_id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[id_] = fut
        try:
            self._write(jsonrpc.encode_request(id_, method, params))
            await self._drain()
            return await fut
        finally:
            self._pending.pop(id_, None)

    def notify(self, method: str, params: Any) -> None:
        with contextlib.suppress(RpcError, ConnectionError):
            self._write(jsonrpc.encode_notification(method, params))

    def respond(self, id_: Id, result: Any) -> None:
        with contextlib.suppress(RpcError, ConnectionError):
            self._write(jsonrpc.encode_result(id_, result))

    def respond_error(self, id_: Id, code: int, message: str) -> None:
        with contextlib.suppress(RpcError, ConnectionError):
            self._write(jsonrpc.encode_error(id_, code, message))

    async def _drain(self) -> None:
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(ConnectionError):
                await proc.stdin.drain()

    # ------------------------------------------------------------ reading

    def activity(self) -> str:
        """What the agent is doing on stdout, for a message about a stuck turn."""
        skipping = self._framer.skipping
        if skipping is not None:
            return f"it is sending a {_size(skipping.size)} line, which is skipped"
        if self._framer.buffered:
            return f"it is in the middle of a {_size(self._framer.buffered)} line"
        return f"it has sent nothing for {time.monotonic() - self._last_output:.0f} s"

    async def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        # Per line, in the loop below: locals, and no coroutine (most lines are short).
        feed, parse, max_line = self._framer.feed, jsonrpc.parse, self._max_line
        notify, dispatch = self._on_notification, self._dispatch
        chunks, on_chunk = self._chunk_lines, self._on_chunk
        try:
            while True:
                data = await stdout.read(READ_CHUNK)
                self._last_output = time.monotonic()
                # At the end of the stream, a last line without a newline still counts.
                for line in feed(data) if data else self._framer.close():
                    try:
                        if type(line) is bytes and len(line) <= THREAD_PARSE:
                            if line.startswith(chunks.prefix) and on_chunk is not None:
                                text = chunks.text(line)
                                if text is not None:
                                    on_chunk(chunks.key, chunks.update, text)
                                    continue
                            msg = parse(line, max_line)
                            if type(msg) is Notification:
                                if on_chunk is not None:
                                    chunks.learn(line, msg)
                                notify(msg)
                            else:
                                dispatch(msg)
                        elif isinstance(line, Oversized):
                            self._oversized(line)
                        else:  # longer than THREAD_PARSE
                            dispatch(await asyncio.to_thread(_parse_big, line, max_line))
                    except Exception:  # a handler's bug on one odd line costs that line
                        self._line_failed(line)
                if not data:
                    break
        except Exception:  # a bug in a handler must not leave requests hanging
            log.exception("agent reader failed")
        finally:
            self._framer.discard()  # a cancelled reader gives its share of the budget back

    def _line_failed(self, line: bytes | Oversized) -> None:
        """Log the first line a handler failed on (then only count), tell the person once."""
        self._failed_lines += 1
        if self._failed_lines > 1:
            log.debug("agent %s: a handler failed on line %d", self.argv[0], self._failed_lines)
            return
        shown = line[:200] if isinstance(line, bytes) else line
        log.exception("agent %s: a line failed in its handler; skipped: %r", self.argv[0], shown)
        self._on_notice("the agent sent a line that could not be handled; it is skipped")

    def _oversized(self, line: Oversized) -> None:
        """Log a dropped line, and tell the person once: when it crosses, or ends at once."""
        log.warning(
            "agent %s: a %d-byte line%s; skipped (%s %d)",
            self.argv[0],
            line.size,
            "" if line.done else " so far",
            "budget left" if line.budget else "limit",
            line.limit,
        )
        if line.done and self._told:
            self._told = False
            return
        self._told = not line.done
        more = "" if line.done else " and more"
        if line.budget:
            self._on_notice(
                f"the agent sent a line of {_size(line.size)}{more} while the agents on this"
                f" server had only {_size(line.limit)} left of the memory their unfinished"
                " lines share; it is skipped"
            )
        else:
            self._on_notice(
                f"the agent sent a line of {_size(line.size)}{more}; it is skipped"
                f" (limit {_size(line.limit)})"
            )

    def _dispatch(self, msg: Message | None) -> None:
        if msg is None:
            return
        if isinstance(msg, Notification):
            self._on_notification(msg)
        elif isinstance(msg, Response):
            fut = self._pending.get(msg.id)
            if fut is None or fut.done():
                log.debug("response for unknown request id %r", msg.id)
            elif msg.error is not None:
                fut.set_exception(RpcError.from_error(msg.error))
            else:
                fut.set_result(msg.result)
        elif isinstance(msg, Request):
            self._on_request(msg)
        elif isinstance(msg, Invalid):
            log.warning("agent sent a malformed line (%s): %r", msg.reason, msg.line[:120])
            if msg.over_limit:  # perhaps a real message, lost: say so (garbage is only logged)
                self._on_notice(
                    f"the agent sent a line that could not be read ({msg.reason}); it is skipped"
                )

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        stderr = self._proc.stderr
        while True:
            data = await stderr.read(READ_CHUNK)
            if not data:
                return
            self._stderr.append(data)
            self._stderr_size += len(data)
            while self._stderr_size - len(self._stderr[0]) >= STDERR_TAIL:
                self._stderr_size -= len(self._stderr.popleft())

    async def _supervise(self) -> None:
        """Ends the connection once, on whichever comes first: stdout closing or the exit."""
        proc = self._proc
        assert proc is not None
        reader = asyncio.create_task(self._read_stdout())
        exit_ = asyncio.create_task(self._exit.wait())
        await asyncio.wait({reader, exit_}, return_when=asyncio.FIRST_COMPLETED)
        if reader.done():
            # stdout closed; an agent that closed it but lives on is ended here.
            await self._end(proc.pid, 2.0)
        else:
            # The agent exited, but stdout is still open: children it left behind hold
            # the pipe. End them, and read what the agent wrote before it exited.
            kill_group(proc.pid, signal.SIGKILL)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(reader), EXIT_DRAIN)
            reader.cancel()  # a process that left the group still holds it: stop waiting
        await asyncio.gather(reader, exit_, return_exceptions=True)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._tasks[0]), 1.0)
        kill_group(proc.pid, signal.SIGKILL)  # orphans it left behind
        gone = RpcError(AGENT_GONE, f"the agent exited (code {proc.returncode})")
        for fut in list(self._pending.values()):
            if not fut.done():
                fut.set_exception(gone)
        self.exited.set()
        self._on_exit(proc.returncode)


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's protocol for a subprocess, plus an event set the moment it exits.

    ``Process.wait()`` also waits for the pipes to close, which a child the agent
    left behind (holding them) can put off forever.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, exited: asyncio.Event) -> None:
        super().__init__(limit=1 << 16, loop=loop)
        self._exited = exited

    def process_exited(self) -> None:
        super().process_exited()
        self._exited.set()


def _parse_big(line: bytes, max_line: int) -> jsonrpc.Message | None:
    with _BIG_PARSE:
        return jsonrpc.parse(line, max_line)


def _size(size: int) -> str:
    mib = size / (1024 * 1024)
    if mib >= 10:
        return f"{mib:.0f} MiB"
    return f"{mib:.1f} MiB" if mib >= 1 else f"{size:,} bytes"
