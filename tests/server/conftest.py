"""A real Jupyter server with the extension, real kernels, the demo agent.

pytest-jupyter's fixtures are imported here (not through the root ``pytest_plugins``)
so that its autouse fixtures stay out of the other tests; its event loop is the one
pytest-asyncio runs these tests on.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import pytest
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.multikernelmanager import AsyncMultiKernelManager
from jupyter_server.serverapp import ServerApp
from pytest_jupyter.jupyter_server import *  # noqa: F403
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect
from traitlets.config import Config

from acp_notebook.server.app import AcpNotebookApp
from acp_notebook.wire.kernel_auth import SECRET_ENV, URL_ENV, auth_headers

T = TypeVar("T")
Event = dict[str, Any]
DEMO = {"ACP_DEMO_DELAY": "0"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "acp_config(**traits): AcpNotebookApp/ServerApp config")


@pytest.fixture
async def jp_asyncio_loop() -> asyncio.AbstractEventLoop:
    # The server runs on the loop the tests run on (pytest-asyncio's).
    return asyncio.get_running_loop()


@pytest.fixture
def jp_server_config(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Config:
    # What the extension exports is undone after each test (monkeypatch restores it).
    monkeypatch.delenv(URL_ENV, raising=False)
    monkeypatch.delenv(SECRET_ENV, raising=False)
    config: dict[str, Any] = {
        "ServerApp": {"jpserver_extensions": {"acp_notebook": True}},
        "AcpNotebookApp": {"answer_timeout": 30.0},
    }
    marker = request.node.get_closest_marker("acp_config")
    for section, traits in (marker.kwargs if marker else {}).items():
        config.setdefault(section, {}).update(traits)
    return Config(config)


@pytest.fixture
def extension(jp_serverapp: ServerApp) -> AcpNotebookApp:
    app = jp_serverapp.web_app.settings["acp_notebook"]
    assert isinstance(app, AcpNotebookApp)
    return app


async def until(check: Callable[[], T | None], changed: asyncio.Event, timeout: float) -> T:
    """Wait for ``check()`` to give something, re-checking whenever ``changed`` is set."""
    async with asyncio.timeout(timeout):
        while True:
            changed.clear()
            found = check()
            if found:
                return found
            await changed.wait()


class Peer:
    """A client of one of the extension's sockets: acks by id, each chat's events in order."""

    def __init__(self, ws: WebSocketClientConnection) -> None:
        self.ws = ws
        self.acks: dict[int, Event] = {}
        self.named: dict[str, Event] = {}  # acks of requests with a string id
        self.refusals: list[Event] = []  # acks of requests without a usable id
        self.events: dict[str, list[Event]] = {}
        self.resets = 0
        self.closed: tuple[int | None, str | None] | None = None
        self._changed = asyncio.Event()
        self._ids = itertools.count(1)
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        while (raw := await self.ws.read_message()) is not None:
            frame = json.loads(raw)
            if "ack" in frame:
                if isinstance(frame["ack"], int):
                    self.acks[frame["ack"]] = frame
                elif isinstance(frame["ack"], str):
                    self.named[frame["ack"]] = frame
                else:
                    self.refusals.append(frame)
            else:
                if frame.get("reset"):
                    self.resets += 1
                    self.events[frame["chatId"]] = []
                self.events.setdefault(frame["chatId"], []).extend(frame["events"])
            self._changed.set()
        self.closed = (self.ws.close_code, self.ws.close_reason)
        self._changed.set()

    def send_raw(self, data: str) -> None:
        self.ws.write_message(data)

    async def request(self, message: dict[str, Any], timeout: float = 15) -> Event:
        number = next(self._ids)
        self.ws.write_message(json.dumps({**message, "id": number}))
        return await until(lambda: self.acks.get(number), self._changed, timeout)

    async def resync(self, chat_id: str) -> Event:
        """``chat:resync``; what this peer has seen after it joins it, by seq as the widget
        does (a live run of chunks can start inside one of the history's runs, so an exact
        seq match would keep its text twice)."""
        ack = await self.request({"type": "chat:resync", "chatId": chat_id})
        assert ack.get("accepted") and ack["reset"], ack
        last = max((e["seq"] for e in ack["events"]), default=-1)
        later = [e for e in self.events.get(chat_id, []) if e["seq"] > last]
        self.events[chat_id] = ack["events"] + later
        return ack

    async def refusal(self, timeout: float = 15) -> Event:
        """The next ack of a request that had no id (it could not be read)."""
        return await until(
            lambda: self.refusals.pop(0) if self.refusals else None, self._changed, timeout
        )

    async def card(self, chat_id: str, kind: str = "elicitation_request") -> Event:
        """Catch up on the chat (as a page that just opened) and wait for a pending card."""
        await self.resync(chat_id)
        return await self.event(chat_id, kind)

    async def event(self, chat_id: str, kind: str, timeout: float = 15, **match: Any) -> Event:
        def find() -> Event | None:
            for event in self.events.get(chat_id, []):
                if event["kind"] == kind and all(event.get(k) == v for k, v in match.items()):
                    return event
            return None

        return await until(find, self._changed, timeout)

    async def wait_closed(self, timeout: float = 15) -> tuple[int | None, str | None]:
        return await until(lambda: self.closed, self._changed, timeout)

    def text(self, chat_id: str) -> str:
        return "".join(
            e["update"]["content"].get("text", "")
            for e in self.events.get(chat_id, [])
            if e["kind"] == "update" and e["update"].get("sessionUpdate") == "agent_message_chunk"
        )

    def close(self) -> None:
        self.ws.close()


@pytest.fixture
def ws_url(jp_http_port: int, jp_base_url: str) -> Callable[..., str]:
    def make(path: str, **params: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in params.items())
        return f"ws://127.0.0.1:{jp_http_port}{jp_base_url}{path}" + (f"?{query}" if query else "")

    return make


@pytest.fixture
def browser(
    http_server_client: Any, jp_serverapp: ServerApp, ws_url: Callable[..., str]
) -> Callable[..., Any]:
    """Opens the browser socket of a chat; token auth unless headers say otherwise;
    ``params`` go in the URL's query."""
    token = jp_serverapp.identity_provider.token

    async def connect(
        kernel_id: str, chat_id: str, headers: dict[str, str] | None = None, **params: str
    ) -> Peer:
        url = ws_url("acp-notebook/ws/browser", kernel=kernel_id, chat=chat_id, **params)
        request = HTTPRequest(url, headers=headers or {"Authorization": f"token {token}"})
        return Peer(await websocket_connect(request))

    return connect


