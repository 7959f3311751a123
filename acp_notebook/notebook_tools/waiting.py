"""Whether a cell of this kernel is waiting for an agent's turn (``Chat.ask``, ``Chat.wait``).

``run_code`` goes through the kernel's shell queue like a cell. While a cell waits for
the very turn that wants to run code, that code could only start once the turn ended:
a deadlock. So ``run_code`` refuses at once and says why instead of waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Iterator

GRACE = 2.0
_lock = threading.Lock()
_waiting = 0

NOT_RUN = (
    "Not run: a cell of this kernel is waiting for this chat's turn (chat.ask, chat.wait or "
    "%%agent), so the kernel cannot run code until the turn ends. Ask from the chat box, or "
    "send the prompt with chat.send_prompt(...) and leave the kernel idle."
)


@contextlib.contextmanager
def cell_waits() -> Iterator[None]:
    """Marks a wait for a turn; only the kernel's main thread (where cells run) counts."""
    global _waiting
    counted = threading.current_thread() is threading.main_thread()
    if counted:
        with _lock:
            _waiting += 1
    try:
        yield
    finally:
        if counted:
            with _lock:
                _waiting -= 1


def a_cell_waits() -> bool:
    return _waiting > 0


async def still_waiting(check: Callable[[], Awaitable[bool]], seconds: float = GRACE) -> bool:
    """Whether a cell keeps waiting for the turn for ``seconds`` (a short ``chat.wait(
    timeout=...)`` poll ends by itself; only a wait for the whole turn deadlocks)."""
    deadline = time.monotonic() + seconds
    while await check():
        if time.monotonic() >= deadline:
            return True
        await asyncio.sleep(0.1)
    return False
