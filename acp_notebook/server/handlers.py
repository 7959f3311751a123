"""The extension's two WebSockets.

``acp-notebook/ws/browser?kernel=<id>&chat=<id>[&resync=<id>]``: the widget. A Jupyter
login with ``execute`` on ``kernels``, same origin (or a token). Frames of that chat
down, requests up; the login's principal (identity.py) is who the owner gate sees. With ``resync``, the
socket is answered as it opens as a snapshot ``chat:resync`` of that request id would be.

``acp-notebook/ws/kernel``: the kernel-side ``Chat``. No Jupyter login (kernels have
none) and no browser (any Origin header is refused): the server's secret plus an
HMAC over the key the server issued to the kernel, else its session key
(``kernel_auth``). Its ``chat:open``, ``chat:subscribe`` and ``chat:close`` are trusted.
A chat request made under a message this server saw (its ``executeId``: the cell's
execute_request, the widget's comm_msg) is that message's sender's, gated as theirs;
any other (a cell run by nbclient, a console, the kernel's own code) is trusted, for
any owner.

Both hand every request to ``Hub.handle``, which parses, validates and answers it.

Every request gets an ack on the same socket; a bad one gets ``INVALID`` and the
socket stays open.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Coroutine
from typing import Any

from jupyter_server.auth.decorator import allow_unauthenticated, ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from ..bridge.hub import BadRequest, Hub, read_request, request_id
from ..bridge.subscriptions import Subscription, replace_subscription
from ..wire import kernel_auth
from ..wire.contracts import (
    CHAT_GONE,
    KERNEL_ANSWER,
    MAX_REQUEST_BYTES,
    TRUSTED_TYPES,
    Frame,
    error_ack,
)
from .api import may_execute
from .identity import Principals
from .kernel_keys import KernelKeys
from .kernel_queries import KernelQueries
from .kernels import KernelHubs
from .owners import Executions

# Above this tornado drops the connection; up to it, an oversized request is INVALID.
MAX_FRAME_BYTES = 4 * MAX_REQUEST_BYTES
# What a client may leave unread of its acks: a resync's is the chat's whole history
# (8 MB by default), asked for in 60 bytes; one that is never read waits in our buffer.
MAX_UNREAD = 32 * 1024 * 1024
# Close code for a client that asks and does not read (as 1008, "policy violation").
UNREAD = 4008
# Pages one chat streams to at once: each holds a queue of up to 32 MB and a resync
# being written (the history, 8 MB by default), so a page opening sockets in a loop
# cost the server without end. One more is closed with FULL; the widget retries.
MAX_PAGES = 32
FULL = 4029


class _ChatSocket(WebSocketMixin, WebSocketHandler, JupyterHandler):
    """Frames down with backpressure, requests up, each answered with an ack."""

    # How long a frame of text chunks only waits after the one before (Subscription.hold).
    frame_hold = 0.0

    def initialize(self, hubs: KernelHubs) -> None:
        self.hubs = hubs
        self._subs: dict[str, Subscription] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._unread = 0  # bytes of acks written and not yet taken by the client

    def set_default_headers(self) -> None:
        """JupyterHandler's headers (CSP and such) mean nothing on a WebSocket."""

    def open(self, *args: Any, **kwargs: Any) -> None:
        super().open(*args, **kwargs)
        # Small, latency-bound frames: with Nagle on, the event after an ack waits
        # ~40 ms for the peer's delayed ACK (bench/latency.py measured it).
        self.set_nodelay(True)

    @property
    def max_message_size(self) -> int:
        return MAX_FRAME_BYTES

    async def handle(self, message: str | bytes) -> Frame | None:
        """The ack of one frame from the client; None for a frame that gets none."""
        raise NotImplementedError

    def on_message(self, message: str | bytes) -> None:
        # Concurrently: a request that waits on the agent (set_mode) holds up no other.
        self._spawn(self._answer(message))

    async def _answer(self, message: str | bytes) -> None:
        try:
            ack = await self.handle(message)
        except Exception:
            self.log.exception("acp_notebook: a request failed")
            ack = error_ack(None, "INTERNAL", "the server failed on this request")
        if ack is not None:
            self.send(ack)

    def send(self, frame: Frame) -> None:
        if self.ws_connection is None or self.ws_connection.is_closing():
            return
        text = json.dumps(frame)
        if self._unread + len(text) > MAX_UNREAD:
            self.log.warning("acp_notebook: closed a socket that left its acks unread")
            self.close(UNREAD, "acks left unread")
            return
        self._unread += len(text)
        self.write_message(text).add_done_callback(lambda done: self._taken(done, len(text)))

    def _taken(self, done: asyncio.Future[None], size: int) -> None:
        self._unread -= size
        if not done.cancelled():
            done.exception()  # a closed socket's: nothing more to do

    def follow(self, sub: Subscription) -> None:
        """Forward a chat's frames on this socket (in place of an earlier subscription)."""
        sub.hold = self.frame_hold
        replace_subscription(self._subs, sub)
        self._spawn(self._forward(sub))

    async def _forward(self, sub: Subscription) -> None:
        # Awaiting each write is the backpressure: meanwhile events coalesce in the
        # subscription, and one too far behind is reset to a resync.
        try:
            while (frame := await sub.next_frame()) is not None:
                await self.write_message(json.dumps(frame))
        except WebSocketClosedError:
            sub.close()
            return
        if self._subs.get(sub.chat_id) is sub:  # closed by the hub, not replaced by us
            self._subs.pop(sub.chat_id)
            self.chat_ended(sub.chat_id, sub.ended)

    def chat_ended(self, chat_id: str, why: str | None) -> None:
        """A chat this socket follows was closed (``why``: a ``CHAT_GONE_*`` reason)."""

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def on_close(self) -> None:
        subs, self._subs = self._subs, {}
        for sub in subs.values():
            sub.close()


