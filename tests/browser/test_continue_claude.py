"""The whole story with claude-code, in a real JupyterLab: a conversation, everything
stopped, the notebook reopened (its transcript shown with no live chat behind it),
Continue, a new prompt, and the model is sent the earlier turns.

The real claude-agent-acp wrapper runs in the server (server mode) against the mock
Messages API; claude keeps its session under the server's HOME, which outlives the
server like a user's home does.
"""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.claude_wrapper import require_wrapper, wrapper_env
from tests.support.lab import (
    agent_text,
    chat,
    open_chat_notebook,
    open_notebook,
    save,
    send,
    start_server,
)
from tests.support.mock_anthropic import MockAnthropic, text

NUMBER = "Remember the number 4817"


def test_reopen_and_continue_a_claude_conversation(page: Page, tmp_path: Path) -> None:
    wrapper = require_wrapper()
    base = tmp_path / "jupyter"
    with MockAnthropic() as mock:
        env = wrapper_env(base / "home", mock.url)
        env["PATH"] = os.pathsep.join([str(wrapper.parent), os.environ.get("PATH", "")])
        mock.on_user(NUMBER, text("Noted: 4817."))
        mock.on_user("Which number?", text("It was 4817."))

        lab = start_server(base, extra_env=env)
        try:
            filename = open_chat_notebook(
                page,
                lab,
                "claude",
                'from acp_notebook import Chat\nchat = Chat("claude-code")\nawait chat.ready()\nchat',
            )
            send(page, NUMBER)
            expect(agent_text(page)).to_contain_text("Noted: 4817.", timeout=60_000)
            expect(chat(page).locator(".acpnb-status")).to_have_text("idle")
            save(page)
        finally:
            lab.stop()  # the kernel and the agent end with the server

        lab = start_server(base, extra_env=env)
        try:
            # Notebook 7 shows the saved conversation too, with no error box.
            open_notebook(page, lab, filename, app="notebook")
            expect(page.locator(".acpnb-saved .acpnb-user").first).to_have_text(NUMBER)
            expect(page.get_by_text("Error displaying widget")).to_have_count(0)

            open_notebook(page, lab, filename)
            saved = page.locator(".acpnb-saved")
            expect(saved).to_be_visible()
            expect(saved.locator(".acpnb-user").first).to_have_text(NUMBER)
            expect(saved.locator(".acpnb-agent").first).to_contain_text("Noted: 4817.")
            expect(page.get_by_text("Error displaying widget")).to_have_count(0)

            saved.get_by_role("button", name="Continue").click()
            live = page.locator(".acpnb-root:not(.acpnb-saved)").last
            # session/load replayed the conversation into the new chat.
            expect(live.locator(".acpnb-user").first).to_have_text(NUMBER, timeout=60_000)
            expect(live.locator(".acpnb-status")).to_have_text("idle", timeout=60_000)
            box = live.locator("textarea.acpnb-composer-input")
            box.fill("Which number?")
            box.press("Enter")
            expect(live.locator(".acpnb-agent").last).to_contain_text(
                "It was 4817.", timeout=60_000
            )
        finally:
            lab.stop()
        [asked] = [r for r in mock.main_requests if "Which number?" in r.prompt_texts]
        history = repr(asked.messages)
        assert NUMBER in history and "Noted: 4817." in history
