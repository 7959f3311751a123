"""Clients of the server extension: its sockets (Peer), its kernels (ServerKernels), a
second login (TwoUsers), the cell that opens a demo chat, and cells run through the
server's kernel WebSocket as a logged-in page runs them (run_as)."""

from __future__ import annotations

import asyncio
import itertools
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from jupyter_server.auth.identity import IdentityProvider, User
from tornado.httpclient import HTTPRequest
from tornado.web import RequestHandler
from tornado.websocket import WebSocketClientConnection, websocket_connect

from acp_notebook.bridge.hub import Hub
from acp_notebook.server.app import AcpNotebookApp

T = TypeVar("T")
Event = dict[str, Any]
DEMO = {"ACP_DEMO_DELAY": "0"}

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


async def kernel_chat_session(
    extension: AcpNotebookApp, kernel: Any, kernel_id: str, code: str = ""
) -> Any:
    """The server's session of the demo chat a kernel (``cells`` of ``kernel_id``) opens by
    ``OPEN_CHAT`` and then runs ``code`` on."""
    printed = await kernel.run(OPEN_CHAT + code)
    hub = extension.hubs.get(kernel_id)
    assert hub is not None
    return hub.chats[json.loads(printed.split("chat:", 1)[1])["chat"]].session


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

    async def prompt(self, chat_id: str, text: str, **extra: Any) -> Event:
        """``chat:prompt`` (``attachments=`` ride along); the ack."""
        return await self.request({"type": "chat:prompt", "chatId": chat_id, "text": text, **extra})

    async def respond(self, chat_id: str, card: Event, **answer: Any) -> Event:
        """Answers a pending card (``optionId=``/``cancel=``, or ``action=``/``values=``)."""
        kind = "permission" if card["kind"] == "permission_request" else "elicitation"
        respond = {
            "type": f"chat:{kind}.respond",
            "chatId": chat_id,
            "requestId": card["requestId"],
        }
        return await self.request({**respond, **answer})

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


@dataclass
class ServerKernels:
    """The server's kernels as a notebook page drives them (its REST API), and their hubs."""

    fetch: Any  # pytest-jupyter's jp_fetch
    extension: AcpNotebookApp

    async def restart(self, kernel_id: str) -> None:
        await self.fetch("api", "kernels", kernel_id, "restart", method="POST", body="")

    async def shut_down(self, kernel_id: str) -> None:
        await self.fetch("api", "kernels", kernel_id, method="DELETE")

    def hub(self, kernel_id: str) -> Hub | None:
        return self.extension.hubs.get(kernel_id)


class TwoUsers(IdentityProvider):
    """The server's token is alice; ``token bob`` is bob."""

    def get_user(self, handler: RequestHandler) -> User | None:
        given = handler.request.headers.get("Authorization", "").removeprefix("token ")
        return {self.token: User("alice"), "bob": User("bob")}.get(given)

    def is_token_authenticated(self, handler: RequestHandler) -> bool:
        return self.get_user(handler) is not None  # no cookies, so no XSRF to check


# A cell that opens a demo chat (named ``name``, shared if ``share`` says so) and prompts it.
OPEN = """
import json
from acp_notebook.kernel.chat import Chat
{name} = Chat("demo", env={{"ACP_DEMO_DELAY": "0"}}{share})
assert {name}.mode == "server", {name}.mode
assert await {name}.ready() == "ready"
{name}.send_prompt("{prompt}")
print("chat:" + json.dumps({name}.chat_id), flush=True)
"""


async def run_as(
    ws_url: Any,
    token: str,
    kernel_id: str,
    code: str,
    msg_id: str | None = None,
    busy: asyncio.Event | None = None,
) -> str:
    """Run ``code`` in the kernel through the server's kernel WebSocket; its stdout.
    ``busy`` is set once the kernel runs it."""
    content = {"code": code, "silent": False, "store_history": False, "allow_stdin": False}
    content.update(user_expressions={}, stop_on_error=True)
    return await send_as(ws_url, token, kernel_id, "execute_request", content, msg_id, busy)


async def click_as(ws_url: Any, token: str, kernel_id: str, comm_id: str, request: Event) -> None:
    """The widget ``comm_id``'s ``request`` from a page of ``token``'s login, through the
    server's kernel WebSocket (a page whose socket to the extension failed sends it so)."""
    content = {"comm_id": comm_id, "data": {"method": "custom", "content": request}}
    await send_as(ws_url, token, kernel_id, "comm_msg", content)


async def send_as(
    ws_url: Any,
    token: str,
    kernel_id: str,
    msg_type: str,
    content: dict[str, Any],
    msg_id: str | None = None,
    busy: asyncio.Event | None = None,
) -> str:
    """Send a shell message through the server's kernel WebSocket, logged in with ``token``;
    the stdout it makes, once the kernel is done with it."""
    url = ws_url(f"api/kernels/{kernel_id}/channels")
    ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {token}"}))
    msg_id = msg_id or uuid.uuid4().hex
    header = {
        "msg_id": msg_id,
        "msg_type": msg_type,
        "username": "whoever-the-page-says",  # not trusted: the login is
        "session": uuid.uuid4().hex,
        "version": "5.3",
    }
    ws.write_message(
        json.dumps(
            {"channel": "shell", "header": header, "parent_header": {}, "metadata": {}}
            | {"content": content}
        )
    )
    out = ""
    try:
        while (raw := await ws.read_message()) is not None:
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if kind == "stream":
                out += msg["content"]["text"]
            elif kind == "error":
                raise AssertionError("\n".join(msg["content"]["traceback"]))
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                return out
            elif kind == "status" and busy is not None:
                busy.set()
    finally:
        ws.close()
    raise AssertionError("the kernel socket closed")


def chat_of(out: str) -> str:
    return str(json.loads(out.split("chat:", 1)[1]))
