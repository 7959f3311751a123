"""How a ``Chat`` reaches its hub: in-process (local mode) or via the server.

Both run on a background thread with its own asyncio loop, so the kernel's main
thread can block in a cell while the agent keeps streaming and answers keep
flowing. ``LocalClient`` hosts the hub itself; ``ServerClient``
(``server_client.py``) talks to the Jupyter server extension's kernel socket.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import Future
from typing import Any, Literal, Protocol, TypeVar

from .hub import Frame, Hub, HubConfig, Subscription

T = TypeVar("T")
FrameHandler = Callable[[Frame], None]


class LoopThread:
    """A daemon thread running an asyncio loop; ``submit`` schedules coroutines on it."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, fn: Callable[[], T]) -> Future[T]:
        async def run() -> T:
            return fn()

        return self.submit(run())

    @property
    def is_current(self) -> bool:
        return threading.current_thread() is self._thread


class Client(Protocol):
    """What ``Chat`` needs from a hub, whatever the transport."""

    mode: Literal["local", "server"]
    kernel_id: str
    thread: LoopThread

    def open_chat(self, options: Mapping[str, Any]) -> Future[str]: ...
    def request(self, message: Mapping[str, Any]) -> Future[Frame]: ...
    def subscribe(self, chat_id: str, handler: FrameHandler) -> Future[None]: ...
    def close_chat(self, chat_id: str) -> Future[None]: ...


async def pump(sub: Subscription, handler: FrameHandler) -> None:
    """Deliver a subscription's frames to ``handler`` until it closes."""
    while True:
        frame = await sub.next_frame()
        if frame is None:
            return
        handler(frame)


class LocalClient:
    """Local mode: the hub lives in this process, on its own loop thread."""

    mode: Literal["local", "server"] = "local"

    def __init__(self, config: HubConfig = HubConfig(), kernel_id: str = "") -> None:
        self.kernel_id = kernel_id
        self.thread = LoopThread("acp-notebook-hub")
        self.hub = Hub(config, name="local")
        atexit.register(self.shutdown)

    def open_chat(self, options: Mapping[str, Any]) -> Future[str]:
        return self.thread.submit(self.hub.open_chat(**options))

    def request(self, message: Mapping[str, Any]) -> Future[Frame]:
        # The person at the notebook is this kernel's user: local requests are trusted.
        return self.thread.submit(self.hub.handle(dict(message), trusted=True))

    def subscribe(self, chat_id: str, handler: FrameHandler) -> Future[None]:
        def start() -> None:
            sub = self.hub.subscribe(chat_id)
            self.thread.loop.create_task(pump(sub, handler))

        return self.thread.call(start)

    def close_chat(self, chat_id: str) -> Future[None]:
        return self.thread.submit(self.hub.close_chat(chat_id))

    def shutdown(self) -> None:
        """End every agent process; called at interpreter exit."""
        if self.thread.loop.is_closed():
            return
        with contextlib.suppress(Exception):  # at exit, nothing is left to report to
            self.thread.submit(self.hub.close()).result(timeout=10)


_local: LocalClient | None = None
_lock = threading.Lock()


def local_client() -> LocalClient:
    """The process-wide local hub, started on first use."""
    global _local
    with _lock:
        if _local is None:
            _local = LocalClient()
        return _local


def connect(transport: str = "auto") -> Client:
    """Server mode when the extension is reachable, local mode otherwise."""
    if transport in ("auto", "server"):
        from .server_client import server_client

        client = server_client()
        if client is not None:
            return client
        if transport == "server":
            raise RuntimeError(
                "the acp_notebook server extension is not reachable from this kernel"
            )
    return local_client()
