"""This process's peak resident memory (Linux /proc), for the tests and benchmarks that
bound what a big agent line costs."""

from __future__ import annotations

import re
from pathlib import Path


def peak_rss() -> int:
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]


def reset_peak_rss() -> int:
    """Resets the peak to the current RSS, and returns it."""
    Path("/proc/self/clear_refs").write_text("5")
    return peak_rss()
