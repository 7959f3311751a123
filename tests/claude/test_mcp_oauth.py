"""Signing in to an MCP server that needs OAuth, through claude's wrapper (issue 29).

The chat mounts tests/support/oauth_mcp_server.py as an HTTP MCP server. Claude Code
finds at startup that it needs auth; once ``session/new`` has answered, the wrapper asks
Claude Code for the authorization URL (``mcpAuthenticate``: Claude Code opens the
localhost callback listener and, for the SDK, no browser), sends it to the client as a
URL elicitation, polls the server's status and, once it is connected, sends
``elicitation/complete`` (dist/acp-agent.js, ``authenticateMcpServer``). It looks only
once, right after ``session/new``: the claude-code agent has Claude Code connect MCP
servers before that (``MCP_CONNECTION_NONBLOCKING=0``, agent/catalogue.py), or the
server would still be connecting and nothing would be asked. ``/mcp reconnect`` asks
again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from acp_notebook.kernel.chat import Chat
from tests.support.chat_waits import TIMEOUT, ask, next_pending, ready
from tests.support.mock_anthropic import MockAnthropic, text, tool_search, tool_use
from tests.support.oauth_mcp_server import (
    AUTHORIZE_PATH,
    NAME,
    TOOL,
    VAULT_TEXT,
    OAuthMcpServer,
)

pytestmark = pytest.mark.usefixtures("wrapper_bin")

PROMPT = "Read the vault"


@pytest.fixture
def vault() -> Iterator[OAuthMcpServer]:
    with OAuthMcpServer() as server:
        yield server


async def outcome(chat: Chat, request_id: str, expected: str) -> None:
    """Wait for the question's folded outcome to be ``expected``."""
    async with asyncio.timeout(TIMEOUT):
        while chat.state["elicitations"][request_id]["outcome"] != expected:
            await asyncio.sleep(0.05)


async def open_in_browser(url: str) -> httpx2.Response:
    """What the user's browser does with the link: follow the redirects to the end (no
    proxy: a browser reaches loopback directly)."""
    async with httpx2.AsyncClient(follow_redirects=True, trust_env=False, timeout=30) as web:
        return await web.get(url)


def check_sign_in_link(request: dict[str, Any], vault: OAuthMcpServer) -> None:
    """The question is the wrapper's sign-in for the vault, and nobody has opened its link."""
    assert request["message"] == f"Authenticate with MCP server {NAME}"
    assert request["fields"] == []
    assert request["host"] == f"127.0.0.1:{vault.port}"
    link = urlsplit(request["url"])
    assert (link.scheme, link.netloc, link.path) == ("http", request["host"], AUTHORIZE_PATH)
    query = parse_qs(link.query)
    callback = urlsplit(query["redirect_uri"][0])
    assert (callback.hostname, callback.path) == ("localhost", "/callback")
    assert query["code_challenge_method"] == ["S256"] and query["resource"] == [vault.url]
    # Claude Code discovered the server and registered itself, but nobody opened the
    # sign-in page: not Claude Code (it opens no browser for the SDK), not the bridge.
    assert ("POST", "/register") in vault.requests
    assert vault.hits(AUTHORIZE_PATH) == 0


async def sign_in(request: dict[str, Any], vault: OAuthMcpServer) -> None:
    """The user's browser opens the link: the page signs in at once and redirects to
    Claude Code's callback listener (which then takes the code to the token endpoint)."""
    page = await open_in_browser(request["url"])
    assert page.status_code == 200 and "Authentication successful" in page.text, page.text
    assert vault.hits(AUTHORIZE_PATH) == 1


async def test_mcp_sign_in_at_startup(
    claude_chat: Callable[..., Chat], mock_api: MockAnthropic, vault: OAuthMcpServer
) -> None:
    chat = claude_chat(mcp_servers=[vault.entry()])
    # Asked at startup, with no prompt sent.
    request = await next_pending(chat, "elicitation")
    check_sign_in_link(request, vault)

    # The card's "Open" button: accept, then the browser opens the link.
    chat.answer(request["requestId"])
    await outcome(chat, request["requestId"], "accepted")
    assert vault.hits(AUTHORIZE_PATH) == 0
    await sign_in(request, vault)

    # The wrapper sees the server connected and sends elicitation/complete.
    await outcome(chat, request["requestId"], "completed")
    assert chat.pending == []
    assert ("POST", "/token") in vault.requests

    # Signed in: the tool answers (the server serves it only with a valid token). MCP
    # tools are deferred: the model loads it with ToolSearch first.
    mock_api.on_user(PROMPT, tool_search(TOOL))
    mock_api.on_tool_result("ToolSearch", tool_use(TOOL, {}))
    mock_api.on_tool_result(TOOL, text("Done"))
    chat.on_permission(lambda request: "allow-once")
    turn = await ask(chat, PROMPT)
    assert turn.ok and turn.text == "Done"
    [result] = mock_api.tool_results(TOOL)
    assert not result.is_error and VAULT_TEXT in result.text, result.text
    assert mock_api.unmatched == []


async def test_declined_sign_in_asked_again_by_mcp_reconnect(
    claude_chat: Callable[..., Chat], vault: OAuthMcpServer
) -> None:
    """Declined at startup, the sign-in is asked again by ``/mcp reconnect <server>``. A
    user who signs in from a copied link never presses the card's button: the wrapper's
    ``elicitation/complete`` closes the card (the bridge tells the agent cancel, since
    nobody consented, which the wrapper no longer waits for)."""
    chat = claude_chat(mcp_servers=[vault.entry()])
    first = await next_pending(chat, "elicitation")
    chat.decline(first["requestId"])
    await outcome(chat, first["requestId"], "declined")
    await ready(chat)

    turn = await ask(chat, f"/mcp reconnect {NAME}")
    assert "needs-auth" in turn.text, turn.text
    request = await next_pending(chat, "elicitation")
    assert request["requestId"] != first["requestId"]
    check_sign_in_link(request, vault)

    await sign_in(request, vault)
    await outcome(chat, request["requestId"], "completed")
    assert chat.state["elicitations"][request["requestId"]]["by"] == "agent"
    assert ("POST", "/token") in vault.requests
    assert chat.pending == []
    assert chat.state["elicitations"][first["requestId"]]["outcome"] == "declined"
    assert chat.status == "ready"