class BrowserSocket(_ChatSocket):
    auth_resource = "kernels"
    # A page paints at most once a frame (1/60 s): more frames only cost it tasks.
    frame_hold = 0.015

    def initialize(self, hubs: KernelHubs, principals: Principals) -> None:  # type: ignore[override]
        super().initialize(hubs)
        self.principals = principals
        self.hub: Hub | None = None  # the chat's, once the socket is open

    @ws_authenticated
    @may_execute
    async def get(self, *args: Any, **kwargs: Any) -> None:
        self.principal = self.principals.of(self.current_user)
        self.kernel_id = self.get_query_argument("kernel", "")
        self.chat_id = self.get_query_argument("chat", "")
        # The id of the resync the page asks for (answered as the socket opens), or "".
        self.resync_id = self.get_query_argument("resync", "")
        # Checks the origin (tornado calls check_origin), then upgrades.
        await super().get(*args, **kwargs)

    def open(self, *args: Any, **kwargs: Any) -> None:
        super().open(*args, **kwargs)
        hub = self.hubs.get(self.kernel_id)
        if hub is None or self.chat_id not in hub.chats:
            self.send(error_ack(None, "CHAT_NOT_FOUND", "no such chat on this kernel"))
            self.close(CHAT_GONE, "no such chat")
            return
        pages = sum(sub.user is not None for sub in hub.chats[self.chat_id].subscribers)
        if pages >= MAX_PAGES:
            self.log.warning("acp_notebook: refused page %d of chat %s", pages + 1, self.chat_id)
            self.close(FULL, f"{MAX_PAGES} pages follow this chat already")
            return
        self.hub = hub
        self.follow(hub.subscribe(self.chat_id, self.principal.id))
        if self.resync_id:
            # Answered now, a round trip sooner than a request sent once the page sees
            # the socket open: a reloading page and its server are busiest then. Read
            # as any request is (an id too long for one gets INVALID).
            asked = {"type": "chat:resync", "chatId": self.chat_id, "snapshot": True}
            self._spawn(self._answer(json.dumps({**asked, "id": self.resync_id})))

    async def handle(self, message: str | bytes) -> Frame:
        if self.hub is None:  # refused at open, closing
            return error_ack(None, "CHAT_NOT_FOUND", "no such chat on this kernel")
        who = self.principal
        return await self.hub.handle(message, user=who.id, name=who.name)

    def chat_ended(self, chat_id: str, why: str | None) -> None:
        self.close(CHAT_GONE, why or "the chat was closed")


