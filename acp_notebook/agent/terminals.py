"""The client terminals an agent runs through its chat (ACP ``terminal/*``).

Each terminal is a command started in the chat's cwd under ``reaper.py``, as the agent
is: it and whatever it starts end on ``terminal/kill`` and ``terminal/release``, on a
cancel, when the chat closes, and with the server however it ends (the reaper's parent
death signal). Its output, stdout and stderr together, is kept to its
``outputByteLimit``: the end, cut at a character boundary.

A terminal shows live in the tool call whose content embeds it: ``watch`` reads the
chat's tool call updates, and from then on the output goes out as updates of that tool
call in the shape claude's wrapper uses (``_meta.terminal_info``,
``terminal_output_delta``, ``terminal_exit``), which both folds read (wire/fold.py).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import jsonrpc
from .jsonrpc import RpcError
from .spawn import REAPED, REAPER_GRACE, kill_group, spawn

Json = Any
METHODS = (
    "terminal/create",
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
)
# Live terminals of one chat at once: each is a process (and its reaper).
MAX_TERMINALS = 16
# The output kept when the agent names no limit, and the most it may name.
DEFAULT_OUTPUT_LIMIT = 1 << 20
MAX_OUTPUT_LIMIT = 16 << 20
READ_CHUNK = 1 << 16
MAX_ARGS = 1000
MAX_ARG = 128 * 1024


@dataclass(eq=False)
class Terminal:
    terminal_id: str
    proc: asyncio.subprocess.Process
    limit: int
    output: bytearray = field(default_factory=bytearray)
    cut: int = 0  # bytes dropped from the start
    exit_status: dict[str, Json] | None = None
    exited: asyncio.Event = field(default_factory=asyncio.Event)
    decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace")
    )
    tool_call_id: str | None = None  # the tool call that shows it, once one embeds it
    reader: asyncio.Task[None] | None = None


class ClientTerminals:
    """A chat's terminals; ``on_update`` emits a tool call update that shows one."""

    def __init__(
        self, cwd: str, env: Mapping[str, str], on_update: Callable[[dict[str, Json]], None]
    ) -> None:
        self.cwd = cwd
        self.env = dict(env)
        self._on_update = on_update
        self._terminals: dict[str, Terminal] = {}
        # Sign-in commands (``login``), by their tool call id.
        self._logins: dict[str, Terminal] = {}
        self._next = 0
        self._closed = False

    async def handle(self, method: str, params: Json) -> Json:
        """Answer a ``terminal/*`` request; ``RpcError`` for a bad one."""
        if not isinstance(params, dict):
            raise RpcError(jsonrpc.INVALID_PARAMS, "params must be an object")
        if method == "terminal/create":
            return await self._create(params)
        term = self._terminals.get(params.get("terminalId"))  # type: ignore[arg-type]
        if term is None:
            raise RpcError(jsonrpc.INVALID_PARAMS, "no such terminal")
        if method == "terminal/output":
            return _output(term)
        if method == "terminal/wait_for_exit":
            await term.exited.wait()
            return dict(term.exit_status or {})
        if method == "terminal/kill":
            await self._kill(term)
            return {}
        if method == "terminal/release":
            await self._kill(term)
            self._terminals.pop(term.terminal_id, None)
            return {}
        raise RpcError(jsonrpc.METHOD_NOT_FOUND, f"method not found: {method[:200]}")

    def watch(self, update: Mapping[str, Json]) -> None:
        """A tool call update from the agent: a terminal its content embeds shows there."""
        tool_call_id = update.get("toolCallId")
        content = update.get("content")
        if not isinstance(tool_call_id, str) or not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "terminal":
                continue
            term = self._terminals.get(block.get("terminalId"))  # type: ignore[arg-type]
            if term is None or term.tool_call_id is not None:
                continue
            term.tool_call_id = tool_call_id
            # What it printed so far at once, then each chunk as it comes.
            meta: dict[str, Json] = {
                "terminal_info": {"terminal_id": term.terminal_id},
                "terminal_output": {"terminal_id": term.terminal_id, "data": _text(term)},
            }
            if term.exit_status is not None:
                meta["terminal_exit"] = _exit_meta(term)
            self._show(term, meta)

    async def login(self, argv: list[str], env: Mapping[str, str], tool_call_id: str) -> Terminal:
        """Start a sign-in command (an auth method's, on the user's click) in the chat's
        cwd, its stdin a pipe for what the user types (``write``), its output shown on
        ``tool_call_id`` from the start. Not one of the agent's terminals: the agent
        cannot read it. ``OSError`` when it cannot start."""
        if self._closed:
            raise OSError("the chat is closing")
        proc = await _spawn(argv, self.cwd, dict(env), stdin=asyncio.subprocess.PIPE)
        term = Terminal(tool_call_id, proc, DEFAULT_OUTPUT_LIMIT, tool_call_id=tool_call_id)
        self._logins[tool_call_id] = term
        term.reader = asyncio.create_task(self._read(term))
        return term

    @staticmethod
    def write(term: Terminal, line: str) -> None:
        """``line`` and a newline to a sign-in's stdin; ``OSError`` once it is closed."""
        stdin = term.proc.stdin
        if stdin is None or stdin.is_closing() or term.exited.is_set():
            raise OSError("the sign-in command is not running")
        stdin.write(line.encode() + b"\n")

    async def stop(self, term: Terminal) -> None:
        """End one terminal (and what it started)."""
        await self._kill(term)

    def kill_all(self) -> None:
        """End every running terminal (a cancel, the agent gone); their output stays."""
        for term in [*self._terminals.values(), *self._logins.values()]:
            if not term.exited.is_set():
                _signal(term, signal.SIGTERM)

    async def close(self) -> None:
        """End and forget every terminal; later creates are refused."""
        self._closed = True
        terminals = [*self._terminals.values(), *self._logins.values()]
        self._terminals.clear()
        self._logins.clear()
        await asyncio.gather(*(self._kill(term) for term in terminals))

    # ------------------------------------------------------------ inside

    async def _create(self, params: dict[str, Json]) -> Json:
        if self._closed:
            raise RpcError(jsonrpc.INVALID_REQUEST, "the chat is closing")
        running = sum(not t.exited.is_set() for t in self._terminals.values())
        if running >= MAX_TERMINALS:
            raise RpcError(
                jsonrpc.INVALID_REQUEST, f"at most {MAX_TERMINALS} terminals may run at once"
            )
        command = params.get("command")
        args = params.get("args", [])
        if not isinstance(command, str) or not command:
            raise RpcError(jsonrpc.INVALID_PARAMS, "command must be a non-empty string")
        if (
            not isinstance(args, list)
            or len(args) > MAX_ARGS
            or not all(isinstance(a, str) and len(a) <= MAX_ARG for a in args)
        ):
            raise RpcError(jsonrpc.INVALID_PARAMS, f"args must be at most {MAX_ARGS} strings")
        env = dict(self.env)
        for entry in params.get("env") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise RpcError(jsonrpc.INVALID_PARAMS, "env entries are {name, value}")
            env[entry["name"]] = str(entry.get("value", ""))
        cwd = params.get("cwd") or self.cwd
        if not isinstance(cwd, str):
            raise RpcError(jsonrpc.INVALID_PARAMS, "cwd must be a string")
        limit = params.get("outputByteLimit")
        if limit is None:
            limit = DEFAULT_OUTPUT_LIMIT
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise RpcError(jsonrpc.INVALID_PARAMS, "outputByteLimit must be a whole number")
        try:
            proc = await _spawn([command, *args], os.path.join(self.cwd, cwd), env)
        except (OSError, ValueError) as exc:
            raise RpcError(
                jsonrpc.INTERNAL_ERROR, f"could not start {command[:200]!r}: {exc}"
            ) from None
        self._next += 1
        term = Terminal(f"term-{self._next}", proc, min(limit, MAX_OUTPUT_LIMIT))
        self._terminals[term.terminal_id] = term
        term.reader = asyncio.create_task(self._read(term))
        return {"terminalId": term.terminal_id}

    async def _read(self, term: Terminal) -> None:
        stdout = term.proc.stdout
        assert stdout is not None
        while data := await stdout.read(READ_CHUNK):
            term.output += data
            over = len(term.output) - term.limit
            if over > 0:
                # Cut where a character starts: never inside a UTF-8 sequence.
                while over < len(term.output) and term.output[over] & 0xC0 == 0x80:
                    over += 1
                del term.output[:over]
                term.cut += over
            text = term.decoder.decode(data)
            if text:
                self._show(term, {"terminal_output_delta": _data(term, text)})
        code = await term.proc.wait()
        term.exit_status = {
            "exitCode": code if code >= 0 else None,
            "signal": signal.Signals(-code).name if code < 0 else None,
        }
        term.exited.set()
        self._show(term, {"terminal_exit": _exit_meta(term)})

    def _show(self, term: Terminal, meta: dict[str, Json]) -> None:
        if term.tool_call_id is not None:
            update = {"sessionUpdate": "tool_call_update", "toolCallId": term.tool_call_id}
            self._on_update({**update, "_meta": meta})

    async def _kill(self, term: Terminal) -> None:
        if not term.exited.is_set():
            _signal(term, signal.SIGTERM)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(term.exited.wait(), REAPER_GRACE + 1)
            if not term.exited.is_set():
                _signal(term, signal.SIGKILL)
                await term.exited.wait()


