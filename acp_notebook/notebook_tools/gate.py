"""What keeps the notebook tools' HTTP endpoint answering its chats under a flood.

Anyone on the machine can connect to the loopback port; only a chat's agent knows a
secret. So nothing an unknown peer does may cost the chats their turn:

- a connection has ``HEADER_SECONDS`` to deliver a whole request head (from when it
  opens, and again after each answer): silent and half-sent connections are closed;
- at most ``untrusted_bound()`` connections that have not yet shown a chat's secret are
  open at once: a new one closes the oldest idle one (on loopback every peer has the same
  address, so the bound is over all of them, never per address). A chat's new connection
  is as silent as a flood's until its head arrives, so the bound is as high as the
  process's open files allow: the more newer connections it takes to make a chat's the
  oldest, the longer its agent has to send the head. A connection is trusted once a
  request on it carried a live chat's secret;
- the secret is checked before a request takes a slot, and the slots are per chat
  (``MAX_PER_CHAT`` requests in progress): one chat cannot starve another, and a request
  without a secret is answered 401 and its connection closed, its body never read;
- a body is bounded in size and depth before the SDK parses it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from ..agent.mcp_servers import SECRET_HEADER
from ..wire import bounded_json

MAX_BODY = 256 * 1024  # an MCP request: the longest is run_code's source
MAX_DEPTH = 16
HEADER_SECONDS = 5.0
# At most this many untrusted connections, and a quarter of the process's open files.
MAX_UNTRUSTED = 2048
MIN_UNTRUSTED = 64
# Connections accepted per turn of the loop (asyncio accepts up to its backlog at once):
# a few turns pass between a connection's arrival and its request head being read, and
# fewer than the bound's newer ones may arrive meanwhile, else a burst would close a
# chat's fresh connection as the oldest. The port's own queue stays long (LISTEN_BACKLOG):
# a full queue drops connections, which then wait a second to try again.
ACCEPT_BATCH = 32
LISTEN_BACKLOG = 2048
# One chat's requests in progress at once (a run_code may wait minutes for a busy
# kernel); more get 503. Each holds up to MAX_BODY while its body arrives.
MAX_PER_CHAT = 64

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
# The chat a secret names (any value: only whether there is one counts here), else None.
Lookup = Callable[[str | None], object | None]

# The HTTP layer's own warnings (a malformed request, an upgrade refused) are a peer's
# doing, and a flood of them would flood the log: only errors are said.
_http_log = logging.getLogger(__name__ + ".http")
_http_log.setLevel(logging.ERROR)


def untrusted_bound() -> int:
    """How many untrusted connections may be open: ``MAX_UNTRUSTED``, or a quarter of the
    open files this process may have (256 of the usual 1,024) when that is fewer."""
    try:
        import resource
    except ImportError:  # Windows: no such limit to read
        return MAX_UNTRUSTED
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return MAX_UNTRUSTED
    return max(MIN_UNTRUSTED, min(MAX_UNTRUSTED, soft // 4))


class Gate:
    """The endpoint's connections not yet trusted, and each chat's requests in progress."""

    def __init__(self, max_untrusted: int | None = None) -> None:
        self.max_untrusted = untrusted_bound() if max_untrusted is None else max_untrusted
        # Oldest first (a dict keeps insertion order).
        self._untrusted: dict[_Connection, None] = {}
        self._by_client: dict[tuple[str, int], _Connection] = {}
        self._busy: dict[str, int] = {}

    def opened(self, connection: _Connection) -> None:
        self._untrusted[connection] = None
        if connection.client is not None:
            self._by_client[connection.client] = connection
        if len(self._untrusted) <= self.max_untrusted:
            return
        for oldest in self._untrusted:
            if oldest is not connection and oldest.idle():
                del self._untrusted[oldest]
                oldest.transport.close()
                return

    def closed(self, connection: _Connection) -> None:
        self._untrusted.pop(connection, None)
        if connection.client is not None and self._by_client.get(connection.client) is connection:
            del self._by_client[connection.client]

    def trust(self, client: Any) -> None:
        """A request on the connection from ``client`` (the ASGI scope's) carried a secret."""
        connection = self._by_client.get(client) if isinstance(client, tuple) else None
        if connection is not None:
            self._untrusted.pop(connection, None)

    def untrusted(self) -> int:
        return len(self._untrusted)

    def take(self, chat: str) -> bool:
        """A slot of ``chat``'s; False when all are taken."""
        busy = self._busy.get(chat, 0)
        if busy >= MAX_PER_CHAT:
            return False
        self._busy[chat] = busy + 1
        return True

    def give_back(self, chat: str) -> None:
        busy = self._busy.pop(chat, 1) - 1
        if busy:
            self._busy[chat] = busy


class _Connection(H11Protocol):
    """uvicorn's HTTP/1.1 connection, with a deadline for each request head and a place
    among the ``Gate``'s untrusted connections until it shows a secret."""

    gate: Gate

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.logger = _http_log
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()
        self.gate.opened(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.gate.closed(self)
        if self._deadline is not None:
            self._deadline.cancel()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()  # the next request's head has its own HEADER_SECONDS

    def idle(self) -> bool:
        """No request in progress: waiting for (the rest of) a request head."""
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(HEADER_SECONDS, self._expired)

    def _expired(self) -> None:
        self._deadline = None
        if self.idle():  # a request in progress has its own bounds (the tool's timeout)
            self.transport.close()


def connection_class(gate: Gate) -> type[asyncio.Protocol]:
    """The connection class uvicorn serves the endpoint with, counted by ``gate``."""
    return type("Connection", (_Connection,), {"gate": gate})


def guarded(app: ASGIApp, lookup: Lookup, gate: Gate) -> ASGIApp:
    """``app`` behind a guard that refuses a request without a live chat's secret (and
    closes its connection), one over its chat's slots, or one whose body is too large or
    too deep, before the SDK reads it."""

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await app(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        raw = scope.get("headers") or []
        headers = {n.decode("latin-1").lower(): v.decode("latin-1") for n, v in raw}
        secret = headers.get(SECRET_HEADER.lower())
        if lookup(secret) is None:
            await refuse(send, 401, "missing or unknown notebook secret", close=True)
            return
        assert secret is not None
        gate.trust(scope.get("client"))
        if not gate.take(secret):
            await refuse(send, 503, f"this chat has {MAX_PER_CHAT} requests in progress")
            return
        try:
            await _admitted(app, scope, receive, send, headers)
        finally:
            gate.give_back(secret)

    return guard


async def _admitted(
    app: ASGIApp, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
) -> None:
    """A chat's request: its body read and bounded, then the SDK's."""
    if scope["method"] != "POST":
        await app(scope, receive, send)
        return
    declared = headers.get("content-length", "0")
    if not declared.isdigit() or int(declared) > MAX_BODY:
        await refuse(send, 413, "request body too large")
        return
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body += message.get("body", b"")
        if len(body) > MAX_BODY:
            await refuse(send, 413, "request body too large")
            return
        if not message.get("more_body"):
            break
    try:
        bounded_json.loads(bytes(body), max_bytes=MAX_BODY, max_depth=MAX_DEPTH)
    except bounded_json.Rejected as exc:
        await refuse(send, 400, f"bad request body: {exc}")
        return
    # The SDK reads the body again: the one read here, then what comes (a disconnect).
    unread: list[Message] = [{"type": "http.request", "body": bytes(body), "more_body": False}]

    async def replay() -> Message:
        return unread.pop() if unread else await receive()

    await app(scope, replay, send)


async def refuse(send: Send, status: int, detail: str, close: bool = False) -> None:
    body = json.dumps({"error": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
