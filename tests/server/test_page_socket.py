"""The lab extension's page socket: who may open it, and an edit through it end to end
(the server asks, the page answers), with the page closing mid-request."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from jupyter_server.serverapp import ServerApp
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from acp_notebook.notebook_tools.documents import EditRefused
from acp_notebook.notebook_tools.page_document import PageDocument
from acp_notebook.server.app import AcpNotebookApp
from tests.support.page_edits import INSERT


async def open_page(ws_url: Any, headers: dict[str, str]) -> WebSocketClientConnection:
    return await websocket_connect(HTTPRequest(ws_url("acp-notebook/ws/pages"), headers=headers))


async def holding(extension: AcpNotebookApp, path: str) -> PageDocument:
    async with asyncio.timeout(10):
        while (doc := await extension.pages.open(path, "demo")) is None:
            await asyncio.sleep(0.01)
    return doc


@pytest.fixture
def token(jp_serverapp: ServerApp) -> dict[str, str]:
    return {"Authorization": f"token {jp_serverapp.identity_provider.token}"}


async def test_page_socket_needs_a_login_and_the_same_origin(
    http_server_client: Any, jp_fetch: Any, jp_http_port: int, ws_url: Any
) -> None:
    for headers in ({}, {"Authorization": "token wrong"}):
        with pytest.raises(HTTPClientError) as failure:
            await open_page(ws_url, headers)
        assert failure.value.code == 403
    cookie = (await jp_fetch("api", "status")).headers["Set-Cookie"].split(";", 1)[0]
    with pytest.raises(HTTPClientError) as failure:
        await open_page(ws_url, {"Cookie": cookie, "Origin": "http://evil.example"})
    assert failure.value.code == 403
    same = {"Cookie": cookie, "Origin": f"http://127.0.0.1:{jp_http_port}"}
    (await open_page(ws_url, same)).close()


async def test_an_edit_goes_to_the_page_and_its_answer_comes_back(
    http_server_client: Any, ws_url: Any, extension: AcpNotebookApp, token: dict[str, str]
) -> None:
    page = await open_page(ws_url, token)
    notebooks = [{"path": "a.ipynb", "kernelId": "k1"}]
    await page.write_message(json.dumps({"type": "page:notebooks", "notebooks": notebooks}))
    doc = await holding(extension, "a.ipynb")
    applying = asyncio.ensure_future(doc.apply(INSERT))
    request = json.loads(str(await page.read_message()))
    assert request["op"] == "apply" and request["edit"] == INSERT
    reply = {"type": "page:reply", "id": request["id"], "result": {"cellId": "n1", "index": 0}}
    await page.write_message(json.dumps(reply))
    assert await applying == {"cellId": "n1", "index": 0}
    # A malformed frame is dropped (the socket stays); the page closing ends what waits.
    await page.write_message("{not json")
    applying = asyncio.ensure_future(doc.apply(INSERT))
    assert json.loads(str(await page.read_message()))["op"] == "apply"
    page.close()
    with pytest.raises(EditRefused, match="page closed"):
        await applying
    assert await extension.pages.open("a.ipynb", "demo") is None
