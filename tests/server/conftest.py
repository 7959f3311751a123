"""A real Jupyter server with the extension, real kernels, the demo agent.

pytest-jupyter's fixtures are imported here (not through the root ``pytest_plugins``)
so that its autouse fixtures stay out of the other tests; its event loop is the one
pytest-asyncio runs these tests on.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import AsyncKernelManager, start_new_async_kernel
from jupyter_server.serverapp import ServerApp
from pytest_jupyter.jupyter_server import *  # noqa: F403
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect
from traitlets.config import Config

from acp_notebook.server.app import AcpNotebookApp
from acp_notebook.wire.kernel_auth import SECRET_ENV, URL_ENV, auth_headers
from tests.support import collaboration
from tests.support.frontend import Cells, Frontend, local_env
from tests.support.server_peers import Peer, ServerKernels


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "acp_config(**traits): AcpNotebookApp/ServerApp config")
    config.addinivalue_line("markers", "rtc: real-time collaboration on (jupyter_server_ydoc)")


@pytest.fixture
async def jp_asyncio_loop() -> asyncio.AbstractEventLoop:
    # The server runs on the loop the tests run on (pytest-asyncio's).
    return asyncio.get_running_loop()


@pytest.fixture
def jp_server_config(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Config:
    # What the extension exports is undone after each test (monkeypatch restores it).
    monkeypatch.delenv(URL_ENV, raising=False)
    monkeypatch.delenv(SECRET_ENV, raising=False)
    rtc = request.node.get_closest_marker("rtc") is not None
    if rtc:
        # A room the server opens itself keeps its history in the working directory
        # (jupyter_server_ydoc's get_document does not pass the store's configuration).
        monkeypatch.chdir(tmp_path)
    extensions = {"acp_notebook": True, **collaboration.server_extensions(rtc)}
    config: dict[str, Any] = {
        "ServerApp": {"jpserver_extensions": extensions},
        "AcpNotebookApp": {"answer_timeout": 30.0},
        # The shared documents' history (of the rooms a page opens), out of the checkout.
        "SQLiteYStore": {"db_path": str(tmp_path / "ystore.db")},
    }
    marker = request.node.get_closest_marker("acp_config")
    for section, traits in (marker.kwargs if marker else {}).items():
        config.setdefault(section, {}).update(traits)
    return Config(config)


def kernel_key(serverapp: ServerApp, kernel_id: str) -> bytes:
    """What the kernel proves its id with: the key the server issued as it started it."""
    key = serverapp.web_app.settings["acp_notebook"].kernel_keys.key(kernel_id)
    assert key is not None
    return bytes(key)


@pytest.fixture
def extension(jp_serverapp: ServerApp) -> AcpNotebookApp:
    app = jp_serverapp.web_app.settings["acp_notebook"]
    assert isinstance(app, AcpNotebookApp)
    return app


@pytest.fixture
def kernels(jp_fetch: Any, extension: AcpNotebookApp) -> ServerKernels:
    return ServerKernels(jp_fetch, extension)


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
        key = kernel_key(jp_serverapp, kernel_id)
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


@pytest.fixture
async def local_frontend() -> AsyncIterator[Frontend]:
    """A kernel no Jupyter server started (local mode), as nbval or VS Code runs one."""
    manager: AsyncKernelManager
    env = {**local_env(), "ACP_DEMO_DELAY": "0"}
    manager, client = await start_new_async_kernel(kernel_name="python3", env=env)
    frontend = Frontend(client)
    yield frontend
    await frontend.stop()
    await manager.shutdown_kernel(now=True)
