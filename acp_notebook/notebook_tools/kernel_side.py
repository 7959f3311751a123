"""The tools that run in the kernel process, by name: what local mode calls directly and
what the server asks the kernel for over its socket (``kernel:query``).

Each answer is text, computed on the calling thread (never the kernel's main thread).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import arguments, mentions, running_cell
from .last_error import last_error
from .variables import format_listing, inspect_variable, list_variables
from .waiting import still_waiting


def answer(tool: str, args: Mapping[str, Any]) -> str:
    """Run one kernel-side tool; raises ``ValueError`` for an unknown tool or bad args
    (``arguments.Refused``, naming the argument and its bound)."""
    if tool == "list_variables":
        return format_listing(list_variables())
    if tool == "last_error":
        return last_error()
    if tool == "running_cell":  # kernel_state: which cell runs (running_cell.py)
        return running_cell.running_cell()
    if tool == "cell_waits":  # whether run_code would wait on itself (waiting.py)
        return "yes" if still_waiting() else "no"
    if tool == "mention_list":  # the composer's @ mentions (mentions.py), same channel
        return mentions.variables()
    if tool in ("inspect_variable", "mention_attach"):
        arguments.check(arguments.VARIABLE, args)
        name = args["name"]
        if tool == "mention_attach":
            return mentions.mention(name)
        return inspect_variable(name, hidden=args.get("hidden") is True)
    raise ValueError(f"unknown kernel tool {tool!r}")
