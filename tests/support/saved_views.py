"""A chat's saved output as the browser tests check it: the chat in a notebook's first
cell, its answerable card, and a watch for any moment it says the chat exited."""

from __future__ import annotations

from playwright.sync_api import Locator, Page, expect

from .lab import cell

# Records every status line of a chat that says it exited, from the page's first moment:
# a false ending shown for a moment is as wrong as one that stays.
WATCH_ENDINGS = """
window.__acpEndings = [];
new MutationObserver(() => {
  for (const status of document.querySelectorAll(".acpnb-status")) {
    const text = status.textContent ?? "";
    if (text.startsWith("exited") && !window.__acpEndings.includes(text)) {
      window.__acpEndings.push(text);
    }
  }
}).observe(document, { subtree: true, childList: true, characterData: true });
"""

# A notebook cell showing a ready demo chat; `args` go to `Chat`.
CHAT = "from acp_notebook import Chat\nchat = Chat('demo'{args})\nawait chat.ready()\nchat"


def watch_endings(page: Page) -> None:
    """From the next page load on, ``endings(page)`` lists every "exited" status shown."""
    page.add_init_script(WATCH_ENDINGS)


def endings(page: Page) -> list[str]:
    found: list[str] = page.evaluate("window.__acpEndings")
    return found


def chat_output(page: Page) -> Locator:
    """The output of the first cell that shows the chat (its last)."""
    return cell(page, 0).locator(".jp-OutputArea-output").last


def live_card(page: Page) -> Locator:
    """The chat's question card that can be answered (a saved copy's cards are inert)."""
    return chat_output(page).locator(".acpnb-card-elicitation:not([inert])")


def answer(card: Locator, colour: str) -> None:
    """Picks ``colour`` in the demo agent's question card and answers."""
    expect(card).to_be_visible(timeout=60_000)
    card.get_by_role("radio", name=colour).check()
    card.get_by_role("button", name="Answer").click()
