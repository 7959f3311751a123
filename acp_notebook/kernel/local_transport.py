"""How a ``Chat`` reaches its hub: in-process (local mode) or via the server.

Both run on a background thread with its own asyncio loop, so the kernel's main
thread can block in a cell while the agent keeps streaming and answers keep
flowing. Both transports share one request path (``Client``): ``request()``
sends a request and waits for its ack, ``on_frame()`` takes every frame the hub
sends back. ``LocalClient`` hosts the hub itself; ``ServerClient``
(``server_client.py``) talks to the Jupyter server extension's kernel socket.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import itertools
import logging
import threading
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import Future
from typing import Any, ClassVar, Literal, TypeVar

from ..bridge.hub import Hub, HubConfig
from ..bridge.subscriptions import Subscription, replace_subscription
from ..wire.contracts import Frame, error_ack
from ..wire.errors import error_for

log = logging.getLogger(__name__)

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

    @property
    def is_current(self) -> bool:
        return threading.current_thread() is self._thread


class Disconnected(ConnectionError):
    """The request could not reach the hub (server mode only)."""


class Client:
    """One request path to a hub, whatever carries it.

    A transport implements ``_send`` (deliver one request) and feeds every frame it
    receives to ``on_frame``: an ack settles the request that carries its id, a
    batch of events goes to its chat's handler.
    """

    mode: ClassVar[Literal["local", "server"]]

    def __init__(self, thread_name: str, kernel_id: str) -> None:
        self.kernel_id = kernel_id
        self.thread = LoopThread(thread_name)
        self._acks: dict[int, asyncio.Future[Frame]] = {}
        self._handlers: dict[str, FrameHandler] = {}
        self._ids = itertools.count(1)

    async def _send(self, message: Frame) -> None:
        raise NotImplementedError

    async def _send_as(self, message: Frame, by: str | None) -> None:
        """``_send``, for a request made by ``by`` (what local mode calls the page's user;
        the server knows who sends what itself)."""
        await self._send(message)

    def request(self, message: Mapping[str, Any], by: str | None = None) -> Future[Frame]:
        """Send one request (from any thread); its ack, naming the caller's own id."""
        return self.thread.submit(self._call(message, by))

    async def _call(self, message: Mapping[str, Any], by: str | None = None) -> Frame:
        own_id = message.get("id")
        number = next(self._ids)
        future: asyncio.Future[Frame] = asyncio.get_running_loop().create_future()
        self._acks[number] = future
        try:
            await self._send_as({**message, "id": number}, by)
            frame = await future
        except Disconnected as exc:
            frame = error_ack(None, "INTERNAL", str(exc))
        finally:
            self._acks.pop(number, None)
        return {**frame, "ack": own_id}

    def on_frame(self, frame: Frame) -> None:
        """Every frame from the hub, on the loop thread."""
        if "ack" in frame:
            number = frame["ack"]
            future = self._acks.get(number) if isinstance(number, int) else None
            if future is not None and not future.done():
                future.set_result(frame)
            elif frame.get("error"):
                log.warning(
                    "acp_notebook: a request was refused: %s %s",
                    frame["error"],
                    frame.get("detail", ""),
                )
            return
        chat_id = frame.get("chatId")
        # A chat id that is not a string (unhashable) names no chat: the frame is dropped.
        handler = self._handlers.get(chat_id) if isinstance(chat_id, str) else None
        if handler is None:
            return
        try:
            handler(frame)
        except Exception:  # one broken chat must not end the connection every chat shares
            log.exception("acp_notebook: a chat failed to take a frame")

    def subscribe(self, chat_id: str, handler: FrameHandler) -> Future[None]:
        """Deliver the chat's frames to ``handler``, the first one a reset (the resync)."""

        async def run() -> None:
            self._handlers[chat_id] = handler
            ack = await self._call({"type": "chat:subscribe", "chatId": chat_id})
            if ack.get("error"):
                self._handlers.pop(chat_id, None)
                raise error_for(ack)

        return self.thread.submit(run())

    def close_chat(self, chat_id: str) -> Future[None]:
        async def run() -> None:
            self._handlers.pop(chat_id, None)
            await self._call({"type": "chat:close", "chatId": chat_id})

        return self.thread.submit(run())


class LocalClient(Client):
    """Local mode: the hub lives in this process, on its own loop thread."""

    mode = "local"

    def __init__(self, config: HubConfig = HubConfig()) -> None:
        from ..notebook_tools.local_side import LocalBackend
        from ..notebook_tools.mcp_endpoint import ToolHost
        from ..notebook_tools.text_files import DiskFiles

        super().__init__("acp-notebook-hub", "")  # no kernel id: the hub is in this process
        # The notebook tools of local mode: served from this process, on the hub's loop.
        self.tools = ToolHost()
        backend = LocalBackend()
        tools = functools.partial(self.tools.add, backend)
        # What an agent reads and writes through the client: files under its chat's
        # directory (by default the kernel's).
        self.hub = Hub(
            config,
            name="local",
            notebook_tools=tools,
            kernel_query=backend.kernel,
            text_files=DiskFiles,
        )
        self._subs: dict[str, Subscription] = {}
        atexit.register(self.shutdown)

    async def _send_as(self, message: Frame, by: str | None) -> None:
        # The person at the notebook is this kernel's user: local requests are trusted.
        ack = await self.hub.handle(message, trusted=True, follow=self._follow, name=by)
        self.on_frame(ack)

    def _follow(self, sub: Subscription) -> None:
        replace_subscription(self._subs, sub)
        self.thread.loop.create_task(self._pump(sub))

    async def _pump(self, sub: Subscription) -> None:
        while (frame := await sub.next_frame()) is not None:
            self.on_frame(frame)

    def shutdown(self) -> None:
        """End every agent process; called at interpreter exit."""
        if self.thread.loop.is_closed():
            return
        with contextlib.suppress(Exception):  # at exit, nothing is left to report to
            self.thread.submit(self.hub.close()).result(timeout=10)
            self.thread.submit(self.tools.close()).result(timeout=10)


_local: LocalClient | None = None
_lock = threading.Lock()


def local_client() -> LocalClient:
    """The process-wide local hub, started on first use."""
    global _local
    with _lock:
        if _local is None:
            _local = LocalClient()
        return _local
