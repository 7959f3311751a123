"""The README's two-minute-tour pictures, taken from a real JupyterLab with the demo agent.

    .venv/bin/python scripts/tour_screenshots.py

Starts a Jupyter server as the browser tests do (tests/support/lab.py: its own settings,
Debian's chromium), opens a copy of the quickstart and writes:

- docs/tour-cards.png: the inline chat after `agentic` (a diff, a code block with Copy and
  Insert cell below) with a permission card waiting;
- docs/tour-panel.png: JupyterLab with the Agent panel open beside the notebook, a
  question card waiting in it.

Both are quantized to 256 colours, to stay small in the repository.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from PIL import Image  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.support.lab import (  # noqa: E402
    cell,
    copy_cleared,
    open_notebook,
    open_panel,
    run_cell,
    send_in,
    start_server,
)

DOCS = REPO / "docs"


def small_png(path: Path) -> None:
    """The screenshot at ``path`` in 256 colours."""
    with Image.open(path) as image:
        quantized = image.convert("RGB").quantize(256, dither=Image.Dither.NONE)
    quantized.save(path, optimize=True)


def main() -> None:
    with tempfile.TemporaryDirectory() as base:
        server = start_server(Path(base))
        try:
            copy_cleared(REPO / "notebooks" / "quickstart.ipynb", server.root / "quickstart.ipynb")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
                )
                page = browser.new_page(viewport={"width": 1280, "height": 820})
                open_notebook(page, server, "quickstart.ipynb")
                cell(page, 0).locator(".jp-InputPrompt").click()
                page.keyboard.press("Control+b")  # the file browser closed: room for the notebook
                chat = run_cell(page, 1).locator(".acpnb-root")
                send_in(chat, "agentic")
                expect(chat.locator(".acpnb-agent").last).to_contain_text("nothing else changed")
                send_in(chat, "permission")
                card = chat.locator(".acpnb-card-permission")
                expect(card).to_be_visible()
                page.mouse.move(0, 0)  # no hover marks
                chat.screenshot(path=str(DOCS / "tour-cards.png"))
                card.get_by_role("button", name="Allow", exact=True).click()
                expect(card).to_have_count(0)

                panel = open_panel(page)
                send_in(panel, "ask-user")
                expect(panel.locator(".acpnb-card-elicitation")).to_be_visible()
                page.mouse.move(0, 0)
                page.screenshot(path=str(DOCS / "tour-panel.png"))
                browser.close()
        finally:
            server.stop()
    for name in ("tour-cards.png", "tour-panel.png"):
        small_png(DOCS / name)
        print(f"docs/{name}: {(DOCS / name).stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
