"""Signing in from the chat in a real JupyterLab and Notebook 7: the demo agent's login
mode (acp_notebook/demo/login.py) refuses to start until the user signs in; the user runs
its terminal method, types the password into the card's box, and then chats."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support import lab
from tests.support.chromium import PageLog

SECRET = "open sesame"  # what the demo login reads


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_terminal_sign_in_by_typing_in_the_card_then_chat(
    page: Page, server: lab.JupyterServer, page_log: PageLog, tmp_path: Path, app: str
) -> None:
    signed_in = tmp_path / "signed-in"
    env = {"ACP_DEMO_DELAY": "0", "ACP_DEMO_LOGIN": str(signed_in)}
    code = f"from acp_notebook import Chat\nchat = Chat('demo', env={env!r})\nchat"
    filename = lab.open_chat_notebook(page, server, f"sign-in-{app}", code, app)
    chat = lab.chat(page)
    card = chat.locator(".acpnb-signin")
    expect(card).to_contain_text("demo needs you to sign in")
    terminal = card.locator('.acpnb-signin-method[data-method="demo-terminal"]')
    # The command shows before it runs, and nothing runs before the click.
    command = terminal.locator(".acpnb-signin-command code")
    expect(command).to_contain_text("ACP_DEMO_LOGIN_BY=terminal ")
    expect(command).to_contain_text("-m acp_notebook.demo.agent --login")
    expect(card.locator('[data-method="demo-key"]')).to_contain_text("ACP_DEMO_API_KEY")
    assert chat.locator(".acpnb-tool").count() == 0 and not signed_in.exists()

    terminal.get_by_role("button", name="Run in terminal").click()
    screen = chat.locator(".acpnb-terminal-screen")
    expect(screen).to_contain_text("Password:")
    box = card.locator("input.acpnb-signin-input")
    expect(box).to_have_attribute("type", "password")  # masked unless the user unmasks
    box.fill(SECRET)
    box.press("Enter")
    expect(screen).to_contain_text("Signed in.")
    expect(card).to_be_hidden()
    lab.send(page, "hello there")
    expect(lab.agent_text(page)).to_contain_text("You said: hello there")

    # What the user typed is nowhere: not in the page, the server's log, the saved notebook.
    lab.save(page)
    assert SECRET not in page.content()
    assert SECRET not in server.log_text()
    assert SECRET not in (server.root / filename).read_text()

    # Sign out takes a second click to confirm; the card then offers the methods again.
    sign_out = chat.locator(".acpnb-sign-out")
    sign_out.click()
    expect(sign_out).to_have_text("Sign out? Click again")
    sign_out.click()
    expect(card).to_contain_text("Signed out of demo")
    assert not signed_in.exists()
    # Notebook 7 itself logs a page error on load (as in test_queue_commands.py).
    assert page_log.dialogs == [] and (app == "notebook" or page_log.errors == [])
