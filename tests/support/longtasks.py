"""The main thread's long tasks in a page, as the page itself reports them.

A ``PerformanceObserver`` for ``longtask`` entries (tasks of 50 ms and more) records
each one in the page; ``LongTasks.measure()`` brackets an action and returns what ran
long during it. Tasks under 50 ms are not reported at all, so "no entry" means "every
task stayed under 50 ms".
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from playwright.sync_api import Page

INSTALL = """
() => {
  if (window.__acpLongTasks) return;
  window.__acpLongTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      window.__acpLongTasks.push([entry.startTime, entry.duration]);
    }
  }).observe({ type: "longtask" });
}
"""

# The last message of the chat is "done N": read without Playwright's text matching, which
# would lay out and walk the whole (huge) last message on every poll.
DONE = """
(n) => {
  const items = document.querySelectorAll(".acpnb-root .acpnb-agent");
  const last = items[items.length - 1];
  return last !== undefined && last.textContent.length < 40 && last.textContent.trim() === `done ${n}`;
}
"""

# Two frames: whatever the last event scheduled has run (and been reported) by then.
SETTLE = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


@dataclass
class Measurement:
    """The long tasks (durations in ms) that ran during one measured action."""

    durations: list[float] = field(default_factory=list)

    @property
    def longest(self) -> float:
        """The longest task in ms (0 when every task stayed under the 50 ms threshold)."""
        return max(self.durations, default=0.0)

    @property
    def total(self) -> float:
        return sum(self.durations)

    def __str__(self) -> str:
        return (
            f"longest {self.longest:.0f} ms, {len(self.durations)} long, {self.total:.0f} ms in all"
        )


class LongTasks:
    """Collects a page's long tasks; install once the page is loaded, then ``measure``."""

    def __init__(self, page: Page) -> None:
        self.page = page
        page.evaluate(INSTALL)

    def take(self) -> list[float]:
        """The durations recorded since the last take (and forgets them)."""
        entries: list[list[float]] = self.page.evaluate(
            "() => window.__acpLongTasks.splice(0, window.__acpLongTasks.length)"
        )
        return [duration for _start, duration in entries]

    @contextmanager
    def measure(self) -> Iterator[Measurement]:
        """Long tasks of the block's action, filled in when the block ends."""
        self.page.evaluate(SETTLE)
        self.take()
        result = Measurement()
        yield result
        self.page.evaluate(SETTLE)
        # Entries are queued to the observer after their task: one more turn of the loop.
        self.page.wait_for_timeout(100)
        result.durations = self.take()


def wait_for_done(page: Page, turn: int, timeout_ms: float = 180_000) -> None:
    """Until the long-text agent's turn ``turn`` ended (its last message says "done N")."""
    page.wait_for_function(DONE, arg=turn, polling=200, timeout=timeout_ms)
