"""The kernel's most recent exception, for the agent's ``last_error`` tool.

IPython keeps the last exception a cell raised in ``sys.last_value`` (and
``last_traceback``); the cell's source is in ``linecache`` under the file name the
compiler gave that cell. Read from a thread while another cell may run; the
exception's ``str`` is user code, so it is formatted under a deadline.
"""

from __future__ import annotations

import linecache
import re
import sys
import traceback
from types import TracebackType
from typing import Any

from ..wire.clip import clip_start
from . import bounded
from .variables import ipython_shell

MAX_TRACEBACK = 8000
MAX_SOURCE = 8000
FORMAT_SECONDS = 2.0
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def _cell_of(tb: TracebackType | None) -> tuple[str | None, int | None]:
    """The source and execution count of the outermost frame that is a notebook cell."""
    shell = ipython_shell()
    names: dict[str, int] = getattr(getattr(shell, "compile", None), "_filename_map", {})
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename in names:
            return "".join(linecache.getlines(filename))[:MAX_SOURCE], names[filename]
        tb = tb.tb_next
    return None, None


def last_error() -> str:
    """The most recent exception raised in a cell of this kernel: its type, message, the
    source of the cell that raised it and the traceback."""
    value: Any = getattr(sys, "last_value", None)
    if not isinstance(value, BaseException):
        return "No exception has been raised in this kernel yet."
    tb: TracebackType | None = getattr(sys, "last_traceback", None)

    def formatted() -> tuple[str, str]:
        lines = traceback.format_exception(type(value), value, tb, limit=30)
        return str(value), "".join(lines)

    result = bounded.call(formatted, FORMAT_SECONDS)
    if isinstance(result, tuple):
        message, text = result
    else:
        message, text = repr(result), f"{type(value).__name__} (could not format: {result!r})"
    parts = [f"{type(value).__qualname__}: {strip_ansi(message)[:2000]}"]
    cell, count = _cell_of(tb)
    if cell is not None:
        parts.append(f"## cell In[{count}]\n{cell}")
    parts.append(f"## traceback\n{clip_start(strip_ansi(text), MAX_TRACEBACK)}")
    return "\n\n".join(parts)
