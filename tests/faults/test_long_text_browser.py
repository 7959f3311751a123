"""Long unbroken text inside JupyterLab: no main-thread task may run long.

Agents print base64, minified code and long log lines. Laid out with
``overflow-wrap: anywhere`` inside JupyterLab's notebook, one 64 K-character word
blocked the page for seconds (a bare page does not show it), and a long answer
re-parsed all its Markdown every frame. Each case here streams one kind of long text
into a real chat in a real JupyterLab page and takes the longest task the page saw
(``PerformanceObserver`` ``longtask`` entries).
"""

from __future__ import annotations

import sys

import pytest
from playwright.sync_api import Page, expect

from tests.support.agents import LONG_TEXT_AGENT
from tests.support.chromium import PageLog
from tests.support.lab import (
    JupyterServer,
    chat,
    command_chat,
    open_chat_notebook,
    send,
)
from tests.support.longtasks import LongTasks, Measurement, wait_for_done

# The target is 50 ms (bench/run.py browser shows it); a 2-core CI box shared with other
# jobs adds stalls of its own (60-470 ms seen here), so the bounds catch a freeze, not a
# slow frame. Before the fixes, in this test: 2.3-10 s for one long word and 4.2-4.7 s
# for one frame of the 100,000-chunk answer; after (frozen pieces of a long paragraph,
# boxes of blocks that skip layout off-screen): 0-221 ms per case at a load of 10, no
# task over 50 ms on an idle box.
BOUND_MS = 500.0
ANSWER_BOUND_MS = 800.0
ANSWER = "answer 600000 6"
# One event of 262 KB (it took 224 ms): no live event may hold the page over 200 ms.
EVENT_BOUND_MS = 200.0
ONE_EVENT = ["message 262144", "tool 262144", "diff 262144", "thought 262144"]

CASES = [
    "message 65536",
    "message 256000",
    "stream 131072 4096",
    "code 65536",
    "code 256000",
    "tool 65536",
    "diff 65536",
    "title 65536",
    "thought 65536",
    # About 600 KB in 100,000 chunks: per frame, only the open Markdown block is parsed.
    ANSWER,
    *ONE_EVENT,
]


def bound(case: str) -> float:
    if case in ONE_EVENT:
        return EVENT_BOUND_MS
    return ANSWER_BOUND_MS if case == ANSWER else BOUND_MS


@pytest.mark.fault("long unbroken text, a 100,000-chunk answer and 262 KB events in JupyterLab")
@pytest.mark.timeout(400)
def test_long_text_keeps_the_page_responsive(
    page: Page, server: JupyterServer, page_log: PageLog
) -> None:
    open_chat_notebook(page, server, "long", command_chat([sys.executable, str(LONG_TEXT_AGENT)]))
    expect(chat(page).locator(".acpnb-status")).to_have_text("idle", timeout=60_000)
    tasks = LongTasks(page)
    figures: dict[str, Measurement] = {}
    for turn, case in enumerate(CASES, start=1):
        with tasks.measure() as figures[case]:
            send(page, case)
            wait_for_done(page, turn)
        if case.startswith("thought"):
            # The folded thought is laid out when opened.
            with tasks.measure() as figures["open the thought"]:
                chat(page).locator(".acpnb-thought summary").last.click()
    print("\nlongest main-thread task per case (JupyterLab):")
    for case, measured in figures.items():
        print(f"  {case:<22} {measured}")
    slow = {case: m.longest for case, m in figures.items() if m.longest > bound(case)}
    assert slow == {}, slow
    # Everything arrived, and nothing of it widens the notebook sideways.
    root = chat(page)
    assert root.bounding_box()["width"] <= page.viewport_size["width"]  # type: ignore[index]
    assert page_log.errors == [], page_log
