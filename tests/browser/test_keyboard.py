"""The chat with the keyboard alone, in a real JupyterLab (and Notebook 7 for the keys):
JupyterLab's notebook shortcuts never act from inside a chat while its page-wide ones do
(Ctrl+Shift+Y opens the panel, focused on its composer), cards are answered and a turn is
stopped without a mouse, and a streamed answer does not flood a screen reader.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.lab import (
    JupyterServer,
    agent_panel,
    cell,
    open_notebook,
    run_cell,
    unique,
    write_notebook,
)

OPEN = "from acp_notebook import Chat\nchat = Chat('demo')\nawait chat.ready()\nchat"
CELLS = [OPEN, "x = 1", "y = 2"]
# The demo's `slow` answer: 50 chunks, "tick 0 " to "tick 49 ", 0.1 s apart.
SLOW = "".join(f"tick {i} " for i in range(50))

# Counts the characters added to the chat's live regions (what a screen reader reads out).
COUNT_LIVE = """root => {
  const live = "[aria-live]:not([aria-live=off]), [role=status], [role=alert], "
    + "[role=log]:not([aria-live=off])";
  const inLive = (node) => {
    const element = node instanceof Element ? node : node.parentElement;
    return element !== null && element.closest(live) !== null;
  };
  window.__acpnbLive = 0;
  window.__acpnbObserver?.disconnect();
  window.__acpnbObserver = new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === "characterData" && inLive(record.target))
        window.__acpnbLive += record.target.textContent.length;
      for (const node of record.addedNodes)
        if (inLive(node)) window.__acpnbLive += node.textContent.length;
    }
  });
  window.__acpnbObserver.observe(root, { subtree: true, childList: true, characterData: true });
}"""


def cells_state(page: Page) -> list[tuple[str, str]]:
    """Each cell's type and source, as the notebook's model holds them."""
    cells = page.locator(".jp-Notebook .jp-Cell")
    return [
        (
            "code" if "jp-CodeCell" in (cells.nth(i).get_attribute("class") or "") else "other",
            cells.nth(i).locator(".jp-InputArea-editor").inner_text(),
        )
        for i in range(cells.count())
    ]


def press_notebook_keys(page: Page, control: Locator) -> None:
    """The command-mode keys that add, cut, retype or delete cells, with `control` focused."""
    control.focus()
    expect(control).to_be_focused()
    for key in ("b", "a", "x", "m", "y", "d", "d"):
        page.keyboard.press(key)
    expect(control).to_be_focused()


def send_keys(page: Page, chat: Locator, prompt: str) -> None:
    """Types a prompt in the focused chat's composer and sends it with Enter."""
    composer = chat.locator("textarea.acpnb-composer-input")
    expect(composer).to_be_focused()
    page.keyboard.type(prompt)
    page.keyboard.press("Enter")


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_notebook_shortcuts_never_act_from_the_chat(
    page: Page, server: JupyterServer, app: str
) -> None:
    filename = write_notebook(server, unique(f"keys-{app}"), CELLS)
    open_notebook(page, server, filename, app)
    chat = run_cell(page, 0).locator(".acpnb-root")
    expect(chat.locator(".acpnb-status")).to_have_text("idle")
    before = cells_state(page)
    # The notebook is in command mode with the chat's cell active, as after a click on it.
    cell(page, 0).locator(".jp-InputPrompt").click()
    expect(page.locator(".jp-Notebook.jp-mod-commandMode")).to_have_count(1)

    press_notebook_keys(page, chat.locator("button.acpnb-send"))
    chat.locator("textarea.acpnb-composer-input").focus()
    send_keys(page, chat, "ask-user")
    card = chat.locator(".acpnb-card-elicitation")
    # The focus was in the chat: the card takes it (its first choice).
    expect(card.get_by_role("radio", name="Red")).to_be_focused()
    press_notebook_keys(page, card.get_by_role("radio", name="Red"))
    press_notebook_keys(page, card.get_by_role("checkbox"))
    assert cells_state(page) == before
    expect(chat).to_have_count(1)
    # A page-wide shortcut still works from there: Ctrl+Shift+Y opens the Agent panel,
    # and the focus lands in its composer.
    page.keyboard.press("Control+Shift+Y")
    panel = agent_panel(page)
    expect(panel).to_be_visible()
    expect(panel.locator("textarea.acpnb-composer-input")).to_be_focused()


