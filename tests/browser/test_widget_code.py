"""The widget's code reaches the page once: from the server extension, else from the kernel.

In server mode each chat's model carries a small loader instead of the bundle, so a
notebook of many chats neither saves nor evaluates the bundle once per chat.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, Request, Route, expect

from tests.support.lab import JupyterServer, cell, chat, open_notebook, run_cell, write_notebook

CELLS = [
    "from acp_notebook import Chat\n"
    "chats = [Chat('demo', env={'ACP_DEMO_DELAY': '0'}) for _ in range(2)]\n"
    "print(chats[0].mode, max(len(c._esm) for c in chats))",
    "chats[0]",
    "chats[1]",
]
BUNDLE = re.compile(r"/static/acp_notebook/widget\.js\?v=[0-9a-f]{16}")


def _ready(page: Page, index: int) -> None:
    view = page.locator(".acpnb-root").nth(index)
    expect(view.locator(".acpnb-status[data-status='ready']")).to_be_attached(timeout=60_000)


def test_chats_load_the_bundle_once_from_the_server(page: Page, server: JupyterServer) -> None:
    fetched: list[str] = []

    def on_request(request: Request) -> None:
        if BUNDLE.search(request.url):
            fetched.append(request.url)

    page.on("request", on_request)
    open_notebook(page, server, write_notebook(server, "widget-code", CELLS))
    output = run_cell(page, 0).locator(".jp-OutputArea-output").first
    expect(output).to_have_text(re.compile(r"^server \d+\s*$"))
    size = output.inner_text().split()[1]
    assert int(size) < 4_000, f"the model carries {size} characters of code"
    run_cell(page, 1)
    run_cell(page, 2)
    _ready(page, 0)
    _ready(page, 1)
    assert len(fetched) == 1, fetched
    # The loaded widget works: a prompt gets its answer.
    chat(page).locator("textarea.acpnb-composer-input").fill("stream 5")
    chat(page).locator("textarea.acpnb-composer-input").press("Enter")
    expect(chat(page).locator(".acpnb-agent").last).to_have_text("0 1 2 3 4")


def test_without_the_static_file_the_kernel_sends_the_code(
    page: Page, server: JupyterServer
) -> None:
    # As where the page cannot reach the extension's files (VS Code on a remote server).
    def refuse(route: Route) -> None:
        route.abort()

    page.route(BUNDLE, refuse)
    open_notebook(page, server, write_notebook(server, "widget-code-kernel", CELLS[:2]))
    run_cell(page, 0)
    run_cell(page, 1)
    _ready(page, 0)


MAGIC_CELLS = [
    "%load_ext acp_notebook\n"
    "from acp_notebook import Chat\n"
    "chat = Chat('demo', env={'ACP_DEMO_DELAY': '0'})\n"
    "chat",
    "%%agent\nfirst question",
    "%%agent\nsecond question",
]


def test_an_agent_cell_shows_its_own_turn(page: Page, server: JupyterServer) -> None:
    """Each %%agent cell's view (a model of its own, with the chat's code) shows the turn
    its prompt started; the rest of the chat is a click away."""
    open_notebook(page, server, write_notebook(server, "agent-cells", MAGIC_CELLS))
    whole = run_cell(page, 0).locator(".acpnb-root")
    first = run_cell(page, 1).locator(".acpnb-root")
    second = run_cell(page, 2).locator(".acpnb-root")
    expect(second.locator(".acpnb-agent")).to_have_count(1, timeout=60_000)
    expect(second.locator(".acpnb-user")).to_have_text(["second question"])
    expect(first.locator(".acpnb-user")).to_have_text(["first question"])
    expect(whole.locator(".acpnb-user")).to_have_text(["first question", "second question"])
    earlier = second.locator(".acpnb-earlier")
    expect(earlier).to_contain_text("other messages are not shown here")
    expect(whole.locator(".acpnb-earlier")).to_be_hidden()
    # The cell's value, the Turn, is not shown again under its view.
    expect(cell(page, 2).locator(".jp-OutputArea-executeResult")).to_have_count(0)
    earlier.get_by_role("button", name="Show the whole chat").click()
    expect(second.locator(".acpnb-user")).to_have_text(["first question", "second question"])
    expect(earlier).to_be_hidden()
