"""A backgrounded command of the real claude wrapper in JupyterLab: its lines show in the
card as it prints them, seconds before its end (the chat follows the output file that
the wrapper names, agent/background_output.py).

The wrapper runs in the server (server mode) against the mock Messages API.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.claude_wrapper import require_wrapper, wrapper_env
from tests.support.lab import chat, open_chat_notebook, permission_card, send, start_server
from tests.support.mock_anthropic import MockAnthropic, text, tool_use

# A line a second for five seconds.
COMMAND = "for i in 1 2 3 4 5; do echo line $i; sleep 1; done"


def test_a_background_commands_first_line_shows_before_its_end(page: Page, tmp_path: Path) -> None:
    wrapper = require_wrapper()
    base = tmp_path / "jupyter"
    with MockAnthropic() as mock:
        env = wrapper_env(base / "home", mock.url)
        env["PATH"] = os.pathsep.join([str(wrapper.parent), os.environ.get("PATH", "")])
        run = {"command": COMMAND, "description": "Count", "run_in_background": True}
        mock.on_user("Count", tool_use("Bash", run))
        mock.on(lambda r: True, text("Started"))
        lab = start_server(base, extra_env=env)
        try:
            code = 'from acp_notebook import Chat\nchat = Chat("claude-code")\nawait chat.ready()\nchat'
            open_chat_notebook(page, lab, "claude-terminal", code)
            send(page, "Count")
            card = permission_card(page)
            card.get_by_role("button", name="Yes", exact=True).click()
            terminal = chat(page).locator(".acpnb-terminal").last
            screen, exit_line = (
                terminal.locator(".acpnb-terminal-screen"),
                terminal.locator(".acpnb-terminal-exit"),
            )
            expect(screen).to_contain_text("line 1", timeout=60_000)
            first = time.monotonic()
            expect(exit_line).to_be_hidden()
            expect(exit_line).to_be_visible(timeout=30_000)
            assert time.monotonic() - first >= 2.0
            expect(screen).to_contain_text("line 5")
            assert "running in background" not in (screen.text_content() or "")
        finally:
            lab.stop()
