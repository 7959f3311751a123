"""A pointer in the cell that made the agent ask: "the agent asks you in its chat".

A card shows in the chat's own output, often a screen above the cell that sent the
prompt, so the cell that waits for it (``next_request``, ``ask``, ``wait``) says where
it is: the lab extension draws a button that brings the card into view; elsewhere
(nbval, VS Code) the text says how to answer. Each request is pointed to once, and its
pointer says "answered" once it has settled.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from ..wire.clip import clip
from ..wire.contracts import MAX_NAME, POINTER_MIME

# What a pointer quotes of the question (the card has it all).
MAX_TITLE = 200
# The cells (their execute requests) remembered as showing the chat.
MAX_CELLS = 50


def _title(request: dict[str, Any]) -> str:
    if request.get("type") == "permission":
        call = request.get("toolCall")
        title = call.get("title") if isinstance(call, dict) else None
    else:
        title = request.get("message")
    return clip(" ".join(str(title or "").split()), MAX_TITLE)


def pointer_bundle(
    chat_id: str, agent: str, request: dict[str, Any], settled: bool
) -> dict[str, Any]:
    """The output of a pointer to ``request`` of chat ``chat_id``."""
    kind = "permission" if request.get("type") == "permission" else "question"
    title = _title(request)
    name = agent[:MAX_NAME]
    if settled:
        plain = f"Answered: {name}'s {kind} ({title})."
    else:
        plain = (
            f"{name} is waiting for you: its {kind} ({title}) is in the chat's card. "
            "Answer it there, or from Python (chat.pending)."
        )
    pointer = {
        "chatId": chat_id,
        "requestId": str(request.get("requestId", "")),
        "kind": kind,
        "title": title,
        "agent": name,
        "settled": settled,
    }
    return {POINTER_MIME: pointer, "text/plain": plain}


class Pointers:
    """The pointers one chat showed, by request id, until their requests settle; and the
    cells that show the chat itself (its card is there: no pointer needed)."""

    def __init__(self) -> None:
        self._shown: dict[str, tuple[dict[str, Any], Any]] = {}
        self._pointed: set[str] = set()
        self._cells: list[str] = []
        self._lock = threading.Lock()  # point() on the main thread, settle() on the client's

    def shown_in(self, cell: str | None) -> None:
        """A view of the chat is displayed in ``cell`` (its execute request's id)."""
        if cell is not None:
            with self._lock:
                self._cells = [*self._cells, cell][-MAX_CELLS:]

    def point(self, chat_id: str, agent: str, request: dict[str, Any], cell: str | None) -> None:
        """Shows a pointer to ``request`` in ``cell``, the running cell, unless one was
        shown or the cell shows the chat."""
        request_id = str(request.get("requestId", ""))
        with self._lock:
            if request_id in self._pointed or cell is None or cell in self._cells:
                return
            self._pointed.add(request_id)
        from IPython.display import display

        bundle = pointer_bundle(chat_id, agent, request, settled=False)
        handle = display(bundle, raw=True, display_id=True)  # type: ignore[no-untyped-call]
        if handle is None:
            return
        with self._lock:
            waiting = request_id in self._pointed  # else it settled while it was displayed
            if waiting:
                self._shown[request_id] = ({**request}, handle)
        if not waiting:
            handle.update(pointer_bundle(chat_id, agent, request, settled=True), raw=True)

    def settle(self, chat_id: str, agent: str, pending: Iterable[Mapping[str, Any]]) -> None:
        """Marks the pointers whose requests are no longer ``pending`` as answered (on the
        client's thread, after every frame: a display update goes out by its id)."""
        if not self._pointed and not self._shown:  # most frames: nothing was pointed to
            return
        waiting = {str(p["requestId"]) for p in pending}
        with self._lock:
            self._pointed &= waiting
            done = [(r, *self._shown.pop(r)) for r in list(self._shown) if r not in waiting]
        for _, request, handle in done:
            with contextlib.suppress(Exception):  # a closed frontend must not break the stream
                handle.update(pointer_bundle(chat_id, agent, request, settled=True), raw=True)
