"""Which cell the kernel runs now, for ``kernel_state``: IPython's ``pre_run_cell`` and
``post_run_cell`` events mark a cell's start and end, with the id the notebook sent
(JupyterLab and Notebook 7 put the cell's id in the request) and its source. Read from
any thread: the kernel's main thread is the one running the cell.
"""

from __future__ import annotations

import threading
from typing import Any

from ..wire.clip import clip
from .variables import ipython_shell

_lock = threading.Lock()
_current: dict[str, Any] | None = None
_watched: set[int] = set()  # the shells (by id) whose events are registered


def _started(info: Any) -> None:
    global _current
    source = str(getattr(info, "raw_cell", "") or "")
    shell = ipython_shell()
    with _lock:
        _current = {
            "cellId": getattr(info, "cell_id", None),
            "source": source,
            "count": getattr(shell, "execution_count", None),
        }


def _ended(_result: Any) -> None:
    global _current
    with _lock:
        _current = None


def watch() -> None:
    """Follow the cells this kernel runs from now on (once per shell; no shell: nothing)."""
    shell = ipython_shell()
    events = getattr(shell, "events", None)
    if events is None or id(shell) in _watched:
        return
    _watched.add(id(shell))
    events.register("pre_run_cell", _started)
    events.register("post_run_cell", _ended)


def running_cell() -> str:
    """The cell running now (its id and first line), or "" when none is known to run."""
    with _lock:
        current = dict(_current) if _current is not None else None
    if current is None:
        return ""
    lines = [line for line in current["source"].splitlines() if line.strip()]
    first = clip(lines[0], 200) if lines else "(empty)"
    where = f"cell id={current['cellId']}" if current["cellId"] else "a cell"
    return f"{where} (In [{current['count']}]) is running: {first}"
