"""A backgrounded command of the real claude wrapper in JupyterLab: its lines show in the
card as it prints them, seconds before its end (the chat follows the output file that
the wrapper names, agent/background_output.py).

The wrapper runs in the server (server mode) against the mock Messages API.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_agent_edits import ClaudeLab, claude_lab
from tests.support.lab import chat, open_chat_notebook, permission_card, send
from tests.support.mock_anthropic import text, tool_use

# A line a second for five seconds.
COMMAND = "for i in 1 2 3 4 5; do echo line $i; sleep 1; done"


@pytest.fixture
def claude(tmp_path: Path) -> Iterator[ClaudeLab]:
    yield from claude_lab(tmp_path / "jupyter", rtc=False)


def test_a_background_commands_first_line_shows_before_its_end(
    page: Page, claude: ClaudeLab
) -> None:
    run = {"command": COMMAND, "description": "Count", "run_in_background": True}
    claude.mock.on_user("Count", tool_use("Bash", run))
    claude.mock.on(lambda r: True, text("Started"))
    code = 'from acp_notebook import Chat\nchat = Chat("claude-code")\nawait chat.ready()\nchat'
    open_chat_notebook(page, claude.lab, "claude-terminal", code)
    send(page, "Count")
    permission_card(page).get_by_role("button", name="Yes", exact=True).click()
    terminal = chat(page).locator(".acpnb-terminal").last
    screen = terminal.locator(".acpnb-terminal-screen")
    exit_line = terminal.locator(".acpnb-terminal-exit")
    expect(screen).to_contain_text("line 1", timeout=60_000)
    first = time.monotonic()
    expect(exit_line).to_be_hidden()
    expect(exit_line).to_be_visible(timeout=30_000)
    assert time.monotonic() - first >= 2.0
    expect(screen).to_contain_text("line 5")
    assert "running in background" not in (screen.text_content() or "")
