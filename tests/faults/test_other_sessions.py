"""Other people's sessions and a file's say on Continue (issue 27, items 1 and 2).

Two named users on one server (an identity provider of the test's own), with and
without JupyterHub's variables. A second user's listing of the first user's kernel
showed the first prompt and the session id, and a POST with that ``loadSessionId``
continued the conversation for them; a saved chat's ``bypassPermissions`` mode was set
on Continue; ``../../`` and ``--dangerously-skip-permissions`` ids reached the agent.

The server fixtures are ``tests/server``'s (imported, not copied).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest
from jupyter_server.serverapp import ServerApp
from tornado.httpclient import HTTPClientError

from acp_notebook.bridge.hub import Hub
from acp_notebook.server.app import AcpNotebookApp
from tests.server.conftest import *  # noqa: F403  (pytest-jupyter's and tests/server's fixtures)
from tests.support.server_peers import DEMO, OPEN, Peer, TwoUsers, chat_of, run_as

# Alice is the server's token; bob is the other identity TwoUsers knows.
pytestmark = pytest.mark.acp_config(ServerApp={"identity_provider_class": TwoUsers})
BOB = {"Authorization": "token bob"}
HUB_VARIANTS = ["no JupyterHub", "JupyterHub user alice"]


@pytest.fixture(autouse=True)
def fast_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in DEMO.items():  # agents the server starts get its environment
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)


@pytest.fixture
def alice_token(jp_serverapp: ServerApp) -> str:
    token: str = jp_serverapp.identity_provider.token
    return token


def chats_api(jp_fetch: Any, **kwargs: Any) -> Any:
    return jp_fetch("acp-notebook", "api", "chats", **kwargs)


async def listing(jp_fetch: Any, kernel_id: str, **kwargs: Any) -> dict[str, Any]:
    reply = await chats_api(jp_fetch, params={"kernel": kernel_id}, **kwargs)
    return {c["chatId"]: c for c in json.loads(reply.body)["chats"]}


async def post(jp_fetch: Any, body: dict[str, Any], **kwargs: Any) -> tuple[int, str]:
    """The status and body (the refusal's message) of a POST of ``body``."""
    try:
        reply = await chats_api(jp_fetch, method="POST", body=json.dumps(body), **kwargs)
    except HTTPClientError as exc:
        assert exc.response is not None
        return exc.code, json.loads(exc.response.body)["message"]
    return reply.code, reply.body.decode()


async def titled(jp_fetch: Any, kernel_id: str, chat_id: str) -> dict[str, Any]:
    """The owner's listing entry of ``chat_id`` once its first prompt is its title."""
    for _ in range(300):
        entry = (await listing(jp_fetch, kernel_id))[chat_id]
        if entry["title"] is not None and entry["sessionId"] is not None:
            return entry
        await asyncio.sleep(0.1)
    raise AssertionError(f"chat {chat_id} got no title")


async def alices_chat(ws_url: Any, token: str, kernel_id: str, prompt: str, more: str = "") -> str:
    """The id of a chat alice's cell opens (``more``: ``Chat``'s further keywords, as
    text) and prompts with ``prompt``."""
    code = OPEN.format(name="ours" if more else "mine", share=more, prompt=prompt)
    return chat_of(await run_as(ws_url, token, kernel_id, code))


async def ready_session(hub: Hub, chat_id: str) -> tuple[str, str]:
    """The chat's session id and directory, once its agent opened the session."""
    chat = hub.chats[chat_id]
    await chat.start_task
    assert chat.session.session_id is not None
    return chat.session.session_id, chat.session.cwd


@dataclass
class Session:
    kernel_id: str
    hub: Hub
    session_id: str
    cwd: str


@pytest.fixture
async def alices_session(
    start_kernel: Any, ws_url: Any, alice_token: str, extension: AcpNotebookApp, jp_root_dir: Any
) -> Session:
    """A session a chat of alice's started, in the server's root (where a page's Continue
    may start it)."""
    kernel_id = await start_kernel()
    hub = extension.hubs.attach(kernel_id)
    cwd = f", cwd={str(jp_root_dir)!r}"
    chat_id = await alices_chat(ws_url, alice_token, kernel_id, "hi", cwd)
    return Session(kernel_id, hub, *await ready_session(hub, chat_id))


@pytest.mark.fault("a second user lists the first user's chats: first prompt and session id")
async def test_another_users_chats_are_listed_without_their_content(
    start_kernel: Any, ws_url: Any, jp_fetch: Any, alice_token: str
) -> None:
    kernel_id = await start_kernel()
    mine = await alices_chat(ws_url, alice_token, kernel_id, "my plan")
    ours = await alices_chat(ws_url, alice_token, kernel_id, "our plan", ', share="anyone"')
    own = await titled(jp_fetch, kernel_id, mine)
    assert own["title"] == "my plan" and own["mine"] and own["mayAct"]
    await titled(jp_fetch, kernel_id, ours)

    seen = await listing(jp_fetch, kernel_id, headers=BOB)
    # Who has it and that it runs, never what it says nor how to continue it.
    assert seen[mine]["owner"] == "alice" and not seen[mine]["mayAct"]
    assert seen[mine]["title"] is None and seen[mine]["sessionId"] is None
    assert "my plan" not in json.dumps(seen)
    # Shared with anyone: its readers may act, and see it all.
    assert seen[ours]["title"] == "our plan" and seen[ours]["sessionId"] is not None


@pytest.mark.fault("a second user continues the first user's session by its id ({where})")
@pytest.mark.parametrize("where", HUB_VARIANTS)
async def test_another_users_session_is_not_continued(
    jp_fetch: Any, alices_session: Session, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    if where != "no JupyterHub":
        monkeypatch.setenv("JUPYTERHUB_USER", "alice")  # alice's single-user server
    hub, session_id, cwd = alices_session.hub, alices_session.session_id, alices_session.cwd
    kernel_id = alices_session.kernel_id
    body = {"kernel": kernel_id, "agent": "demo", "cwd": cwd, "loadSessionId": session_id}

    before = set(hub.chats)
    code, message = await post(jp_fetch, body, headers=BOB)
    assert code == 403, message
    assert message == (
        f"session {session_id!r} was started by another user: only they can continue it"
    )
    assert set(hub.chats) == before  # no agent started for bob

    # A session this server did not see started (as after a restart): only the person
    # whose account the server runs as (JupyterHub's user) may continue it.
    earlier = await hub.open_chat("demo", cwd=cwd)
    unseen, _ = await ready_session(hub, earlier)
    await hub.close_chat(earlier)
    code, message = await post(jp_fetch, {**body, "loadSessionId": unseen}, headers=BOB)
    assert code == 403 and "was not started by you" in message, message
    code, message = await post(jp_fetch, {**body, "loadSessionId": unseen})
    if where == "no JupyterHub":
        assert code == 403 and "was not started by you" in message, message
    else:
        assert code == 201, message

    # The owner continues hers: the chat that has it open (one live chat per session).
    code, message = await post(jp_fetch, body)
    assert code == 200, message
    assert hub.chats[json.loads(message)["chatId"]].session.session_id == session_id


@pytest.mark.fault("Continue with the saved session id {session_id!r}")
@pytest.mark.parametrize(
    "session_id", ["../../../../etc/passwd", "--dangerously-skip-permissions", "C:\\x", "s/1"]
)
async def test_option_and_path_like_session_ids_never_reach_an_agent(
    start_kernel: Any,
    kernel_socket: Any,
    jp_fetch: Any,
    extension: AcpNotebookApp,
    session_id: str,
) -> None:
    kernel_id = await start_kernel()
    code, message = await post(
        jp_fetch, {"kernel": kernel_id, "agent": "demo", "loadSessionId": session_id}
    )
    assert code == 400 and message.startswith("loadSessionId: "), message
    assert "not starting with '-'" in message
    kernel: Peer = await kernel_socket(kernel_id)
    ack = await kernel.request(
        {"type": "chat:open", "agent": "demo", "env": DEMO, "loadSessionId": session_id}
    )
    assert ack["error"] == "INVALID" and "loadSessionId" in ack["detail"], ack
    kernel.close()
    hub = extension.hubs.get(kernel_id)
    assert hub is None or not hub.chats


@pytest.mark.fault("Continue of a saved chat whose mode is bypassPermissions")
async def test_continue_never_takes_a_mode_from_the_page(
    jp_fetch: Any, alices_session: Session
) -> None:
    hub, session_id, cwd = alices_session.hub, alices_session.session_id, alices_session.cwd
    kernel_id = alices_session.kernel_id
    # Closed, so that Continue opens a chat of its own (a live one would be handed back).
    for chat_id in list(hub.chats):
        await hub.close_chat(chat_id)
    for extra in ({"loadSessionId": session_id}, {}):
        body = {"kernel": kernel_id, "agent": "demo", "cwd": cwd, "mode": "bypassPermissions"}
        code, reply = await post(jp_fetch, {**body, **extra})
        assert code == 201, reply
        chat = hub.chats[json.loads(reply)["chatId"]]
        await chat.start_task
        # The agent's default (the demo's: none set), whatever the page said.
        assert chat.session.spec.mode is None
        (ready,) = [
            e
            for e in chat.session.resync()
            if e["kind"] == "agent_status" and e.get("status") == "ready"
        ]
        assert ready["modes"]["currentModeId"] == "default", ready