class KernelSocket(_ChatSocket):
    hub: Hub  # the kernel's, attached when the socket opens
    # The kernel folds every frame in Python, on the cores the page and the agent use;
    # its text is for code and a saved transcript, not a paint.
    frame_hold = 0.05

    def initialize(  # type: ignore[override]
        self,
        hubs: KernelHubs,
        secret: str,
        queries: KernelQueries,
        proofs: kernel_auth.UsedProofs,
        executions: Executions,
        keys: KernelKeys,
    ) -> None:
        super().initialize(hubs)
        self.secret = secret
        self.queries = queries
        self.proofs = proofs
        self.executions = executions
        self.keys = keys

    def open(self, *args: Any, **kwargs: Any) -> None:
        super().open(*args, **kwargs)
        # The server's questions to this kernel (the notebook tools) go down this socket.
        self.queries.attach(self.kernel_id, self.send)

    def on_close(self) -> None:
        super().on_close()
        self.queries.detach(self.kernel_id, self.send)

    def _session_key(self, kernel_id: str) -> bytes | None:
        # The issued key, when the server started the kernel through its hook: behind a
        # gateway the session key here is the gateway client's, which the kernel lacks.
        manager = self.kernel_manager
        if kernel_id not in manager:
            return None
        return self.keys.key(kernel_id) or bytes(manager.get_kernel(kernel_id).session.key)

    @allow_unauthenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        # Kernels send no Origin; a browser always does, so no page can ever use this.
        if "Origin" in self.request.headers:
            self.log.warning(
                "acp_notebook: refused a kernel socket that came with an Origin header"
            )
            raise web.HTTPError(403)
        try:
            self.kernel_id = kernel_auth.verify(
                self.request.headers, self.secret, self._session_key, time.time(), self.proofs
            )
        except kernel_auth.Refused as exc:
            self.log.warning("acp_notebook: refused a kernel socket: %s", exc)
            raise web.HTTPError(403) from None
        try:
            self.hub = self.hubs.attach(self.kernel_id)
        except RuntimeError:  # the server is stopping
            raise web.HTTPError(503) from None
        await super().get(*args, **kwargs)

    async def handle(self, message: str | bytes) -> Frame | None:
        try:
            frame = read_request(message)  # once: the hub validates it as read here
        except BadRequest as exc:
            return error_ack(None, "INVALID", str(exc))
        if isinstance(frame, dict) and frame.get("type") == KERNEL_ANSWER:
            self.queries.answered(self.kernel_id, frame)
            return None
        if self.kernel_id not in self.kernel_manager:
            # Shut down, its hub perhaps not dropped yet: a socket it left open (or one
            # someone else holds) acts for no one.
            return error_ack(request_id(frame), "FORBIDDEN", "this kernel has shut down")
        kind = frame.get("type") if isinstance(frame, dict) else None
        execute_id = frame.get("executeId") if isinstance(frame, dict) else None
        if kind == "chat:open":
            # The owner is the server's to say: who sent the cell that opens it.
            owner = self.executions.owner(execute_id)
            frame = {
                **frame,
                "owner": owner and owner.id,
                "ownerName": owner and owner.name,
            }
        # Its hub is the one of when the socket opened: once the kernel is gone (or the
        # server stops) that hub is closed and opens no chat, whatever the socket sends.
        trusted_kind = isinstance(kind, str) and kind in TRUSTED_TYPES
        sender = None if trusted_kind else self.executions.sender(execute_id)
        if sender is not None:  # a person's cell or click: gated, and answered, as theirs
            return await self.hub.handle(frame, user=sender.id, name=sender.name, read=True)
        # The kernel runs the notebook's own code: it may act for any owner.
        return await self.hub.handle(frame, trusted=True, follow=self.follow, read=True)
