"""A resync as a fold snapshot plus the events after it (``chat:resync`` with ``snapshot``).

A long chat's history is mostly finished work: a tool call's twenty progress updates
fold into one entry. The history up to its last ``turn_ended`` is sent folded; what
follows (the turn under way) as events, so the client's fold carries on from there
exactly as if it had folded everything: at a turn's end nothing streams, runs or
waits, which is all a snapshot does not carry.
"""

from __future__ import annotations

import sys
from collections.abc import Container
from typing import Any

from . import fold as folding
from .contracts import StreamEvent, is_request


def snapshot_resync(events: list[StreamEvent], pending: Container[str]) -> dict[str, Any]:
    """``{"snapshot", "events"}`` for ``events`` (a resync's, in order); just
    ``{"events"}`` when no turn has ended among them. ``pending``: the request ids
    still open, whose events are sent again after the snapshot (their cards are the
    client's to draw)."""
    cut = next(
        (i for i in range(len(events) - 1, -1, -1) if events[i]["kind"] == "turn_ended"),
        None,
    )
    if cut is None:
        return {"events": events}
    # Unbounded: the history is bounded already (history_bytes may be over the kernel's).
    state = folding.ChatState(max_items=sys.maxsize, max_weight=sys.maxsize)
    again: list[StreamEvent] = []
    for event in events[: cut + 1]:
        state = folding.fold(state, event)
        if is_request(event) and event["requestId"] in pending:
            again.append(event)
    return {"snapshot": folding.snapshot(state), "events": again + events[cut + 1 :]}