async def _spawn(
    argv: list[str], cwd: str, env: dict[str, str], stdin: int = asyncio.subprocess.DEVNULL
) -> asyncio.subprocess.Process:
    """``argv`` under the reaper (Linux), else in a process group of its own."""
    loop = asyncio.get_running_loop()
    protocol = asyncio.subprocess.SubprocessStreamProtocol(limit=1 << 16, loop=loop)
    transport, _ = await spawn(
        lambda: protocol,
        argv,
        env=env,
        cwd=cwd,
        stdin=stdin,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    return asyncio.subprocess.Process(transport, protocol, loop)


def _signal(term: Terminal, sig: int) -> None:
    """The reaper passes a SIGTERM on to every descendant (SIGKILL after its grace)."""
    if REAPED:
        with contextlib.suppress(ProcessLookupError):
            term.proc.send_signal(sig)
    else:
        kill_group(term.proc.pid, sig)


def _text(term: Terminal) -> str:
    return term.output.decode(errors="replace")


def _data(term: Terminal, text: str) -> dict[str, Json]:
    return {"terminal_id": term.terminal_id, "data": text}


def _exit_meta(term: Terminal) -> dict[str, Json]:
    status = term.exit_status or {}
    return {
        "terminal_id": term.terminal_id,
        "exit_code": status.get("exitCode"),
        "signal": status.get("signal"),
    }


def _output(term: Terminal) -> Json:
    result: dict[str, Json] = {"output": _text(term), "truncated": term.cut > 0}
    if term.cut:
        result["_meta"] = {"acp_notebook": {"cutBytes": term.cut}}
    if term.exit_status is not None:
        result["exitStatus"] = dict(term.exit_status)
    return result