def test_a_keyboard_user_answers_and_stops_and_hears_each_answer_once(
    page: Page, server: JupyterServer
) -> None:
    ask = 'turn = chat.send_prompt("ask-user")'
    filename = write_notebook(server, unique("keyboard"), [OPEN, ask])
    open_notebook(page, server, filename)
    chat = run_cell(page, 0).locator(".acpnb-root")
    expect(chat.locator(".acpnb-status")).to_have_text("idle")
    composer = chat.locator("textarea.acpnb-composer-input")
    status = chat.locator(".acpnb-sr-only [role=status]")

    # A question asked from a cell: the focus stays in the notebook; the chat says so and
    # JupyterLab's notification offers to go to it.
    run_cell(page, 1)
    card = chat.locator(".acpnb-card-elicitation")
    expect(card).to_be_visible()
    expect(status).to_contain_text("is waiting for your answer")
    expect(card.get_by_role("radio", name="Red")).not_to_be_focused()
    toast = page.locator(".Toastify").get_by_role("button", name="Go to the question")
    toast.click()
    # The arrow keys move within its choices, Enter in its text box answers.
    expect(card.get_by_role("radio", name="Red")).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(card.get_by_role("radio", name="Green")).to_be_focused()
    expect(card.get_by_role("radio", name="Green")).to_be_checked()
    page.keyboard.press("Tab")
    expect(card.get_by_role("textbox", name="A note")).to_be_focused()
    page.keyboard.type("by keyboard")
    page.keyboard.press("Enter")
    expect(chat.locator(".acpnb-agent").last).to_contain_text('"question_0":"green"')
    expect(chat.locator(".acpnb-agent").last).to_contain_text('"note":"by keyboard"')
    expect(composer).to_be_focused()
    expect(status).to_have_text("Answer sent")
    expect(toast).to_have_count(0)

    # A permission: the card takes the focus, never a button; Tab, then Enter allows.
    send_keys(page, chat, "permission")
    permission = chat.locator(".acpnb-card-permission")
    expect(permission).to_be_focused()
    page.keyboard.press("Tab")
    expect(permission.get_by_role("button", name="Allow", exact=True)).to_be_focused()
    page.keyboard.press("Enter")
    expect(chat.locator(".acpnb-card-remnant").last).to_contain_text("Allowed (by you)")
    expect(chat.locator(".acpnb-agent").last).to_contain_text("permission: allow-once")
    expect(composer).to_be_focused()
    expect(status).to_contain_text("Allowed")

    # A streamed answer is read out once, not chunk by chunk; Escape stops the turn.
    chat.evaluate(COUNT_LIVE)
    send_keys(page, chat, "slow")
    expect(chat.locator(".acpnb-transcript")).to_have_attribute("aria-busy", "true")
    expect(chat.locator(".acpnb-agent").last).to_contain_text("tick 3 ")
    page.keyboard.press("Escape")
    expect(chat.locator(".acpnb-status")).to_contain_text(re.compile(r"stopped: .*cancelled"))
    expect(chat.locator(".acpnb-transcript")).to_have_attribute("aria-busy", "false")
    stopped = chat.locator(".acpnb-agent").last.inner_text()
    assert "tick 49" not in stopped, stopped
    said = chat.locator(".acpnb-sr-only [aria-live=polite]")
    expect(said).to_contain_text("tick 3")  # the cut answer is still read out, once
    live = page.evaluate("window.__acpnbLive")
    # Plus the status line's "responding" and "stopped: cancelled".
    assert len(stopped.strip()) <= live <= 2 * len(stopped) + 60, (live, stopped)

    # A whole 50-chunk answer adds at most twice its length to the live regions.
    chat.evaluate(COUNT_LIVE)
    send_keys(page, chat, "slow")
    expect(chat.locator(".acpnb-agent").last).to_have_text(SLOW.strip())
    expect(chat.locator(".acpnb-status")).to_have_text("idle")
    expect(said).to_contain_text(SLOW.strip())
    live = page.evaluate("window.__acpnbLive")
    assert len(SLOW.strip()) <= live <= 2 * len(SLOW), live
