"""The REST endpoints of the Agent panel: who may use them, what they accept, what they do."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any

import pytest
from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.serverapp import ServerApp
from tornado.httpclient import HTTPClientError

from acp_notebook.server.identity import TOKEN_HOLDERS
from tests.support.server_peers import DEMO, OPEN_CHAT


@pytest.fixture(autouse=True)
def fast_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    # Agents the server starts get the server's environment.
    for name, value in DEMO.items():
        monkeypatch.setenv(name, value)


async def fails(request: Awaitable[Any]) -> tuple[int, str]:
    """The status and body of a request the server refuses."""
    with pytest.raises(HTTPClientError) as failure:
        await request
    response = failure.value.response
    body = response.body.decode() if response is not None and response.body else ""
    return failure.value.code, body


def api(jp_fetch: Any, path: str, **kwargs: Any) -> Awaitable[Any]:
    return jp_fetch("acp-notebook", "api", path, **kwargs)


def post_chat(jp_fetch: Any, body: Any, **kwargs: Any) -> Awaitable[Any]:
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return api(jp_fetch, "chats", method="POST", body=data, **kwargs)


async def test_agents_lists_every_known_name_and_the_default(jp_fetch: Any) -> None:
    listed = json.loads((await api(jp_fetch, "agents")).body)
    assert listed["default"] == "demo"
    assert {"demo", "claude-code", "codex"} <= set(listed["agents"])


@pytest.mark.acp_config(AcpNotebookApp={"allowed_agents": ["demo"], "default_agent": "demo"})
async def test_agents_follows_the_allow_list(jp_fetch: Any) -> None:
    listed = json.loads((await api(jp_fetch, "agents")).body)
    assert listed == {"agents": ["demo"], "default": "demo"}


def login_of(response: Any) -> dict[str, str]:
    """The headers of a browser holding the login cookie the response set."""
    cookies = [c.split(";", 1)[0] for c in response.headers.get_list("Set-Cookie")]
    return {"Cookie": "; ".join(cookies), "Authorization": ""}


async def test_open_a_chat_list_it_and_talk_to_it(
    jp_fetch: Any, jp_http_port: int, start_kernel: Any, browser: Any
) -> None:
    kernel_id = await start_kernel()
    params = {"kernel": kernel_id}
    empty = json.loads((await api(jp_fetch, "chats", params=params)).body)
    assert empty == {"chats": []}
    response = await post_chat(jp_fetch, {"kernel": kernel_id, "agent": "demo"})
    assert response.code == 201
    chat_id = json.loads(response.body)["chatId"]
    # The same login (a token login gets a new anonymous user per request otherwise).
    login = login_of(response)
    me = json.loads((await jp_fetch("api", "me", headers=dict(login))).body)["identity"]

    origin = {"Origin": f"http://127.0.0.1:{jp_http_port}"}
    tab = await browser(kernel_id, chat_id, headers={"Cookie": login["Cookie"], **origin})
    await tab.resync(chat_id)
    await tab.event(chat_id, "agent_status", status="ready")
    ack = await tab.request({"type": "chat:prompt", "chatId": chat_id, "text": "hello there"})
    assert ack.get("accepted"), ack
    await tab.event(chat_id, "turn_ended")
    assert "You said: hello there" in tab.text(chat_id)

    listed = json.loads((await api(jp_fetch, "chats", params=params)).body)
    assert len(listed["chats"]) == 1
    entry = listed["chats"][0]
    assert entry["chatId"] == chat_id and entry["agent"] == "demo"
    # Owned by who asked: on a plain server, every token holder (one principal), shown
    # by the asking login's name; any token holder's page may prompt it.
    assert entry["owner"] == TOKEN_HOLDERS and entry["ownerName"] == me["display_name"]
    assert entry["mayAct"] and entry["mine"] and entry["share"] is None
    assert entry["status"] == "ready" and entry["title"] == "hello there"
    assert isinstance(entry["sessionId"], str) and entry["sessionId"]
    assert entry["waiting"] is False
    said = tab.text(chat_id)
    tab.close()

    # Continuing that ACP session in a new chat replays the conversation.
    again = await post_chat(
        jp_fetch, {"kernel": kernel_id, "agent": "demo", "loadSessionId": entry["sessionId"]}
    )
    second = json.loads(again.body)["chatId"]
    tab = await browser(kernel_id, second)
    await tab.resync(second)
    ready = await tab.event(second, "agent_status", status="ready")
    assert ready["sessionId"] == entry["sessionId"]
    assert tab.text(second) == said
    tab.close()


async def test_a_chat_with_an_open_question_is_listed_as_waiting(
    jp_fetch: Any, start_kernel: Any, browser: Any
) -> None:
    kernel_id = await start_kernel()
    params = {"kernel": kernel_id}
    chat_id = json.loads((await post_chat(jp_fetch, {"kernel": kernel_id, "agent": "demo"})).body)[
        "chatId"
    ]
    tab = await browser(kernel_id, chat_id)
    await tab.resync(chat_id)
    await tab.event(chat_id, "agent_status", status="ready")
    assert (await tab.prompt(chat_id, "ask-user")).get("accepted")
    asked = await tab.event(chat_id, "elicitation_request")

    async def waiting() -> bool:
        listed = json.loads((await api(jp_fetch, "chats", params=params)).body)
        return bool(listed["chats"][0]["waiting"])

    assert await waiting()
    await tab.respond(chat_id, asked, action="decline")
    await tab.event(chat_id, "turn_ended")
    assert not await waiting()
    tab.close()


async def test_the_chat_starts_in_the_notebooks_directory(
    jp_fetch: Any, jp_serverapp: ServerApp, jp_root_dir: Any, browser: Any
) -> None:
    (jp_root_dir / "work").mkdir()
    session = await jp_fetch(
        "api",
        "sessions",
        method="POST",
        body=json.dumps(
            {"path": "work/n.ipynb", "type": "notebook", "kernel": {"name": "python3"}}
        ),
    )
    kernel_id = json.loads(session.body)["kernel"]["id"]
    chat_id = json.loads((await post_chat(jp_fetch, {"kernel": kernel_id, "agent": "demo"})).body)[
        "chatId"
    ]
    hub = jp_serverapp.web_app.settings["acp_notebook"].hubs.get(kernel_id)
    assert hub.chats[chat_id].session.cwd == str((jp_root_dir / "work").resolve())
    # An explicit cwd is a directory under the server's root, never outside it.
    code, body = await fails(
        post_chat(jp_fetch, {"kernel": kernel_id, "agent": "demo", "cwd": "../.."})
    )
    assert code == 400 and "cwd" in body
    # A saved chat records its cwd as an absolute path: one under the root is that folder.
    absolute = str((jp_root_dir / "work").resolve())
    reply = await post_chat(jp_fetch, {"kernel": kernel_id, "agent": "demo", "cwd": absolute})
    assert hub.chats[json.loads(reply.body)["chatId"]].session.cwd == absolute
    code, body = await fails(
        post_chat(jp_fetch, {"kernel": kernel_id, "agent": "demo", "cwd": "/etc"})
    )
    assert code == 400 and "cwd" in body
    await hub.close()


@pytest.mark.acp_config(AcpNotebookApp={"allowed_agents": ["claude-code"]})
async def test_agents_outside_the_allow_list_are_forbidden(
    jp_fetch: Any, start_kernel: Any
) -> None:
    kernel_id = await start_kernel()
    code, body = await fails(post_chat(jp_fetch, {"kernel": kernel_id, "agent": "demo"}))
    assert code == 403 and "not allowed" in body


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("{", "not a JSON object"),
        ("[" * 100 + "]" * 100, "not a JSON object"),
        (json.dumps({"kernel": "K", "agent": "x" * 20_000}), "not a JSON object"),
        ("[]", "Input should be"),
        ({"agent": "demo"}, "kernel"),
        ({"kernel": "K", "agent": "demo", "command": ["sh"]}, "command"),
        ({"kernel": "K", "agent": "demo", "env": {"A": "1"}}, "env"),
        ({"kernel": "K", "agent": "nonesuch"}, "unknown agent"),
        ({"kernel": "K", "agent": "demo", "loadSessionId": ""}, "loadSessionId"),
        ({"kernel": "K", "agent": "demo", "cwd": "a\0b"}, "cwd"),
    ],
)
async def test_bad_bodies_are_refused_with_a_reason(
    jp_fetch: Any, start_kernel: Any, body: Any, reason: str
) -> None:
    kernel_id = await start_kernel()
    if isinstance(body, dict):
        body = json.dumps({k: kernel_id if v == "K" else v for k, v in body.items()})
    code, text = await fails(post_chat(jp_fetch, body))
    assert code == 400, text
    assert reason in text, text


async def test_unknown_kernels_are_not_found(jp_fetch: Any) -> None:
    code, _ = await fails(api(jp_fetch, "chats", params={"kernel": "nope"}))
    assert code == 404
    code, _ = await fails(post_chat(jp_fetch, {"kernel": "nope", "agent": "demo"}))
    assert code == 404


async def test_a_login_is_needed(jp_fetch: Any) -> None:
    for path in ("agents", "chats", "sessions"):
        code, _ = await fails(api(jp_fetch, path, headers={"Authorization": "token wrong"}))
        assert code == 403


async def test_a_cookie_login_needs_the_xsrf_token_to_post(
    jp_fetch: Any, start_kernel: Any
) -> None:
    kernel_id = await start_kernel()
    login = login_of(await jp_fetch("api", "status"))
    body = {"kernel": kernel_id, "agent": "demo"}
    # What a page on another site could send along with the login cookie: refused.
    code, _ = await fails(post_chat(jp_fetch, body, headers=dict(login)))
    assert code == 403
    query = {"kernel": kernel_id, "agent": "demo", "session": "demo-1"}
    deleting = api(jp_fetch, "sessions", method="DELETE", params=query, headers=dict(login))
    assert (await fails(deleting))[0] == 403
    # GETs change nothing and need no XSRF token.
    listed = await api(jp_fetch, "chats", params={"kernel": kernel_id}, headers=dict(login))
    assert json.loads(listed.body) == {"chats": []}


class ReadOnly(Authorizer):
    """A user who may read but never run anything."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return action == "read"


@pytest.mark.acp_config(ServerApp={"authorizer_class": ReadOnly})
async def test_the_execute_permission_is_needed(jp_fetch: Any, start_kernel: Any) -> None:
    for path in ("agents", "chats", "sessions"):
        code, _ = await fails(api(jp_fetch, path, params={"kernel": "k"}))
        assert code == 403


async def test_chats_of_a_kernel_opened_by_its_notebook_are_listed(
    jp_fetch: Any, start_kernel: Any, cells: Any
) -> None:
    kernel_id = await start_kernel()
    stdout = await (await cells(kernel_id)).run(OPEN_CHAT)
    chat_id = json.loads(stdout.split("chat:", 1)[1])["chat"]
    listed = json.loads((await api(jp_fetch, "chats", params={"kernel": kernel_id})).body)["chats"]
    assert [c["chatId"] for c in listed] == [chat_id]
