"""6. Browser: a long answer streamed into the widget in JupyterLab, in headless Chromium.

The figure is the longest task on the page's main thread while the answer streams in
(from a Chromium trace; the Long Tasks API reports the tasks over 50 ms, counted too).
The reference is the longest task when the same finished transcript is painted at once,
by a second view of the chat (a resync of the whole history).
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.browser.fixtures import CHROMIUM, CHROMIUM_ARGS
from tests.browser.lab import JupyterServer, chat, open_notebook, run_cell, send, write_notebook

from .common import Context, Row, fmt, stream_text

TARGET_MS = 50.0
OPEN_CHAT = """from acp_notebook import Chat
chat = Chat("demo", env={"ACP_DEMO_DELAY": "0"})
chat"""
# Installed before any script of the page: every long task the Long Tasks API reports.
LONG_TASKS = """
window.__longTasks = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.__longTasks.push(entry.duration);
}).observe({ type: "longtask", buffered: true });
"""
TRACE_CATEGORIES = ["toplevel", "disabled-by-default-devtools.timeline"]


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def notebook_page(
    browser: Browser, lab: JupyterServer, cells: list[str]
) -> Iterator[tuple[Page, Path]]:
    """A new notebook of ``cells`` open in JupyterLab, its kernel ready, nothing run yet."""
    filename = write_notebook(lab, f"bench-{uuid.uuid4().hex[:8]}", cells)
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = context.new_page()
        page.add_init_script(LONG_TASKS)
        open_notebook(page, lab, filename)
        yield page, lab.root / filename
    finally:
        context.close()


def wait_ready(page: Page) -> None:
    expect(chat(page).locator(".acpnb-status[data-status='ready']")).to_be_attached(timeout=60_000)


def wait_answer(page: Page, expected: str, timeout: float = 600) -> None:
    """Until the last chat view's last agent item shows ``expected`` (spaces trimmed)."""
    page.wait_for_function(
        """(expected) => {
            const views = document.querySelectorAll(".acpnb-root");
            const items = views[views.length - 1].querySelectorAll(".acpnb-agent");
            const item = items[items.length - 1];
            return item !== undefined && item.textContent.trim() === expected;
        }""",
        arg=expected,
        timeout=timeout * 1000,
        polling=100,
    )


@dataclass
class Tasks:
    """The main-thread tasks of one stretch of a page's life."""

    longest_ms: float
    long_tasks: int  # as the Long Tasks API saw them (over 50 ms)


@contextlib.contextmanager
def main_thread(browser: Browser, page: Page) -> Iterator[list[Tasks]]:
    """Traces the page while the block runs; the list gets the result when it ends."""
    page.evaluate("window.__longTasks.length = 0")
    browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
    out: list[Tasks] = []
    try:
        yield out
    finally:
        trace = json.loads(browser.stop_tracing())
    long_tasks = page.evaluate("window.__longTasks.length")
    out.append(Tasks(_longest_task_ms(trace), long_tasks))


def _longest_task_ms(trace: dict[str, Any]) -> float:
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    renderer_main = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "thread_name"
        and e.get("args", {}).get("name") == "CrRendererMain"
    }
    durations = [
        e.get("dur", 0) / 1000
        for e in events
        if e.get("ph") == "X"
        and e.get("name") in ("RunTask", "ThreadControllerImpl::RunTask")
        and (e["pid"], e["tid"]) in renderer_main
    ]
    return max(durations, default=0.0)


def run(ctx: Context) -> list[Row]:
    count = ctx.sizes.browser_chunks
    lab = ctx.server().lab
    expected = stream_text(count).strip()
    with chromium() as browser, notebook_page(browser, lab, [OPEN_CHAT, "chat"]) as (page, _):
        run_cell(page, 0)
        wait_ready(page)
        with main_thread(browser, page) as streaming:
            start = time.perf_counter()
            send(page, f"stream {count}")
            # Times out unless the transcript is the whole answer, in order.
            wait_answer(page, expected)
            elapsed = time.perf_counter() - start
            page.wait_for_timeout(1000)  # the paints that follow the last chunk
        with main_thread(browser, page) as at_once:
            run_cell(page, 1)  # a second view of the same chat: the transcript painted at once
            wait_answer(page, expected)
            page.wait_for_timeout(1000)
    live, reference = streaming[0], at_once[0]
    return [
        Row(
            f"6 browser, {count:,}-chunk answer",
            f"longest task while streaming ({count / elapsed:,.0f} chunks/s)",
            f"{fmt(live.longest_ms, 'ms')} ({live.long_tasks} over 50 ms)",
            f"{fmt(reference.longest_ms, 'ms')} (same transcript painted at once)",
            live.longest_ms / reference.longest_ms if reference.longest_ms else None,
            f"< {TARGET_MS:g} ms, transcript right",
            live.longest_ms < TARGET_MS,
        )
    ]
