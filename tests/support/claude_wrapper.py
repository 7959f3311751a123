"""Running the real claude-agent-acp wrapper in tests: where it is, its env, a raw client.

``AcpStdioClient`` is a deliberately tiny JSON-RPC-over-stdio client for smoke tests that
must not depend on the project's own client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .agent_chats import installed

# npm ci installs it in tests/claude.
WRAPPER_BIN = (
    Path(__file__).resolve().parents[1] / "claude" / "node_modules" / ".bin" / "claude-agent-acp"
)
TIMEOUT = 60.0

Json = dict[str, Any]


def require_wrapper() -> Path:
    """The wrapper's bin; fails (never skips) the calling test when it is not installed."""
    return installed(
        WRAPPER_BIN, "claude", "@agentclientprotocol/claude-agent-acp pinned in its package.json"
    )


def wrapper_env(
    home: Path, base_url: str, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A hermetic env for the wrapper: scratch HOME, the mock API, nothing inherited but PATH.

    Inheriting the caller's env could leak a real ANTHROPIC_API_KEY, CLAUDE_* settings or a
    proxy into the run; the CLI needs none of it.
    """
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "dummy",
        # No update checks, feedback surveys, error reporting or other calls home.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        # No next-prompt prediction side request after each turn (the mock would answer
        # it, but it races with the next turn and doubles the traffic).
        "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION": "false",
    }
    env.update(extra or {})
    return env


class AcpError(Exception):
    def __init__(self, error: Json) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error


class AcpStdioClient:
    """Spawns an ACP agent and speaks newline-delimited JSON-RPC with it.

    Agent->client requests are queued for the test to answer (``next_request``/``respond``);
    notifications are kept in ``notifications``.
    """

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.notifications: list[Json] = []
        self.stderr_tail: deque[str] = deque(maxlen=200)
        self._pending: dict[int, asyncio.Future[Json]] = {}
        self._inbound: asyncio.Queue[Json] = asyncio.Queue()
        self._next_id = 0
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *argv,
            env=env,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024,  # a single update line can be large (tool output)
            start_new_session=True,  # its own process group: the CLI child dies with it
        )
        self._tasks = [
            asyncio.create_task(self._read_stdout()),
            asyncio.create_task(self._read_stderr()),
        ]

    async def _read_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        async for line in self.proc.stdout:
            if not line.strip():
                continue
            msg = json.loads(line)
            if "method" in msg and "id" in msg:
                self._inbound.put_nowait(msg)
            elif "method" in msg:
                self.notifications.append(msg)
            else:
                fut = self._pending.pop(msg.get("id"), None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(ConnectionError(f"agent exited:\n{self.stderr()}"))

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        async for line in self.proc.stderr:
            self.stderr_tail.append(line.decode(errors="replace").rstrip())

    def stderr(self) -> str:
        return "\n".join(self.stderr_tail)

    async def _send(self, msg: Json) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        await self.proc.stdin.drain()

    async def request(self, method: str, params: Json, timeout: float = TIMEOUT) -> Json:
        """Send a request and return its result; raises AcpError for an error answer."""
        rid = self._next_id
        self._next_id += 1
        fut: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        await self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        try:
            msg = await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"{method}: no answer in {timeout}s\n{self.stderr()}") from None
        if "error" in msg:
            raise AcpError(msg["error"])
        result: Json = msg["result"]
        return result

    def start_request(
        self, method: str, params: Json, timeout: float = TIMEOUT
    ) -> asyncio.Task[Json]:
        """``request`` as a task, for a call that waits on agent->client requests (a prompt)."""
        return asyncio.create_task(self.request(method, params, timeout))

    async def notify(self, method: str, params: Json) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def respond(self, request_id: Any, result: Json) -> None:
        await self._send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def next_request(self, method: str, timeout: float = TIMEOUT) -> Json:
        """The next agent->client request; fails on any other method arriving first."""
        try:
            msg = await asyncio.wait_for(self._inbound.get(), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"no {method} request in {timeout}s\n{self.stderr()}") from None
        assert msg["method"] == method, msg
        return msg

    def updates(self, session_id: str) -> list[Json]:
        """The ``update`` objects of every session/update received so far for a session."""
        return [
            n["params"]["update"]
            for n in self.notifications
            if n["method"] == "session/update" and n["params"].get("sessionId") == session_id
        ]

    async def close(self) -> None:
        if self.proc is None:
            return
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            await self.proc.wait()
        for t in self._tasks:
            t.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await t
