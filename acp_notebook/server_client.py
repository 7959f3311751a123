"""Server mode from the kernel: the Chat's socket to the Jupyter server extension.

The socket lives on its own loop thread, so frames keep arriving while a cell
blocks, and answers from browsers go to the server without ever waiting on this
kernel. If the socket drops, it reconnects and re-subscribes its chats; the
server starts each subscription with a reset frame, which rebuilds the chat.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import itertools
import json
import logging
import os
import ssl
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Literal

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from .agents import UnknownAgent
from .client import Client, FrameHandler, LoopThread
from .hub import Forbidden, Frame
from .kernel_auth import SECRET_ENV, URL_ENV, auth_headers

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 3.0
# How long a request waits for a dropped socket to come back before it fails.
RECONNECT_WAIT = 10.0
MAX_BACKOFF = 5.0
KERNEL_PATH = "acp-notebook/ws/kernel"
# What a failed connection attempt raises (the timeouts are distinct classes on 3.10).
CONNECT_FAILURES = (
    OSError,
    asyncio.TimeoutError,
    concurrent.futures.TimeoutError,
    WebSocketException,
)


def kernel_identity() -> tuple[str, bytes] | None:
    """This kernel's id and session key, or None outside a Jupyter-launched ipykernel.

    Jupyter names a kernel's connection file ``kernel-<id>.json``; other launchers
    (VS Code, nbval) name it differently and get local mode.
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
    if not name.startswith("kernel-") or not key:
        return None
    return name.removeprefix("kernel-"), key


def chat_owner() -> str | None:
    """The Jupyter user a chat opened by this kernel belongs to, when one can be known.

    Not the ``username`` of the cell's execute_request header: jupyter_server 2.21
    forwards a frontend's header untouched, JupyterLab 4.6 sends ``""`` and
    jupyter_client sends the OS user, so it is neither authenticated nor a Jupyter
    identity. Under JupyterHub the server (and so every kernel) belongs to
    ``JUPYTERHUB_USER``, the name its browser sessions carry. Elsewhere (a token
    server gives each browser a random anonymous user) there is no owner: anyone the
    server lets execute code in kernels may answer, as they could run code here anyway.
    """
    return os.environ.get("JUPYTERHUB_USER") or None


def _socket_url(server_url: str) -> str:
    scheme, rest = server_url.split("://", 1)
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest.rstrip('/')}/{KERNEL_PATH}"


def _loopback_tls(url: str) -> ssl.SSLContext | None:
    if not url.startswith("wss:"):
        return None
    # The server's own address on this machine: its certificate names a public host.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _error(ack: object, detail: str) -> Frame:
    return {"ack": ack, "error": "INTERNAL", "detail": detail}


