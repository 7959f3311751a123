"""Who owns a chat: the principal (identity.py) whose cell opened it; and who a
kernel's request comes from.

The kernel opens chats, and a kernel has no Jupyter identity; the server does know
who sent each ``execute_request`` and ``comm_msg`` through its kernel WebSocket (the
login of that socket, from jupyter_server's identity provider). So the server notes
the sender of every one by message id (``Executions``), the kernel names the message
it handles as it sends a request (``executeId``: the cell's execute_request, the
widget's comm_msg), and the chat's owner is the sender of the cell that opened it, a
request's sender that of the cell or click that made it.

A kernel could name another user's execution, but a kernel runs the notebook's
code and acts for any owner anyway. Cells that did not come through this server
(nbclient, a console on the kernel's ports) have no known sender: the owner is then
``JUPYTERHUB_USER`` (a single-user server belongs to that user), else nobody, and a
chat without an owner may be driven by anyone allowed to execute in the kernel.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

from jupyter_server.services.kernels.connection.base import (
    BaseKernelWebsocketConnection,
    deserialize_binary_message,
    deserialize_msg_from_ws_v1,
)

from ..wire import bounded_json
from ..wire.contracts import MAX_ID
from .identity import Principal, Principals

V1 = "v1.kernel.websocket.jupyter.org"
# Bigger messages (a cell of a megabyte?) are not looked into: their owner is unknown.
MAX_MESSAGE = 16 * 1024 * 1024
# A real header is a few hundred bytes (v1 frames carry it apart from the content).
MAX_HEADER = 64 * 1024
# The messages whose senders are noted: a cell run, a widget's click (its comm).
NOTED = ("execute_request", "comm_msg")


class Executions:
    """The sender of each recent ``execute_request`` and ``comm_msg`` (by its msg_id),
    bounded per principal: one's flood of messages evicts only its own."""

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._senders: dict[str, Principal] = {}
        self._by_user: dict[str, OrderedDict[str, None]] = {}

    def note(self, msg_id: object, sender: Principal) -> None:
        # An id no chat:open can name (executeId is at most MAX_ID) would only take memory:
        # ten thousand ids of 64 KB each are 640 MB.
        if not isinstance(msg_id, str) or not 0 < len(msg_id) <= MAX_ID:
            return
        # The first sender keeps an id: every client of a kernel sees the ids of the
        # cells it runs, and one sent again by someone else must not take the chat over.
        if msg_id in self._senders:
            return
        self._senders[msg_id] = sender
        ids = self._by_user.setdefault(sender.id, OrderedDict())
        ids[msg_id] = None
        if len(ids) > self.limit:
            del self._senders[ids.popitem(last=False)[0]]

    def sender(self, msg_id: Any) -> Principal | None:
        """Who sent the message ``msg_id``, if this server saw it."""
        return self._senders.get(msg_id) if isinstance(msg_id, str) else None

    def owner(self, execute_id: Any) -> Principal | None:
        """The owner of a chat opened under ``execute_id``."""
        hub_user = os.environ.get("JUPYTERHUB_USER")
        return self.sender(execute_id) or (Principal(hub_user, hub_user) if hub_user else None)


def noting_connection(
    base: type[BaseKernelWebsocketConnection], executions: Executions, principals: Principals
) -> type[BaseKernelWebsocketConnection]:
    """``base`` (the server's kernel WebSocket connection: to local kernels, or a kernel
    gateway's), noting who executes what."""

    class NotingConnection(base):  # type: ignore[valid-type,misc]
        def handle_incoming_message(self, incoming_msg: str) -> None:
            v1 = self.websocket_handler.selected_subprotocol == V1
            header = _execute_header(incoming_msg, v1)
            user = getattr(self.websocket_handler, "current_user", None)
            if header is not None and user is not None:
                executions.note(header.get("msg_id"), principals.of(user))
            super().handle_incoming_message(incoming_msg)

    return NotingConnection


def _execute_header(message: str | bytes, v1: bool) -> dict[str, Any] | None:
    """The header of a shell ``execute_request`` or ``comm_msg``, else None; never raises.

    The server itself reads no v1 header: parsing one here is the only parse of it, so
    it is bounded like any untrusted JSON (a 10 MB header of ``[{},{},...]`` would cost
    the server hundreds of MB)."""
    try:
        if v1:
            channel, parts = deserialize_msg_from_ws_v1(message)  # type: ignore[no-untyped-call]
            if channel != "shell":
                return None
            header = bounded_json.loads(parts[0], max_bytes=MAX_HEADER)
        else:
            msg = (
                deserialize_binary_message(message)  # type: ignore[no-untyped-call]
                if isinstance(message, bytes)
                else bounded_json.loads(message, max_bytes=MAX_MESSAGE)
            )
            channel, header = msg.get("channel"), msg.get("header")
    except Exception:  # the server's own parse reports bad frames
        return None
    if channel not in (None, "shell") or not isinstance(header, dict):
        return None
    return header if header.get("msg_type") in NOTED else None
