"""A client terminal's output in its tool call's card in JupyterLab and Notebook 7, as it
prints: in its colours, scrolled to its end, with its exit once it has ended."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.chromium import PageLog
from tests.support.lab import JupyterServer, chat, open_chat_notebook, send


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_the_card_shows_a_commands_lines_as_they_come(
    app: str, page: Page, server: JupyterServer, page_log: PageLog
) -> None:
    stacks: list[str] = []
    page.on("pageerror", lambda error: stacks.append(error.stack or str(error)))
    code = 'from acp_notebook import Chat\nchat = Chat("demo")\nchat'
    open_chat_notebook(page, server, "terminal", code, app)
    root = chat(page)
    expect(root.locator(".acpnb-status")).to_have_attribute("data-status", "ready", timeout=60_000)
    send(page, "terminal 40")  # 40 lines, 0.2 s apart: 8 s
    card = root.locator(".acpnb-tool").last
    screen = card.locator(".acpnb-terminal-screen")
    # The first lines are in the card while the command still runs.
    expect(screen).to_contain_text("line 1", timeout=30_000)
    expect(card.locator(".acpnb-terminal-exit")).to_be_hidden()
    assert "line 39" not in (screen.text_content() or "")
    # In its colour (the escape codes are gone), through ansi_up's styles.
    colour = screen.locator("span[style*='color']").first
    expect(colour).to_contain_text("line 0")
    assert "\x1b" not in (screen.text_content() or "") and "[32m" not in (
        screen.text_content() or ""
    )
    # The pane is bounded in height and follows its end.
    expect(screen).to_contain_text("line 20", timeout=30_000)
    follows = screen.evaluate("(s) => s.scrollHeight - s.scrollTop - s.clientHeight <= 8")
    scrolls = screen.evaluate("(s) => s.scrollHeight > s.clientHeight")
    assert follows and scrolls
    exit_line = card.locator(".acpnb-terminal-exit")
    expect(exit_line).to_have_text("exit code 0", timeout=30_000)
    expect(screen).to_contain_text("line 39")
    expect(root.locator(".acpnb-agent").last).to_contain_text("the command printed 40 lines")
    # The terminal placeholder of the card's content is not shown beside the output.
    expect(card.get_by_text("[terminal")).to_have_count(0)
    if app == "lab":
        assert page_log.errors == [], page_log
    else:
        # Notebook 7 throws errors of its own on opening a notebook (one without a chat
        # too): none may come from elsewhere, none may be logged.
        assert not [e for e in page_log.errors if not e.startswith("page error:")], page_log
        assert not [s for s in stacks if not _top_frame_in(s, "/static/notebook/")], stacks


def _top_frame_in(stack: str, path: str) -> bool:
    frames = [line for line in stack.splitlines() if line.strip().startswith("at ")]
    return bool(frames) and path in frames[0]