class ServerClient:
    """The kernel's one socket to the extension; every Chat of the kernel shares it."""

    mode: Literal["local", "server"] = "server"

    def __init__(self, server_url: str, secret: str, kernel_id: str, key: bytes) -> None:
        self.kernel_id = kernel_id
        self._url = _socket_url(server_url)
        self._secret = secret
        self._key = key
        self._ws: ClientConnection | None = None
        self._acks: dict[int, asyncio.Future[Frame]] = {}
        self._handlers: dict[str, FrameHandler] = {}
        self._ids = itertools.count(1)
        self._stopping = False
        self._reader: asyncio.Task[None] | None = None
        self.thread = LoopThread("acp-notebook-server")
        self._connected = self.thread.call(asyncio.Event).result()

    # ------------------------------------------------------------ connection

    async def _connect(self) -> ClientConnection:
        return await connect(
            self._url,
            additional_headers=auth_headers(self._secret, self._key, self.kernel_id, time.time()),
            open_timeout=CONNECT_TIMEOUT,
            max_size=None,  # a resync carries the whole bounded history
            proxy=None,  # a loopback address: never through a proxy from the environment
            ssl=_loopback_tls(self._url),
        )

    def start(self) -> bool:
        """Connect within ``CONNECT_TIMEOUT``; False (and the thread ended) when that fails."""

        async def first() -> None:
            ws = await self._connect()
            self._up(ws)
            self._reader = asyncio.get_running_loop().create_task(self._run(ws))

        try:
            self.thread.submit(first()).result(CONNECT_TIMEOUT + 1)
        except InvalidStatus as exc:
            log.warning(
                "acp_notebook: the server extension refused this kernel (HTTP %s); using local mode",
                exc.response.status_code,
            )
        except CONNECT_FAILURES as exc:
            log.warning(
                "acp_notebook: the server extension is not reachable (%s); using local mode", exc
            )
        else:
            atexit.register(self.shutdown)
            return True
        self.thread.loop.call_soon_threadsafe(self.thread.loop.stop)
        return False

    def _up(self, ws: ClientConnection) -> None:
        self._ws = ws
        # Resubscribing first: the server answers each with a reset frame (the resync).
        for chat_id in self._handlers:
            self._send_nowait({"type": "chat:subscribe", "chatId": chat_id, "id": next(self._ids)})
        self._connected.set()

    async def _run(self, ws: ClientConnection) -> None:
        """Read frames until the socket drops, then reconnect; forever, until shutdown."""
        while True:
            try:
                async for raw in ws:
                    self._dispatch(json.loads(raw))
            except ConnectionClosed:
                pass
            self._connected.clear()
            self._ws = None
            for future in self._acks.values():
                if not future.done():
                    future.set_result(_error(None, "lost the connection to the Jupyter server"))
            if self._stopping:
                return
            ws = await self._reconnect()
            self._up(ws)

    async def _reconnect(self) -> ClientConnection:
        delay = 0.25
        while True:
            try:
                return await self._connect()
            except CONNECT_FAILURES as exc:
                log.debug("acp_notebook: reconnecting to the server extension failed: %s", exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF)

    def _dispatch(self, frame: Frame) -> None:
        if "ack" in frame:
            future = self._acks.get(frame["ack"]) if isinstance(frame["ack"], int) else None
            if future is not None and not future.done():
                future.set_result(frame)
            elif frame.get("error"):
                log.warning(
                    "acp_notebook: the server refused a request: %s %s",
                    frame["error"],
                    frame.get("detail", ""),
                )
            return
        handler = self._handlers.get(frame.get("chatId", ""))
        if handler is None:
            return
        try:
            handler(frame)
        except Exception:  # one broken chat must not end the socket every chat shares
            log.exception("acp_notebook: a chat failed to take a frame")

    def _send_nowait(self, message: Mapping[str, Any]) -> None:
        ws = self._ws
        if ws is not None:
            asyncio.get_running_loop().create_task(self._send(ws, message))

    @staticmethod
    async def _send(ws: ClientConnection, message: Mapping[str, Any]) -> None:
        with contextlib.suppress(ConnectionClosed):
            await ws.send(json.dumps(message))

    async def _call(self, message: Mapping[str, Any]) -> Frame:
        """Send one request and wait for its ack; the ack names the caller's own id."""
        own_id = message.get("id")
        if not self._connected.is_set():
            try:
                await asyncio.wait_for(self._connected.wait(), RECONNECT_WAIT)
            except asyncio.TimeoutError:
                return _error(own_id, "not connected to the Jupyter server")
        ws = self._ws
        assert ws is not None
        number = next(self._ids)
        future: asyncio.Future[Frame] = asyncio.get_running_loop().create_future()
        self._acks[number] = future
        try:
            await ws.send(json.dumps({**message, "id": number}))
            frame = await future
        except ConnectionClosed:
            frame = _error(None, "lost the connection to the Jupyter server")
        finally:
            self._acks.pop(number, None)
        return {**frame, "ack": own_id}

    # ------------------------------------------------------------ the Client protocol

    def open_chat(self, options: Mapping[str, Any]) -> Future[str]:
        message: dict[str, Any] = {
            "type": "chat:open",
            "agent": options.get("agent"),
            "command": options.get("command"),
            "env": options.get("env"),
            # The agent runs in the server process: give it the kernel's working directory.
            "cwd": options.get("cwd") or os.getcwd(),
            "mode": options.get("mode"),
            "mcpServers": list(options.get("mcp_servers") or ()),
            "owner": options.get("owner") or chat_owner(),
            "loadSessionId": options.get("load_session_id"),
        }

        async def run() -> str:
            ack = await self._call({k: v for k, v in message.items() if v is not None})
            if ack.get("error") == "FORBIDDEN":
                raise Forbidden(ack.get("detail") or "refused by the server")
            if ack.get("error") == "INVALID":
                raise UnknownAgent(ack.get("detail") or "invalid chat options")
            if ack.get("error"):
                raise RuntimeError(f"{ack['error']}: {ack.get('detail', '')}")
            return str(ack["chatId"])

        return self.thread.submit(run())

    def request(self, message: Mapping[str, Any]) -> Future[Frame]:
        return self.thread.submit(self._call(message))

    def subscribe(self, chat_id: str, handler: FrameHandler) -> Future[None]:
        async def run() -> None:
            self._handlers[chat_id] = handler
            ack = await self._call({"type": "chat:subscribe", "chatId": chat_id})
            if ack.get("error"):
                self._handlers.pop(chat_id, None)
                raise RuntimeError(f"{ack['error']}: {ack.get('detail', '')}")

        return self.thread.submit(run())

    def close_chat(self, chat_id: str) -> Future[None]:
        async def run() -> None:
            self._handlers.pop(chat_id, None)
            await self._call({"type": "chat:close", "chatId": chat_id})

        return self.thread.submit(run())

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


def server_client() -> Client | None:
    """The kernel's client of the extension, or None when no extension is reachable."""
    global _client
    url, secret = os.environ.get(URL_ENV), os.environ.get(SECRET_ENV)
    if not (url and secret):
        return None
    identity = kernel_identity()
    if identity is None:
        return None
    with _lock:
        if _client is None:
            client = ServerClient(url, secret, *identity)
            if client.start():
                _client = client
        return _client
