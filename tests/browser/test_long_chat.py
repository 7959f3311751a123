"""A long conversation in JupyterLab: the 200th turn costs the page no more than the first.

Each turn of the demo agent's ``agentic`` answer adds a thought, three tool calls (one
with a diff) and a Markdown answer. Before finished items skipped style, layout and
paint while off-screen, every new turn and every click re-laid-out or re-styled the
whole transcript (a click in a 200-turn chat: 211 ms on an idle box, several seconds on
a loaded one). The longest main-thread task of each of the last turns, and of a click
in the transcript, is taken from the page (``PerformanceObserver`` ``longtask``).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.chromium import PageLog
from tests.support.lab import (
    JupyterServer,
    chat,
    open_chat_notebook,
    send,
)
from tests.support.longtasks import LongTasks, Measurement

TURNS = 200
MEASURED = 10  # the last turns, each measured on its own
# The target is 50 ms; a 2-core box running other browser tests stalls a page for a few
# hundred ms now and then, so the bound catches a transcript re-laid-out per turn.
BOUND_MS = 600.0

TURN_DONE = """
(n) => {
  const items = document.querySelectorAll(".acpnb-root .acpnb-agent");
  const last = items[items.length - 1];
  if (last === undefined || !last.textContent.startsWith(`Turn ${n}:`)) return false;
  // The turn ended (its Stop button is gone): a prompt sent before that is refused.
  return document.querySelector(".acpnb-root .acpnb-stop")?.hidden === true;
}
"""


def turn(page: Page, number: int) -> None:
    send(page, "agentic 20")
    page.wait_for_function(TURN_DONE, arg=number, polling=50, timeout=60_000)


@pytest.mark.timeout(900)
def test_each_new_turn_of_a_long_chat_stays_cheap(
    page: Page, server: JupyterServer, page_log: PageLog
) -> None:
    open_chat_notebook(
        page, server, "long-chat", 'from acp_notebook import Chat\nchat = Chat("demo")\nchat'
    )
    expect(chat(page).locator(".acpnb-status")).to_have_attribute(
        "data-status", "ready", timeout=60_000
    )
    for number in range(1, TURNS - MEASURED + 1):
        turn(page, number)
    tasks = LongTasks(page)
    figures: dict[str, Measurement] = {}
    for number in range(TURNS - MEASURED + 1, TURNS + 1):
        with tasks.measure() as figures[f"turn {number}"]:
            turn(page, number)
    with tasks.measure() as figures["click in the transcript"]:
        chat(page).locator(".acpnb-agent").last.click()
    print(f"\nlongest main-thread task, {TURNS} turns (JupyterLab):")
    for what, measured in figures.items():
        print(f"  {what:<24} {measured}")
    slow = {what: m.longest for what, m in figures.items() if m.longest >= BOUND_MS}
    assert slow == {}, slow
    # Every turn is there, and its diff: nothing was dropped to keep the page fast.
    root = chat(page)
    assert root.locator(".acpnb-diff").count() == TURNS
    assert root.locator(".acpnb-agent").nth(0).text_content().startswith("Turn 1:")  # type: ignore[union-attr]
    assert page_log.errors == [], page_log
