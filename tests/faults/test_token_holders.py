"""One person on many devices (issue 26, item 1): principals.

On a plain server (jupyter_server's own identity provider, a token, no JupyterHub)
every login without the identity cookie is a new anonymous user. Every holder of the
token is then one principal for the owner gate: a second browser, another device, a
cookie cleared mid-chat, all still own the chat; each page keeps its own name, and a
page learns who it is with its resync. Where identities are real (a configured
provider, JupyterHub), each user stays their own principal.

The server fixtures are ``tests/server``'s (imported, not copied).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from jupyter_server.auth import identity
from jupyter_server.auth.identity import IdentityProvider, PasswordIdentityProvider, User
from jupyter_server.serverapp import ServerApp

from acp_notebook.server.identity import TOKEN_HOLDERS, Principal, Principals
from tests.server.conftest import *  # noqa: F403  (pytest-jupyter's and tests/server's fixtures)
from tests.support.server_peers import OPEN, TwoUsers, chat_of, run_as


@pytest.fixture(autouse=True)
def not_a_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)


@pytest.mark.fault("the same person logs in twice with the token: two anonymous users")
def test_anonymous_logins_are_one_principal_real_users_are_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    himalia = User("a1", name="Anonymous Himalia", display_name="Anonymous Himalia")
    mneme = User("b2", name="Anonymous Mneme", display_name="Anonymous Mneme")
    for provider in (IdentityProvider(), PasswordIdentityProvider()):
        principals = Principals(provider)
        assert principals.of(himalia) == Principal(TOKEN_HOLDERS, "Anonymous Himalia")
        assert principals.of(mneme) == Principal(TOKEN_HOLDERS, "Anonymous Mneme")
        assert not Principals(provider, "per-user").shared
    # Two logins that drew the same moon are told apart: a page says "you" for its own name.
    principals = Principals(IdentityProvider())
    again = User("c3", name="Anonymous Himalia", display_name="Anonymous Himalia")
    assert principals.of(himalia).name == "Anonymous Himalia"
    assert principals.of(again).name == "Anonymous Himalia 2"
    assert principals.of(himalia).name == "Anonymous Himalia"  # each keeps its own
    assert principals.of(again) == Principal(TOKEN_HOLDERS, "Anonymous Himalia 2")
    # A provider of its own knows people (a subclass too); the setting may say otherwise.
    assert Principals(TwoUsers()).of(User("bob")) == Principal("bob", "bob")
    assert Principals(TwoUsers(), "shared").of(User("bob")).id == TOKEN_HOLDERS
    # Under JupyterHub the server's own provider names the hub's user.
    monkeypatch.setenv("JUPYTERHUB_USER", "carol")
    assert not Principals(IdentityProvider()).shared


@pytest.mark.fault(
    "the owner answers from a second device, then prompts after clearing the cookie mid-chat"
)
async def test_every_token_holder_owns_what_the_token_opened(
    start_kernel: Any,
    browser: Any,
    ws_url: Any,
    jp_fetch: Any,
    jp_serverapp: ServerApp,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every login draws a moon: two alike (it happened in CI) still get names of their own.
    monkeypatch.setattr(identity, "get_anonymous_username", lambda: "Io")
    token: str = jp_serverapp.identity_provider.token
    kernel_id = await start_kernel()
    opened = await run_as(
        ws_url, token, kernel_id, OPEN.format(name="mine", share="", prompt="ask-user")
    )
    chat_id = chat_of(opened)
    first = await browser(kernel_id, chat_id)
    second = await browser(kernel_id, chat_id)  # no cookie: another anonymous user
    card = await second.card(chat_id)
    seen = [(await page.resync(chat_id))["viewer"] for page in (first, second)]
    assert seen[0]["id"] == seen[1]["id"] == TOKEN_HOLDERS
    assert seen[0]["name"] != seen[1]["name"]  # each page keeps its own name
    access = await first.event(chat_id, "access")
    assert access["owner"] == TOKEN_HOLDERS and access["share"] is None

    ack = await second.respond(chat_id, card, action="decline")
    assert ack.get("accepted"), ack
    resolved = await first.event(chat_id, "elicitation_resolved", requestId=card["requestId"])
    assert resolved["by"] == seen[1]["name"]

    # The first page's cookie is cleared mid-chat: it comes back as yet another login.
    first.close()
    again = await browser(kernel_id, chat_id)
    name = (await again.resync(chat_id))["viewer"]["name"]
    await again.event(chat_id, "turn_ended", turn=1)
    assert (await again.prompt(chat_id, "hello")).get("accepted")
    assert (await again.event(chat_id, "turn_ended", turn=2))["stopReason"] == "end_turn"
    assert (await again.event(chat_id, "turn_started", turn=2))["by"] == name

    listed = await jp_fetch("acp-notebook", "api", "chats", params={"kernel": kernel_id})
    (chat,) = [c for c in json.loads(listed.body)["chats"] if c["chatId"] == chat_id]
    assert chat["mayAct"] and chat["mine"] and chat["owner"] == TOKEN_HOLDERS
