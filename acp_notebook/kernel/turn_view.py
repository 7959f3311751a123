"""A view of one turn of a chat: what ``%%agent`` shows under its cell.

The widget of a ``Chat`` is one model, and every output of a model shows the same
view, so a cell that asks one question would show the whole conversation again. A
``TurnView`` is a model of its own on the same chat: the widget shows the chat's items
from ``from_item`` on, up to ``to_item`` once its turn has ended (an item's place in the
whole chat, the ones the fold dropped counted), with a button for the whole chat. It talks to the chat as the chat's own
widget does: over the server's socket, or through the chat's comm handler (local mode).
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, cast

import anywidget
import traitlets

from ..wire.contracts import FoldSnapshot
from . import transcript, widget_code


class Chat(Protocol):
    """What a view needs of its chat (chat.py's ``Chat``, which imports this module)."""

    _esm: Any
    _lock: threading.RLock

    @property
    def chat_id(self) -> str: ...
    @property
    def kernel_id(self) -> str: ...
    @property
    def transport(self) -> str: ...
    @property
    def locale(self) -> str: ...
    @property
    def local_reason(self) -> str: ...
    @property
    def state(self) -> FoldSnapshot: ...
    def _position(self) -> int: ...
    def _on_widget_msg(self, widget: Any, content: Any, _buffers: Any) -> None: ...


class TurnView(anywidget.AnyWidget):
    """``chat`` from item ``from_item`` on; display it like the chat."""

    chat_id = traitlets.Unicode("").tag(sync=True)
    kernel_id = traitlets.Unicode("").tag(sync=True)
    transport = traitlets.Unicode("").tag(sync=True)
    locale = traitlets.Unicode("").tag(sync=True)
    local_reason = traitlets.Unicode("").tag(sync=True)
    from_item = traitlets.Int(0).tag(sync=True)
    # Where the view's items end (its turn's end), 0 while the turn runs.
    to_item = traitlets.Int(0).tag(sync=True)

    _esm = widget_code.bundle_esm()

    def __init__(self, chat: Chat, from_item: int) -> None:
        super().__init__(
            _esm=chat._esm,  # the chat's: the bundle, or in server mode its loader
            # The chat's code, under the chat's anywidget id (the bundle adds the page's
            # stylesheet once, whichever view loads first).
            _anywidget_id=f"{type(chat).__module__}.{type(chat).__name__}",
            chat_id=chat.chat_id,
            kernel_id=chat.kernel_id,
            transport=chat.transport,
            locale=chat.locale,
            local_reason=chat.local_reason,
            from_item=from_item,
        )
        self._chat = chat
        self._displays: list[Any] = []
        # The widget's requests (local mode, or a page whose socket failed) go to the chat,
        # whose answers and events come back on this view's comm.
        self.on_msg(chat._on_widget_msg)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        handle = display(self._repr_mimebundle_()[0], raw=True, display_id=True)  # type: ignore[no-untyped-call]
        if handle is not None:
            self._displays.append(handle)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.bundle(self._chat.state, super()._repr_mimebundle_(**kwargs))

    def bundle(self, snap: FoldSnapshot, bundle: Any = None) -> Any:
        """The widget's bundle with the static transcript of this view's items (what a
        notebook shows where the widget cannot be)."""
        bundle = bundle if bundle is not None else super()._repr_mimebundle_()
        if bundle is not None:
            data = bundle[0]
            data["text/plain"] = f"{self._chat!r}, from item {self.from_item}"
            data["text/html"] = transcript.render_html(self.items_of(snap))
        return bundle

    def items_of(self, snap: FoldSnapshot) -> FoldSnapshot:
        """``snap`` with this view's items only, compact as a saved transcript."""
        dropped = snap.get("dropped")
        gone = dropped["items"] if dropped else 0
        start = max(0, self.from_item - gone)
        end = max(start, self.to_item - gone) if self.to_item else None
        # Without "dropped": what went was before this view's items.
        whole = {k: v for k, v in cast(dict[str, Any], snap).items() if k != "dropped"}
        mine = cast(FoldSnapshot, {**whole, "items": whole["items"][start:end]})
        return transcript.compact(mine, transcript.STATIC_TEXT)

    def end_here(self) -> None:
        """The view's turn has ended: what comes after it is not this view's."""
        with self._chat._lock:
            self.to_item = self._chat._position()

    def refresh(self, snap: FoldSnapshot) -> None:
        """At a turn's end: the saved transcript under each display, brought up to date."""
        if not self._displays:
            return
        bundle = self.bundle(snap)[0]
        for handle in self._displays:
            try:
                handle.update(bundle, raw=True)
            except Exception:  # a closed frontend must not break the stream
                continue
