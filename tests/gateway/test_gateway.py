"""Kernels behind Jupyter Enterprise Gateway 3.3 (issue 26, items 4 and 5).

One gateway (its own environment, kernels as local processes) and one JupyterLab server
pointed at it (``--gateway-url``) for the module. The kernels are driven as a notebook
page drives them, through the Lab server's kernel WebSocket (from Python, and once from
JupyterLab in Chromium), and the chats through the extension's browser socket and REST
API.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from acp_notebook.server.identity import TOKEN_HOLDERS
from tests.support.demo_answers import demo_answer
from tests.support.frontend import Cells
from tests.support.gateway import KERNEL_USERNAME, ChannelsClient, Gateway, start_gateway
from tests.support.lab import (
    JupyterServer,
    agent_text,
    chat,
    open_notebook,
    question_card,
    run_cell,
    start_server,
    unique,
    write_notebook,
)
from tests.support.server_peers import Peer

ANSWER = {"question_0": "blue", "confirm": True, "count": 4}
# A demo chat, owned by who runs the cell (noted by the Lab server's gateway connection).
OPEN_CHAT = """
import json, time
from acp_notebook import Chat
chat = Chat("demo", env={"ACP_DEMO_DELAY": "0"})
while chat.status == "starting":
    time.sleep(0.02)
print("chat:" + json.dumps({"chat": chat.chat_id, "kernel": chat.kernel_id,
    "mode": chat.mode, "why": chat.local_reason}), flush=True)
