"""Server mode from the kernel: the Chat's socket to the Jupyter server extension.

The socket lives on its own loop thread, so frames keep arriving while a cell
blocks, and answers from browsers go to the server without ever waiting on this
kernel. If the socket drops, it reconnects and re-subscribes its chats; the
server starts each subscription with a reset frame, which rebuilds the chat.
``connect()`` picks this client when the extension is reachable, else local mode.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import json
import logging
import os
import ssl
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import ValidationError
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from ..notebook_tools import kernel_side as kernel_tools
from ..notebook_tools.variables import ipython_shell
from ..wire import bounded_json
from ..wire.contracts import KERNEL_ANSWER, KERNEL_QUERY, Frame, KernelQuery, error_ack, why_invalid
from ..wire.kernel_auth import (
    KERNEL_SECRET_ENV,
    KERNEL_URL_ENV,
    KEY_ENV,
    SECRET_ENV,
    URL_ENV,
    auth_headers,
)
from .local_transport import Client, Disconnected, local_client

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 3.0
# How long a request waits for a dropped socket to come back before it fails.
RECONNECT_WAIT = 10.0
MAX_BACKOFF = 5.0
# Frames from the extension: a resync carries a whole history (history_bytes, events
# bound() to depth 24), so the bounds are far above it, yet a broken frame is skipped.
MAX_FRAME_BYTES = 1 << 30
MAX_FRAME_CONTAINERS = 20_000_000
KERNEL_PATH = "acp-notebook/ws/kernel"
LOOPBACK = ("127.0.0.1", "::1", "localhost")
LOST = "lost the connection to the Jupyter server"
# What a failed connection attempt raises (the timeouts are distinct classes on 3.10).
CONNECT_FAILURES = (
    OSError,
    asyncio.TimeoutError,
    concurrent.futures.TimeoutError,
    WebSocketException,
)


def kernel_identity() -> tuple[str, bytes] | None:
    """This kernel's id and session key, or None outside a Jupyter-launched ipykernel.

    Jupyter names a kernel's connection file ``kernel-<id>.json``; Enterprise Gateway's
    launchers on other hosts name it otherwise and set ``KERNEL_ID``; other launchers
    (VS Code, nbval) do neither and get local mode.
    """
    try:
        from ipykernel.kernelapp import IPKernelApp
    except ImportError:
        return None
    if not IPKernelApp.initialized():
        return None
    app = IPKernelApp.instance()
    name = Path(app.connection_file).stem
    key = bytes(app.session.key)
    kernel_id = name.removeprefix("kernel-") if name.startswith("kernel-") else None
    kernel_id = kernel_id or os.environ.get("KERNEL_ID")
    if not kernel_id or not key:
        return None
    return kernel_id, key


# Why the last connect() fell back to local mode, one line for the widget's header.
NO_VARIABLES = "no-variables"
UNNAMED = "unnamed"
REFUSED = "refused"
UNREACHABLE = "unreachable"


def server_variables() -> tuple[str, str, bytes | None] | None:
    """Where the extension is, its secret, and the key it issued to this kernel (None:
    prove with the session key). The names a kernel was started with come first: those
    it inherited may be another server's."""
    env = os.environ
    if env.get(KERNEL_URL_ENV) and env.get(KERNEL_SECRET_ENV):
        issued = env.get(KEY_ENV)
        return env[KERNEL_URL_ENV], env[KERNEL_SECRET_ENV], issued.encode() if issued else None
    if env.get(URL_ENV) and env.get(SECRET_ENV):
        return env[URL_ENV], env[SECRET_ENV], None
    return None


def execute_id() -> str | None:
    """The msg_id of the execute_request whose cell runs now, if any.

    The server knows who sent it (through its kernel WebSocket, logged in): that
    user owns the chats the cell opens (``server/owners.py``). Not the header's
    ``username``, which a frontend sets as it likes.
    """
    header = getattr(ipython_shell(), "parent_header", None) or {}
    msg_id = header.get("header", {}).get("msg_id") if isinstance(header, dict) else None
    return msg_id if isinstance(msg_id, str) and msg_id else None


