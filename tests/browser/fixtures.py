"""Fixtures for the browser tests: one Jupyter server and one Chromium per session.

A plugin loaded once by tests/conftest.py, not a conftest: the fault suite's Chromium
cases share this one browser, since a second sync Playwright in the same run fails.

Debian's chromium is driven through Playwright's ``executable_path``; Playwright's own
browser download is never used (``scripts/ensure_chromium.py`` installs chromium).
A failing test leaves a full-page screenshot in ``test-artifacts/``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, expect, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from tests.support.chromium import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, PageLog
from tests.support.lab import JupyterServer, start_server

expect.set_options(timeout=30_000)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    lab = start_server(tmp_path_factory.mktemp("jupyter"))
    try:
        # Enabled by installing the package (its jupyter_server_config.d file), not by us.
        assert "acp_notebook | extension was successfully loaded" in lab.log_text(), (
            "the acp_notebook server extension is not loaded: `pip install -e .` enables it\n"
            + lab.log_text()
        )
        # Without real-time collaboration, though jupyter-collaboration is installed.
        assert "jupyter_server_ydoc | extension was successfully loaded" not in lab.log_text()
        # The browser socket is routed (a plain GET is refused for not being a WebSocket).
        assert lab.status("acp-notebook/ws/browser") == 400
        yield lab
    finally:
        lab.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/ensure_chromium.py", pytrace=False)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page_log() -> PageLog:
    return PageLog()


@pytest.fixture
def page(browser: Browser, page_log: PageLog, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    tab = context.new_page()

    def on_dialog(dialog: Dialog) -> None:
        page_log.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            page_log.errors.append(message.text)

    tab.on("dialog", on_dialog)
    tab.on("console", on_console)
    tab.on("pageerror", lambda error: page_log.errors.append(f"page error: {error}"))
    yield tab
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", request.node.name)
        with contextlib.suppress(PlaywrightError):  # a crashed page has nothing to show
            tab.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    context.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    # Keeps the call phase's report on the item, for the screenshot-on-failure above.
    report = yield
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]
    return report
