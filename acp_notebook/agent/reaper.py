"""The agent's keeper on Linux: it dies with the server, and takes every descendant along.

    python -I -S reaper.py PARENT_PID GRACE STATUS_FD AGENT_ARGV...

Started (in a session of its own) by ``AgentConnection`` in place of the agent. It
marks itself a child subreaper, so whatever the agent leaves behind, even after a
``setsid`` or a double fork, stays its descendant; asks the kernel for SIGTERM when
its parent dies (``kill -9`` of the server included); then spawns the agent with its
own stdin, stdout and stderr, the server's pipes, passed straight through. It writes
the agent's pid (or why it could not start) to STATUS_FD, and lets go of the pipes.

From then on it only waits. When the agent exits, it kills every descendant left and
exits as the agent did. On SIGTERM (teardown, or the server's death) it sends SIGTERM
to every descendant, and SIGKILL GRACE seconds later to whatever is left.

Run by path with ``-I -S``: standard library only, and no import of the package, so
it starts in some 20 ms.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


TEARDOWN = {signal.SIGTERM, signal.SIGHUP, signal.SIGINT}


def descendants(root: int) -> list[int]:
    """Every live process under ``root``, from /proc (the process group is not enough)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The fields after the command, which may hold spaces and parentheses.
        fields = stat[stat.rindex(b")") + 2 :].split()
        if fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def signal_all(sig: int) -> bool:
    """Send ``sig`` to every descendant; whether there was any."""
    pids = descendants(os.getpid())
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)
    return bool(pids)


def reap() -> dict[int, int]:
    """Collect every child that has exited, without waiting: pid -> wait status."""
    done: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done[pid] = status


def kill_everything() -> None:
    # A process may fork while we look: look again until none is left.
    for _ in range(100):
        if not signal_all(signal.SIGKILL):
            return
        time.sleep(0.01)
        reap()


def exit_as(status: int) -> None:
    """Exit the way the agent did, so the server reports the agent's code or signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError):  # SIGKILL has no handler to reset
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])  # the signal is delivered here
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))


def main() -> None:
    parent, grace, status_fd = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    argv = sys.argv[4:]
    # Signals are taken with sigwaitinfo, never by a handler: no race with a child's exit.
    signal.pthread_sigmask(signal.SIG_BLOCK, TEARDOWN | {signal.SIGCHLD})
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the server died before the signal was asked for
        os._exit(1)
    os.set_inheritable(status_fd, False)  # the agent must not hold it open
    status = os.fdopen(status_fd, "w")
    try:
        agent = os.posix_spawnp(
            argv[0],
            argv,
            os.environ,
            setsigmask=(),
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),  # as subprocess does
        )
    except OSError as exc:
        status.write(f"{exc.errno} {exc.strerror or exc}\n")
        status.close()
        os._exit(127)
    status.write(f"0 {agent}\n")
    status.close()
    # Only the agent holds the server's pipes now: its exit closes them.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    code = None
    while code is None:
        if signal.sigwaitinfo(TEARDOWN | {signal.SIGCHLD}).si_signo != signal.SIGCHLD:
            break
        code = reap().get(agent)  # adopted orphans are reaped here too
    if code is None:  # teardown, or the server died
        signal_all(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while code is None and time.monotonic() < deadline:
            signal.sigtimedwait({signal.SIGCHLD}, 0.05)
            code = reap().get(agent)
        if code is None:
            code = signal.SIGKILL  # a wait status: killed by SIGKILL, as it is about to be
    kill_everything()
    exit_as(code)


if __name__ == "__main__":
    main()
