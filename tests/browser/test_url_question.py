"""A URL question (URL-mode elicitation) in a real JupyterLab and Notebook 7.

The demo agent's ``url-login <url>`` asks to open a page and, once accepted, sends
``elicitation/complete``. The page is a stub on 127.0.0.1 that records every request:
showing the card must request nothing from it; the click opens it in a new tab that
has no opener. The real claude wrapper's sign-in to an MCP server that needs OAuth (the
stub of tests/support/oauth_mcp_server.py) is shown and opened the same way, and the
wrapper's elicitation/complete closes it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_agent_edits import ClaudeLab, claude_lab
from tests.support import lab
from tests.support.chromium import PageLog
from tests.support.oauth_mcp_server import AUTHORIZE_PATH, OAuthMcpServer

OPEN = 'from acp_notebook import Chat\nchat = Chat("demo", env={"ACP_DEMO_DELAY": "0"})\nchat'


class _Stub(BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]]

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Referer")))
        body = b"<!doctype html><title>signed in</title><p>signed in</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def stub() -> Iterator[tuple[int, list[tuple[str, str | None]]]]:
    """A page on 127.0.0.1: its port and the (path, Referer) of each request it got."""
    seen: list[tuple[str, str | None]] = []
    handler = type("Stub", (_Stub,), {"seen": seen})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1], seen
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_url_question_shows_the_host_and_opens_only_on_click(
    page: Page,
    server: lab.JupyterServer,
    page_log: PageLog,
    stub: tuple[int, list[tuple[str, str | None]]],
    app: str,
) -> None:
    port, seen = stub
    host = f"127.0.0.1:{port}"
    url = f"http://{host}/login?from=demo"
    filename = lab.write_notebook(server, lab.unique(f"url-question-{app}"), [OPEN])
    lab.open_notebook(page, server, filename, app=app)
    lab.run_cell(page, 0)
    lab.send(page, f"url-login {url}")

    card = lab.question_card(page)
    expect(card.locator(".acpnb-link-host strong")).to_have_text(host)
    expect(card.locator(".acpnb-link-url")).to_have_text(url)
    expect(card).to_contain_text("Sign in to the demo service.")
    # Not a link: nothing the browser would follow, load or prefetch.
    assert card.locator("a, [href], [src]").count() == 0
    page.wait_for_timeout(1000)  # time for any prefetch or preload to have gone out
    assert seen == []

    with page.context.expect_page() as opening:
        card.get_by_role("button", name=f"Open {host}").click()
    opened = opening.value
    opened.wait_for_load_state()
    assert opened.url == url
    assert opened.evaluate("() => window.opener") is None
    # The first request is the page itself, with no referrer (the page may then fetch its
    # own favicon).
    assert seen[0] == ("/login?from=demo", None)

    # Accepted, then the agent's elicitation/complete settles the card.
    expect(card).to_have_count(0)
    expect(lab.agent_text(page)).to_contain_text("You accepted.")
    expect(lab.agent_text(page)).to_contain_text('What the agent received: {"action":"accept"}')
    # Notebook 7 itself logs a page error on load (as in test_queue_commands.py).
    assert page_log.dialogs == [] and (app == "notebook" or page_log.errors == [])


@pytest.fixture
def claude(tmp_path: Path) -> Iterator[ClaudeLab]:
    yield from claude_lab(tmp_path / "jupyter", rtc=False)


def test_claude_mcp_sign_in_opens_only_on_click(
    page: Page, claude: ClaudeLab, page_log: PageLog
) -> None:
    with OAuthMcpServer() as vault:
        code = (
            "from acp_notebook import Chat\n"
            f"chat = Chat('claude-code', mcp_servers=[{vault.entry()!r}])\nchat"
        )
        lab.open_chat_notebook(page, claude.lab, "mcp-sign-in", code)
        host = f"127.0.0.1:{vault.port}"
        card = lab.question_card(page)
        expect(card.locator(".acpnb-link-host strong")).to_have_text(host, timeout=90_000)
        expect(card.locator(".acpnb-link-url")).to_contain_text(
            f"http://{host}{AUTHORIZE_PATH}?response_type=code"
        )
        expect(card).to_contain_text("Authenticate with MCP server vault")
        assert card.locator("a, [href], [src]").count() == 0
        page.wait_for_timeout(1000)  # time for any prefetch or preload to have gone out
        assert vault.hits(AUTHORIZE_PATH) == 0

        with page.context.expect_page() as opening:
            card.get_by_role("button", name=f"Open {host}").click()
        opened = opening.value
        # The stub signs in at once and redirects to Claude Code's callback listener.
        expect(opened.locator("body")).to_contain_text("Authentication successful")
        assert opened.evaluate("() => window.opener") is None
        assert vault.hits(AUTHORIZE_PATH) == 1
        expect(card).to_have_count(0)  # the wrapper's elicitation/complete
        assert page_log.dialogs == [] and page_log.errors == []
