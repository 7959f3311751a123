"""The Chromium the browser tests drive (Debian's, through Playwright's ``executable_path``)
and what a page did besides rendering."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .lab import REPO

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = REPO / "test-artifacts"


@dataclass
class PageLog:
    """What a page did besides rendering: dialogs it opened, errors it logged."""

    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