class ServerClient(Client):
    """The kernel's one socket to the extension; every Chat of the kernel shares it."""

    mode = "server"

    def __init__(self, server_url: str, secret: str, kernel_id: str, key: bytes) -> None:
        super().__init__("acp-notebook-server", kernel_id)
        scheme, rest = server_url.split("://", 1)
        self._url = f"{'wss' if scheme == 'https' else 'ws'}://{rest.rstrip('/')}/{KERNEL_PATH}"
        self._secret = secret
        self._key = key
        self._ws: ClientConnection | None = None
        self._stopping = False
        self._reader: concurrent.futures.Future[None] | None = None
        self._connected = asyncio.Event()  # bound to the loop that first waits on it
        self._tls: ssl.SSLContext | None = None
        self.refused = False  # the server answered, and refused this kernel's proof
        if scheme == "https":
            self._tls = ssl.create_default_context()
            if urlsplit(server_url).hostname in LOOPBACK:
                # The server's own address on this machine: its certificate names a public
                # host. An address on another machine (AcpNotebookApp.kernel_url) is checked.
                self._tls.check_hostname = False
                self._tls.verify_mode = ssl.CERT_NONE

    # ------------------------------------------------------------ connection

    async def _connect(self) -> ClientConnection:
        return await ws_connect(
            self._url,
            additional_headers=auth_headers(self._secret, self._key, self.kernel_id, time.time()),
            open_timeout=CONNECT_TIMEOUT,
            max_size=None,  # a resync carries the whole bounded history
            proxy=None,  # a loopback address: never through a proxy from the environment
            ssl=self._tls,
        )

    def start(self) -> bool:
        """Connect within ``CONNECT_TIMEOUT``; False (and the thread ended) when that fails."""
        try:
            ws = self.thread.submit(self._connect()).result(CONNECT_TIMEOUT + 1)
        except InvalidStatus as exc:
            self.refused = True
            log.warning(
                "acp_notebook: the server extension refused this kernel (HTTP %s); using local mode",
                exc.response.status_code,
            )
        except CONNECT_FAILURES as exc:
            log.warning(
                "acp_notebook: the server extension is not reachable (%s); using local mode", exc
            )
        else:
            self._reader = self.thread.submit(self._run(ws))
            atexit.register(self.shutdown)
            return True
        self.thread.loop.call_soon_threadsafe(self.thread.loop.stop)
        return False

    def _up(self, ws: ClientConnection) -> None:
        self._ws = ws
        # Resubscribing first: the server answers each with a reset frame (the resync).
        for chat_id in self._handlers:
            message = {"type": "chat:subscribe", "chatId": chat_id, "id": next(self._ids)}
            asyncio.get_running_loop().create_task(self._write(ws, message))
        self._connected.set()

    async def _run(self, ws: ClientConnection) -> None:
        """Read frames until the socket drops, then reconnect; forever, until shutdown."""
        while True:
            self._up(ws)
            try:
                async for raw in ws:
                    self._receive(raw)
            except ConnectionClosed:
                pass
            self._connected.clear()
            self._ws = None
            for future in self._acks.values():  # every request still waiting for its ack
                if not future.done():
                    future.set_result(error_ack(None, "INTERNAL", LOST))
            if self._stopping:
                return
            ws = await self._reconnect()

    def _receive(self, raw: str | bytes) -> None:
        try:
            frame = bounded_json.loads(
                raw, max_bytes=MAX_FRAME_BYTES, max_containers=MAX_FRAME_CONTAINERS
            )
        except bounded_json.Rejected as exc:
            # One bad frame costs that frame, never the reader (and with it reconnection).
            log.warning("acp_notebook: skipped a frame from the server: %s", exc)
            return
        if isinstance(frame, dict) and frame.get("type") == KERNEL_QUERY:
            try:
                query = KernelQuery.model_validate(frame)
            except ValidationError as exc:
                log.warning("acp_notebook: skipped a kernel query: %s", why_invalid(exc))
                return
            self.thread.loop.create_task(self._answer_query(query))
        elif isinstance(frame, dict):
            self.on_frame(frame)
        else:
            log.warning("acp_notebook: skipped a frame from the server: not an object")

    async def _answer_query(self, query: KernelQuery) -> None:
        """The server asks for a kernel-side notebook tool: answered on a worker thread,
        so while a cell runs."""
        answer: Frame = {"type": KERNEL_ANSWER, "query": query.query}
        try:
            answer["text"] = await asyncio.to_thread(kernel_tools.answer, query.tool, query.args)
        except Exception as exc:
            answer["error"] = f"{type(exc).__name__}: {exc}"[:500]
        ws = self._ws
        if ws is not None:
            await self._write(ws, answer)

    async def _reconnect(self) -> ClientConnection:
        delay = 0.25
        while True:
            try:
                return await self._connect()
            except CONNECT_FAILURES as exc:
                log.debug("acp_notebook: reconnecting to the server extension failed: %s", exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF)

    @staticmethod
    async def _write(ws: ClientConnection, message: Frame) -> None:
        with contextlib.suppress(ConnectionClosed):
            await ws.send(_text(message))

    async def _send(self, message: Frame) -> None:
        if not self._connected.is_set():
            try:
                await asyncio.wait_for(self._connected.wait(), RECONNECT_WAIT)
            except asyncio.TimeoutError:
                raise Disconnected("not connected to the Jupyter server") from None
        ws = self._ws
        assert ws is not None
        try:
            await ws.send(_text(message))
        except ConnectionClosed:
            raise Disconnected(LOST) from None

    def shutdown(self) -> None:
        """Close the socket; the chats stay on the server until the kernel is gone."""

        async def close() -> None:
            self._stopping = True
            if self._ws is not None:
                await self._ws.close()

        if not self.thread.loop.is_closed():
            with contextlib.suppress(Exception):
                self.thread.submit(close()).result(2)


_client: ServerClient | None = None
_lock = threading.Lock()
_why_local = ""


def why_local() -> str:
    """Why the last ``connect()`` gave local mode: ``NO_VARIABLES``, ``UNNAMED``,
    ``REFUSED``, ``UNREACHABLE``; "" when it was asked for (``transport="local"``)."""
    return _why_local


def connect(transport: str = "auto") -> Client:
    """Server mode when the extension is reachable, local mode otherwise."""
    global _client, _why_local
    if transport not in ("auto", "server"):
        _why_local = ""
        return local_client()
    variables = server_variables()
    identity = kernel_identity()
    if variables is None:
        _why_local = NO_VARIABLES
    elif identity is None:
        _why_local = UNNAMED
    else:
        url, secret, issued = variables
        with _lock:
            if _client is None:
                kernel_id, session_key = identity
                client = ServerClient(url, secret, kernel_id, issued or session_key)
                if client.start():
                    _client = client
                else:
                    _why_local = REFUSED if client.refused else UNREACHABLE
            if _client is not None:
                return _client
    if transport == "server":
        raise RuntimeError("the acp_notebook server extension is not reachable from this kernel")
    return local_client()


def _text(message: Frame) -> str:
    """The frame as JSON with non-ASCII as itself: escaped, a prompt of MAX_PROMPT CJK
    characters would be six times over the server's request limit. A lone surrogate (from
    os.fsdecode) cannot be UTF-8: then it is escaped, and the server reads it as U+FFFD."""
    text = json.dumps(message, ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:
        return json.dumps(message)
    return text