"""


@dataclass
class Remote:
    gateway: Gateway
    lab: JupyterServer


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Remote]:
    base = tmp_path_factory.mktemp("gateway")
    gateway = start_gateway(base / "gateway")
    try:
        lab = start_server(
            base / "lab",
            extra_args=[f"--gateway-url={gateway.url}", "--GatewayClient.request_timeout=60"],
            # EG runs no kernel as root; the gateway client sends KERNEL_* on to it.
            extra_env={"KERNEL_USERNAME": KERNEL_USERNAME},
        )
    except BaseException:
        gateway.stop()
        raise
    yield Remote(gateway, lab)
    lab.stop()
    gateway.stop()


class Login:
    """One browser's login: the token once, then the server's cookies (one identity; the
    token alone is a new anonymous user at each request)."""

    def __init__(self, lab: JupyterServer) -> None:
        self.lab = lab
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.opener.open(lab.url("lab"), timeout=30).close()
        self.name = self.call("api/me")["identity"]["display_name"]

    def _cookies(self) -> dict[str, str]:
        return {c.name: c.value for c in self.jar if c.value is not None}

    def headers(self) -> dict[str, str]:
        cookies = self._cookies()
        header = "; ".join(f"{k}={v}" for k, v in cookies.items())
        return {"Cookie": header, "X-XSRFToken": cookies.get("_xsrf", "")}

    def call(self, path: str, body: Any = None, method: str | None = None) -> Any:
        url = f"http://127.0.0.1:{self.lab.port}/{path}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method, headers=self.headers())
        with self.opener.open(request, timeout=60) as response:
            text = response.read()
        return json.loads(text) if text else None

    async def browser(self, kernel_id: str, chat_id: str) -> Peer:
        url = (
            f"ws://127.0.0.1:{self.lab.port}/acp-notebook/ws/browser"
            f"?kernel={kernel_id}&chat={chat_id}"
        )
        return Peer(await websocket_connect(HTTPRequest(url, headers=self.headers())))


async def call(login: Login, path: str, body: Any = None, method: str | None = None) -> Any:
    return await asyncio.to_thread(login.call, path, body, method)


@dataclass
class Kernel:
    kernel_id: str
    cells: Cells
    login: Login  # who runs its cells


async def start_kernel(remote: Remote) -> Kernel:
    """A new kernel on the gateway, started through the Lab server, and its cells."""
    login = Login(remote.lab)
    started = await call(login, "api/kernels", {"name": "python3"})
    channels = await ChannelsClient.open(remote.lab.port, started["id"], login.headers())
    return Kernel(started["id"], Cells(channels), login)


@pytest.fixture
async def kernel(remote: Remote) -> AsyncIterator[Kernel]:
    kernel = await start_kernel(remote)
    yield kernel
    await kernel.cells.stop()
    with contextlib.suppress(urllib.error.HTTPError):  # gone with a gateway restart
        await call(kernel.login, f"api/kernels/{kernel.kernel_id}", method="DELETE")


async def open_chat(kernel: Kernel) -> tuple[str, str]:
    """Runs the cell that opens a shared demo chat; (its cell's msg_id, its chat id)."""
    cell = kernel.cells.execute(OPEN_CHAT)
    seen = await kernel.cells.line(cell, "chat:", timeout=60)
    assert seen["mode"] == "server" and seen["why"] == "", seen
    assert seen["kernel"] == kernel.kernel_id
    await kernel.cells.finished(cell)
    return cell, str(seen["chat"])


async def test_a_card_is_answered_while_a_cell_sleeps(remote: Remote, kernel: Kernel) -> None:
    _, chat_id = await open_chat(kernel)
    login = kernel.login
    listed = await call(login, f"acp-notebook/api/chats?kernel={kernel.kernel_id}")
    owners = [(c["chatId"], c["owner"], c["ownerName"]) for c in listed["chats"]]
    assert owners == [(chat_id, TOKEN_HOLDERS, login.name)]  # the token's holders

    blocking = kernel.cells.execute(
        'turn = chat.send_prompt("ask-user")\nprint("turn:" + str(turn), flush=True)\n'
        "time.sleep(30)\n"
    )
    assert await kernel.cells.line(blocking, "turn:") == 1
    tab = await login.browser(kernel.kernel_id, chat_id)
    card = await tab.card(chat_id)
    ack = await tab.respond(chat_id, card, action="accept", values=ANSWER)
    assert ack["accepted"], ack
    ended = await tab.event(chat_id, "turn_ended", turn=1, timeout=30)
    assert ended["stopReason"] == "end_turn"
    assert demo_answer(tab.text(chat_id)) == {"action": "accept", "content": ANSWER}
    assert kernel.cells.busy(blocking)  # answered through the server, not the kernel
    tab.close()
    await call(login, f"api/kernels/{kernel.kernel_id}/interrupt", {})
    await kernel.cells.finished(blocking)


async def test_a_chat_from_the_panel_uses_the_notebook_tools(
    remote: Remote, kernel: Kernel
) -> None:
    await kernel.cells.run("through_the_gateway = [1, 2, 3]\nimport time", timeout=60)
    # The kernel's side of the tools answers over the kernel's socket: one Chat opens it.
    await open_chat(kernel)
    login = kernel.login
    opened = await call(
        login, "acp-notebook/api/chats", {"kernel": kernel.kernel_id, "agent": "demo"}
    )
    chat_id = opened["chatId"]
    tab = await login.browser(kernel.kernel_id, chat_id)
    await tab.resync(chat_id)
    ack = await tab.prompt(chat_id, "notebook")
    assert ack["accepted"], ack
    asked = await tab.event(chat_id, "permission_request", timeout=60)
    assert (await tab.respond(chat_id, asked, optionId="allow-once"))["accepted"]
    ended = await tab.event(chat_id, "turn_ended", timeout=60)
    text = tab.text(chat_id)
    assert ended["stopReason"] == "end_turn", text
    assert "Error executing tool" not in text
    # list_variables answered from the kernel (over its socket to the server).
    assert "through_the_gateway: list, len 3" in json.dumps(tab.events[chat_id]), text
    assert "and ran `" in text, text
    tab.close()


async def test_a_kernel_restart_keeps_its_chats(remote: Remote, kernel: Kernel) -> None:
    _, chat_id = await open_chat(kernel)
    login = kernel.login
    await call(login, f"api/kernels/{kernel.kernel_id}/restart", {})
    # The restarted kernel (the same key, from the same environment) reaches server mode.
    _, second = await open_chat(kernel)
    listed = await call(login, f"acp-notebook/api/chats?kernel={kernel.kernel_id}")
    assert {c["chatId"] for c in listed["chats"]} == {chat_id, second}
    # The chat from before the restart still answers.
    tab = await login.browser(kernel.kernel_id, chat_id)
    await tab.resync(chat_id)
    turn = (await tab.prompt(chat_id, "after the restart"))["turn"]
    ended = await tab.event(chat_id, "turn_ended", turn=turn, timeout=30)
    assert ended["stopReason"] == "end_turn"
    tab.close()


async def test_a_gateway_restart(remote: Remote, kernel: Kernel) -> None:
    """EG 3.3 stopped (SIGTERM) shuts down every kernel it runs: their chats end with
    them, as with any kernel shutdown. The Lab server and its extension stay; kernels
    started once the gateway is back reach server mode."""
    _, chat_id = await open_chat(kernel)
    login = kernel.login
    tab = await login.browser(kernel.kernel_id, chat_id)
    await tab.resync(chat_id)
    await asyncio.to_thread(remote.gateway.restart)
    assert kernel.kernel_id not in remote.gateway.kernel_ids()
    # The Lab server learns it when it lists its kernels (JupyterLab polls that).
    await call(login, "api/kernels")
    code, _ = await tab.wait_closed(timeout=30)
    assert code is not None
    listed = await call(login, "api/kernels")
    assert kernel.kernel_id not in [k["id"] for k in listed]

    later = await start_kernel(remote)
    try:
        _, again = await open_chat(later)
        chats = await call(login, f"acp-notebook/api/chats?kernel={later.kernel_id}")
        assert [c["chatId"] for c in chats["chats"]] == [again]
    finally:
        await later.cells.stop()
        await call(login, f"api/kernels/{later.kernel_id}", method="DELETE")


def test_a_notebook_page_reaches_its_kernel_and_answers_a_card(remote: Remote, page: Page) -> None:
    """JupyterLab in Chromium: the kernel WebSocket's handshake succeeds (the extension's
    gateway connection speaks v1 with the page), the chat runs in server mode, and a card
    is answered while a cell sleeps."""
    lab = remote.lab
    first = 'from acp_notebook import Chat\nchat = Chat("demo")\nawait chat.ready()\nprint(chat.mode)\nchat'
    filename = write_notebook(
        lab,
        unique("gateway"),
        [first, 'turn_number = chat.send_prompt("ask-user")', "import time\ntime.sleep(30)"],
    )
    open_notebook(page, lab, filename)
    expect(run_cell(page, 0).locator(".jp-OutputArea-output").first).to_have_text("server")
    expect(chat(page).locator(".acpnb-header-note")).to_be_hidden()
    run_cell(page, 1)
    card = question_card(page)
    expect(card).to_be_visible()
    busy = run_cell(page, 2, wait=False).locator(".jp-InputPrompt")
    expect(busy).to_have_text("[*]:")
    card.get_by_role("radio", name="Blue").check()
    card.get_by_role("button", name="Answer").click()
    expect(card).to_have_count(0)
    expect(agent_text(page)).to_contain_text('"question_0":"blue"')
    expect(busy).to_have_text("[*]:")


async def test_the_v1_protocol_through_the_gateway(remote: Remote, kernel: Kernel) -> None:
    """What JupyterLab speaks (v1, binary frames) is translated both ways, buffers too."""
    v1 = await ChannelsClient.open(remote.lab.port, kernel.kernel_id, kernel.login.headers(), True)
    assert v1.v1
    cells = Cells(v1)
    try:
        registered = (
            "def echo(comm, opened):\n"
            "    comm.on_msg(lambda msg: print('buffers:', [bytes(b) for b in msg['buffers']]))\n"
            "get_ipython().kernel.comm_manager.register_target('echo', echo)\n"
            "print('ready')"
        )
        assert (await cells.run(registered, timeout=60)).strip() == "ready"
        comm = {"comm_id": "c1", "target_name": "echo", "data": {}}
        v1.send("comm_open", comm)
        sent = v1.send("comm_msg", {"comm_id": "c1", "data": {}}, [b"\x00\xffbin", b"two"])
        await cells.finished(sent)
        assert cells.stdout[sent].strip() == "buffers: [b'\\x00\\xffbin', b'two']"
    finally:
        await cells.stop()
