"""Whether a cell of this kernel is waiting for an agent's turn (``Chat.ask``, ``Chat.wait``).

``run_code`` goes through the kernel's shell queue like a cell. While a cell waits for
the very turn that wants to run code, that code could only start once the turn ended:
a deadlock. So ``run_code`` refuses at once and says why instead of waiting.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

GRACE = 2.0
_changed = threading.Condition()
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
        with _changed:
            _waiting += 1
    try:
        yield
    finally:
        if counted:
            with _changed:
                _waiting -= 1
                _changed.notify_all()


def still_waiting(seconds: float = GRACE) -> bool:
    """Whether a cell keeps waiting for the turn for ``seconds`` (a short ``chat.wait(
    timeout=...)`` ends by itself; only a wait for the whole turn deadlocks)."""
    with _changed:
        return not _changed.wait_for(lambda: _waiting == 0, seconds)
