"""The JupyterLab extension in a real JupyterLab and Notebook 7: the Agent panel, "Ask the
agent" on an error, "Insert cell below" on a code block of the agent's reply, and saved
chats (live, or the transcript with Continue).

The extension is enabled by installing the package (its labextension is shared data).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.lab import (
    JupyterServer,
    agent_panel,
    cell,
    open_notebook,
    open_panel,
    run_cell,
    save,
    send_in,
    unique,
    write_notebook,
)

APPS = ["lab", "notebook"]


def still_running(page: Page, index: int) -> None:
    expect(cell(page, index).locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\*\]"))


@pytest.mark.parametrize("app", APPS)
def test_panel_answers_while_the_kernel_is_busy(
    page: Page, server: JupyterServer, app: str
) -> None:
    filename = write_notebook(
        server,
        unique(f"panel-{app}"),
        ["from acp_notebook import Chat\nchat = Chat('demo')\nchat", "import time\ntime.sleep(20)"],
    )
    open_notebook(page, server, filename, app)
    inline = run_cell(page, 0).locator(".acpnb-root")
    expect(inline).to_be_visible()

    panel = open_panel(page)
    # The kernel's chat (the inline one) is listed and shown.
    expect(panel.locator(".acpnb-panel-chats option")).to_have_count(1)
    expect(panel.locator(".acpnb-root")).to_be_visible()
    send_in(panel, "ask-user")
    card = panel.locator(".acpnb-card-elicitation")
    expect(card).to_be_visible()
    # The same card is pending inline too.
    expect(inline.locator(".acpnb-card-elicitation")).to_be_visible()

    run_cell(page, 1, wait=False)
    still_running(page, 1)
    card.get_by_role("radio", name="Green").check()
    card.get_by_role("button", name="Answer").click()
    expect(panel.locator(".acpnb-agent").last).to_contain_text('"question_0":"green"')
    # Both views of the chat update: the inline widget shows the answer as well.
    expect(inline.locator(".acpnb-agent").last).to_contain_text('"question_0":"green"')
    expect(inline.locator(".acpnb-card-elicitation")).to_have_count(0)
    still_running(page, 1)  # all of it while the kernel was busy

    # A new chat started from the panel, with an agent the server allows.
    expect(panel.locator(".acpnb-panel-agents")).to_have_value("demo")
    panel.get_by_role("button", name="New chat").click()
    expect(panel.locator(".acpnb-panel-chats option")).to_have_count(2)
    send_in(panel, "hello from the panel")
    expect(panel.locator(".acpnb-agent").last).to_contain_text("You said: hello from the panel")
    still_running(page, 1)


@pytest.mark.parametrize("app", APPS)
def test_ask_the_agent_about_an_error_then_insert_its_code(
    page: Page, server: JupyterServer, app: str
) -> None:
    filename = write_notebook(server, unique(f"error-{app}"), ["x = 1\nx / 0"])
    open_notebook(page, server, filename, app)
    failed = run_cell(page, 0)
    expect(failed.locator(".jp-OutputArea-output")).to_contain_text("ZeroDivisionError")
    failed.get_by_role("button", name="Ask the agent").click()

    # The panel opens a chat (none existed) and sends the cell and its traceback.
    panel = agent_panel(page)
    expect(panel).to_be_visible()
    reply = panel.locator(".acpnb-agent").last
    expect(reply).to_contain_text("ZeroDivisionError: division by zero", timeout=60_000)
    prompt = panel.locator(".acpnb-user").last
    expect(prompt).not_to_contain_text("\x1b[")  # ANSI stripped
    # Its fences rendered: the cell's source and the traceback are code blocks.
    expect(prompt.locator("pre")).to_have_count(2)
    expect(prompt).not_to_contain_text("```")

    # The demo agent quoted the cell back in a code block: insert it below the cell.
    code_block = reply.locator("pre").first
    expect(code_block).to_have_text("x = 1\nx / 0")
    cells = page.locator(".jp-Notebook .jp-Cell")
    before = cells.count()  # Shift+Enter on the last cell added an empty one
    cell(page, 0).locator(".jp-InputPrompt").click()  # the active cell is the failed one
    reply.get_by_role("button", name="Insert cell below").first.click()
    expect(cells).to_have_count(before + 1)
    inserted = cell(page, 1)
    expect(inserted.locator(".cm-content")).to_have_text("x = 1x / 0")  # one .cm-line per line
    expect(inserted.locator(".cm-line")).to_have_count(2)
    expect(inserted.locator(".cm-line").nth(0)).to_have_text("x = 1")
    expect(inserted.locator(".cm-line").nth(1)).to_have_text("x / 0")
    # Never run: no execution count, no output.
    expect(inserted.locator(".jp-InputPrompt")).to_have_text(re.compile(r"^\[ \]:$"))
    expect(inserted.locator(".jp-OutputArea-output")).to_have_count(0)


def test_a_saved_chat_shows_its_transcript_then_continues(
    page: Page, server: JupyterServer
) -> None:
    # The saved-chat renderer: live while the chat exists, else the transcript with
    # Continue, which opens a chat on the new kernel that loads the agent's session.
    filename = write_notebook(
        server,
        unique("saved"),
        ["from acp_notebook import Chat\nchat = Chat('demo')\nawait chat.ready()\nchat"],
    )
    open_notebook(page, server, filename)
    output = run_cell(page, 0).locator(".jp-OutputArea-output")
    send_in(output, "remember this")
    expect(output.locator(".acpnb-agent").last).to_contain_text("You said: remember this")
    save(page)

    # The kernel goes away (its chats with it); the notebook comes back on a new one.
    server.shut_down_kernel(filename)
    open_notebook(page, server, filename)
    output = cell(page, 0).locator(".jp-OutputArea-output")
    expect(output.locator(".acpnb-continue")).to_be_visible()
    # The server answered that the kernel is gone: the saved chat says it ended.
    expect(output.locator(".acpnb-status")).to_contain_text("exited")
    expect(output.locator(".acpnb-user")).to_have_text(["remember this"])
    expect(output.locator("textarea.acpnb-composer-input")).to_be_disabled()

    output.get_by_role("button", name="Continue").click()
    expect(output.locator(".acpnb-continue")).to_have_count(0)
    # The loaded session replays the earlier turn into the new chat, which goes on.
    expect(output.locator(".acpnb-status")).to_have_text("idle")
    expect(output.locator(".acpnb-user")).to_have_text(["remember this"])
    send_in(output, "and now")
    expect(output.locator(".acpnb-agent").last).to_contain_text("You said: and now")
    expect(output.locator(".acpnb-user")).to_have_text(["remember this", "and now"])


def test_ask_about_the_selected_cells_from_the_palette(page: Page, server: JupyterServer) -> None:
    filename = write_notebook(server, unique("selected"), ["a = 41", "b = a + 1", "print(b)"])
    open_notebook(page, server, filename)
    cell(page, 1).locator(".jp-InputPrompt").click()
    page.keyboard.press("Shift+ArrowDown")  # cells 1 and 2 selected
    page.keyboard.press("Control+Shift+C")
    palette = page.locator(".lm-CommandPalette-input")
    palette.fill("Ask the agent about the selected cells")
    palette.press("Enter")
    prompt = agent_panel(page).locator(".acpnb-user").last
    expect(prompt).to_contain_text("About these Jupyter cells:")
    expect(prompt).to_contain_text("b = a + 1")
    expect(prompt).to_contain_text("print(b)")
    expect(prompt).not_to_contain_text("a = 41")
