"""The kernel WebSocket of a page whose kernels run behind a kernel gateway.

jupyter_server's gateway connection speaks the legacy JSON protocol to the gateway and
so selects no subprotocol with the page; JupyterLab offers only
``v1.kernel.websocket.jupyter.org``, and Chromium fails a handshake whose answer names
none (upstream jupyterlab#14977): the notebook never reaches its kernel. This
connection selects v1 with a page that offers it and translates each message between
the two protocols; a client that offers none gets the legacy protocol unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.gateway.connections import GatewayWebSocketConnection
from jupyter_server.services.kernels.connection.base import (
    deserialize_msg_from_ws_v1,
    serialize_binary_message,
    serialize_msg_to_ws_v1,
)
from tornado.websocket import WebSocketClosedError
from traitlets import default

V1 = "v1.kernel.websocket.jupyter.org"
PARTS = ("header", "parent_header", "metadata", "content")


class V1GatewayConnection(GatewayWebSocketConnection):
    """v1 with the page, the legacy protocol with the gateway."""

    @default("kernel_ws_protocol")
    def _v1(self) -> str:
        return V1

    def _v1_page(self) -> bool:
        return self.websocket_handler.selected_subprotocol == V1

    def handle_incoming_message(self, message: str | bytes) -> None:
        """From the page, to the gateway."""
        if not self._v1_page() or isinstance(message, str):
            super().handle_incoming_message(message)  # type: ignore[arg-type]
            return
        try:
            channel, parts = deserialize_msg_from_ws_v1(message)  # type: ignore[no-untyped-call]
            msg: dict[str, Any] = {"channel": channel}
            msg.update(zip(PARTS, map(json.loads, parts[: len(PARTS)]), strict=True))
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError among them
            self.log.warning("Dropped a malformed kernel message from a page: %s", exc)
            return
        buffers = parts[len(PARTS) :]
        if buffers:  # the legacy protocol's binary form (comm messages with buffers)
            legacy = serialize_binary_message({**msg, "buffers": buffers})  # type: ignore[no-untyped-call]
            super().handle_incoming_message(legacy)
        else:
            super().handle_incoming_message(json.dumps(msg))

    def _write_message(self, message: str | bytes) -> None:
        """To the gateway: the legacy protocol's binary form as a binary frame (the
        gateway connection's own write sends every message as text)."""
        if not isinstance(message, bytes):
            super()._write_message(message)  # type: ignore[no-untyped-call]
            return
        try:
            if not self.disconnected and self.ws is not None:
                self.ws.write_message(message, binary=True)
        except Exception as exc:  # as the gateway connection's own write: logged, dropped
            self.log.error("Exception writing message to websocket: %s", exc)

    def handle_outgoing_message(self, incoming_msg: str, *args: Any) -> None:
        """From the gateway, to the page."""
        if not self._v1_page():
            super().handle_outgoing_message(incoming_msg, *args)
            return
        msg = json.loads(incoming_msg)
        parts = [json.dumps(msg.get(name, {})).encode() for name in PARTS]
        framed = serialize_msg_to_ws_v1(parts, str(msg.get("channel", "")))  # type: ignore[no-untyped-call]
        try:
            self.websocket_handler.write_message(framed, binary=True)
        except WebSocketClosedError:
            self.log.debug("the page closed its kernel WebSocket: a message was dropped")
