"""Starting a process under the reaper (``reaper.py``): an agent, or a client terminal.

On Linux the process runs as the reaper's child, so it and whatever it leaves behind die
with the server; elsewhere it runs in a process group of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

REAPER = Path(__file__).with_name("reaper.py")
REAPED = sys.platform == "linux"  # prctl is Linux only
# Between the reaper's SIGTERM and SIGKILL to the agent's descendants: less than
# close()'s grace, so the reaper is done before close() would SIGKILL it.
REAPER_GRACE = 1.0


async def spawn(
    protocol: Callable[[], asyncio.SubprocessProtocol],
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    cwd: str | None,
    **pipes: Any,
) -> tuple[asyncio.SubprocessTransport, int]:
    """The transport and the pid of ``argv`` once it runs (under the reaper: the pid the
    reaper reports); ``OSError`` when it cannot start (a NUL byte in its command, cwd or
    environment, or an "=" in a variable's name, too). ``pipes``: stdin, stdout, stderr.

    A cancel lets the start finish, then ends it: neither the reaper nor its process is
    left running, and the fd the reaper reports on is never freed under its reader.
    """
    started = asyncio.ensure_future(_start(protocol, list(argv), env, cwd, pipes))
    try:
        return await asyncio.shield(started)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            transport, _ = await started
            kill_group(transport.get_pid(), signal.SIGKILL)
            transport.close()
        raise


async def _start(
    protocol: Callable[[], asyncio.SubprocessProtocol],
    argv: list[str],
    env: Mapping[str, str] | None,
    cwd: str | None,
    pipes: dict[str, Any],
) -> tuple[asyncio.SubprocessTransport, int]:
    loop = asyncio.get_running_loop()
    status_read, status_write = os.pipe() if REAPED else (-1, -1)
    if REAPED:
        # -I -S: no site, no user paths, no PYTHON* variables of the agent's environment.
        reaper = [str(REAPER), str(os.getpid()), str(REAPER_GRACE), str(status_write)]
        argv = [sys.executable, "-I", "-S", *reaper, *argv]
    try:
        transport, _ = await loop.subprocess_exec(
            protocol,
            *argv,
            env=env,
            cwd=cwd,
            start_new_session=True,
            pass_fds=(status_write,) if REAPED else (),
            **pipes,
        )
    except (OSError, ValueError) as exc:
        if REAPED:
            os.close(status_read)
        # ValueError: what the OS could never take (a NUL byte, an "=" in a name).
        raise exc if isinstance(exc, OSError) else OSError(str(exc)) from None
    finally:
        if REAPED:
            os.close(status_write)
    if not REAPED:
        return transport, transport.get_pid()
    try:
        return transport, await asyncio.to_thread(_started, status_read)
    except OSError:
        transport.close()
        raise


def _started(status_fd: int) -> int:
    """The process's pid, as the reaper reports it; ``OSError`` when it could not start.
    Closes ``status_fd``."""
    data = b""
    try:
        while chunk := os.read(status_fd, 4096):
            data += chunk
    finally:
        os.close(status_fd)
    code, _, detail = data.decode(errors="replace").strip().partition(" ")
    if code == "0" and detail.isdigit():
        return int(detail)
    if code.isdigit():
        raise OSError(int(code), detail)
    raise OSError("the reaper ended before it started the process")


def kill_group(pid: int, sig: int) -> None:
    """``sig`` to the process group ``pid`` leads, if it is still there."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