@pytest.fixture
def kernel_socket(
    http_server_client: Any, jp_serverapp: ServerApp, ws_url: Callable[..., str]
) -> Callable[..., Any]:
    """Opens the kernel socket as kernel ``kernel_id`` would (``headers`` override the proof)."""

    async def connect(kernel_id: str, headers: dict[str, str] | None = None) -> Peer:
        key = jp_serverapp.kernel_manager.get_kernel(kernel_id).session.key
        proof = auth_headers(os.environ[SECRET_ENV], key, kernel_id, time.time())
        request = HTTPRequest(
            ws_url("acp-notebook/ws/kernel"), headers={**proof, **(headers or {})}
        )
        return Peer(await websocket_connect(request))

    return connect


@pytest.fixture
def start_kernel(jp_fetch: Any) -> Callable[[], Any]:
    async def start() -> str:
        response = await jp_fetch(
            "api", "kernels", method="POST", body=json.dumps({"name": "python3"})
        )
        return str(json.loads(response.body)["id"])

    return start


class Cells:
    """Runs code in a kernel over its own channels, as a notebook frontend would."""

    def __init__(self, client: AsyncKernelClient) -> None:
        self.client = client
        self.stdout: dict[str, str] = {}
        self.errors: dict[str, str] = {}
        self.idle: set[str] = set()
        self._changed = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        while True:
            msg = await self.client.get_iopub_msg()
            parent = msg["parent_header"].get("msg_id", "")
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream" and content["name"] == "stdout":
                self.stdout[parent] = self.stdout.get(parent, "") + content["text"]
            elif kind == "error":
                self.errors[parent] = "\n".join(content["traceback"])
            elif kind == "status" and content["execution_state"] == "idle":
                self.idle.add(parent)
            self._changed.set()

    def execute(self, code: str) -> str:
        return str(self.client.execute(code))

    async def line(self, msg_id: str, prefix: str, timeout: float = 30) -> Any:
        """The JSON after ``prefix`` in a line the cell printed."""

        def find() -> Any:
            if msg_id in self.errors:
                raise AssertionError(self.errors[msg_id])
            for line in self.stdout.get(msg_id, "").splitlines():
                if line.startswith(prefix):
                    return json.loads(line[len(prefix) :])
            return None

        return await until(find, self._changed, timeout)

    async def finished(self, msg_id: str, timeout: float = 30) -> None:
        await until(lambda: msg_id in self.idle, self._changed, timeout)

    async def run(self, code: str, timeout: float = 30) -> str:
        """Run a cell to its end; its stdout. Fails on an exception in the cell."""
        msg_id = self.execute(code)
        await self.finished(msg_id, timeout)
        assert msg_id not in self.errors, self.errors[msg_id]
        return self.stdout.get(msg_id, "")

    def busy(self, msg_id: str) -> bool:
        return msg_id not in self.idle

    async def stop(self) -> None:
        self._reader.cancel()
        self.client.stop_channels()


async def local_kernel(manager: AsyncMultiKernelManager) -> tuple[str, Cells]:
    """A kernel no Jupyter server started (no extension env: its chats run in local mode)."""
    env = {k: v for k, v in os.environ.items() if k not in (URL_ENV, SECRET_ENV)}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    kernel_id = await manager.start_kernel(kernel_name="python3", env=env)
    client = manager.get_kernel(kernel_id).client()
    client.start_channels()
    await client.wait_for_ready(timeout=60)
    return kernel_id, Cells(client)


@pytest.fixture
async def cells(jp_serverapp: ServerApp) -> AsyncIterator[Callable[[str], Any]]:
    # One client per kernel, kept across restarts as a frontend does (a second client
    # of the same kernel manager shares its zmq identity and may be dropped).
    opened: dict[str, Cells] = {}

    async def open_cells(kernel_id: str) -> Cells:
        if kernel_id not in opened:
            client = jp_serverapp.kernel_manager.get_kernel(kernel_id).client()
            client.start_channels()
            await client.wait_for_ready(timeout=60)
            opened[kernel_id] = Cells(client)
        return opened[kernel_id]

    yield open_cells
    for c in opened.values():
        await c.stop()


# A cell that opens a demo chat through the extension and prints what a test needs.
OPEN_CHAT = """
import json, time
from acp_notebook.kernel.chat import Chat
chat = Chat("demo", env={"ACP_DEMO_DELAY": "0"})
assert chat.mode == "server", chat.mode
while chat.status == "starting":
    time.sleep(0.02)
print("chat:" + json.dumps({"chat": chat.chat_id, "kernel": chat.kernel_id}), flush=True)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True
