"""12. Agent edits: how soon an agent's ``insert_cell`` shows in the open notebook, and
``read_cells`` of a 1,000-cell notebook from the live document.

JupyterLab without collaboration (the edit goes to the open page) and with it (the
edit goes to the server's shared document, which the page follows). A chat with
"accept edits" on runs the demo agent, which hands its notebook tools to this script
(its test-only ``probe``), which calls them as an agent would. The time
runs from just before the MCP call to the moment the page's DOM holds the new cell's
text, seen by a MutationObserver in the page (both clocks are this machine's wall clock).

References from the same run, on the same page: the same insert made by the page's own
notebook API (``sharedModel.insertCell`` called through Playwright) for the edit, and the
saved file read through the server's contents API for ``read_cells``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from playwright.sync_api import Page

from acp_notebook.agent.mcp_servers import SECRET_HEADER
from tests.support.agents import DEMO_FAULTS
from tests.support.lab import start_server
from tests.support.mcp_client import text_of

from .browser import chromium, open_page, progress, write_cells
from .common import Context, Row, fmt

T = TypeVar("T")
EDIT_TARGET = 2.0  # times the page's own insert
READ_TARGET_MS = 300.0
CELLS = 1000
# Set up by the page: when the DOM first holds each awaited text (Date.now()).
OBSERVE = """() => {
  window.__seen = {};
  window.__awaited = new Set();
  const check = () => {
    for (const text of window.__awaited) {
      for (const editor of document.querySelectorAll(".jp-Cell .cm-content")) {
        if (editor.textContent.includes(text)) {
          window.__seen[text] = Date.now();
          window.__awaited.delete(text);
          break;
        }
      }
    }
  };
  new MutationObserver(check).observe(document.body,
    { childList: true, subtree: true, characterData: true });
}"""
AWAIT = "(text) => { window.__awaited.add(text); }"
SEEN = "(text) => window.__seen[text] ?? null"
# The page's own notebook API, as an extension would insert a cell. Both inserts go
# right under the chat's cell, in view: JupyterLab draws no editor for a cell out of view.
PAGE_INSERT = """(text) => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  notebook.model.sharedModel.insertCell(1, { cell_type: "code", source: text });
}"""


def _chat_cell(probe_file: Path) -> str:
    return (
        "from acp_notebook import Chat\n"
        f"chat = Chat(command={DEMO_FAULTS!r}, env={{'ACP_DEMO_DELAY': '0'}})\n"
        "chat.accept_edits = True\n"
        f"chat.send_prompt('probe {probe_file}')\n"
        "chat"
    )


def _endpoint(probe_file: Path, timeout: float = 60) -> tuple[str, str]:
    """The chat's notebook tools, as the probe agent was handed them."""
    deadline = time.monotonic() + timeout
    while not probe_file.exists():
        if time.monotonic() > deadline:
            raise TimeoutError("the probe agent never got its session")
        time.sleep(0.05)
    server = json.loads(probe_file.read_text())
    headers = {h["name"]: h["value"] for h in server.get("headers", [])}
    return server["url"], headers[SECRET_HEADER]


def _seen(page: Page, text: str, timeout: float = 30) -> float:
    deadline = time.monotonic() + timeout
    while (seen := page.evaluate(SEEN, text)) is None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{text!r} never showed in the page")
        time.sleep(0.005)
    return float(seen)


class _Agent:
    """One MCP session to the chat's notebook tools, kept open as an agent keeps it, on
    a loop of its own (sync Playwright owns this thread)."""

    def __init__(self, url: str, secret: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._stack = contextlib.AsyncExitStack()
        self._client: Client = self._wait(self._open(url, secret))

    def _wait(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(120)

    async def _open(self, url: str, secret: str) -> Client:
        http = await self._stack.enter_async_context(
            httpx2.AsyncClient(headers={SECRET_HEADER: secret}, timeout=120)
        )
        transport = streamable_http_client(url, http_client=http)
        return await self._stack.enter_async_context(Client(transport))

    def call(self, name: str, args: dict[str, Any]) -> str:
        result = self._wait(self._client.call_tool(name, args))
        if result.is_error:
            raise RuntimeError(f"{name} failed: {text_of(result)}")
        return text_of(result)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._wait(self._stack.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def _edit_times(page: Page, agent: _Agent, repeats: int) -> tuple[float, float]:
    """Median ms from the call to the cell in the DOM: the tool, then the page's API."""
    page.evaluate(OBSERVE)
    tool, own = [], []
    for i in range(repeats):
        for kind, times in (("tool", tool), ("page", own)):
            text = f"marker_{kind}_{i} = {i}"
            page.evaluate(AWAIT, text)
            started = time.time() * 1000
            if kind == "tool":
                agent.call("insert_cell", {"source": text, "index": 1})
            else:
                page.evaluate(PAGE_INSERT, text)
            times.append(_seen(page, text) - started)
    return statistics.median(tool), statistics.median(own)


def _read_times(lab: Any, filename: str, agent: _Agent, repeats: int) -> tuple[float, float]:
    """Median ms of read_cells (its last page of 50) and of reading the saved file."""
    reads, files = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        text = agent.call("read_cells", {"start": -50, "count": 50})
        reads.append((time.perf_counter() - started) * 1000)
        assert f"{CELLS + 1} cells" in text, text[:200]
        started = time.perf_counter()
        lab.get_json(f"api/contents/{filename}")
        files.append((time.perf_counter() - started) * 1000)
    return statistics.median(reads), statistics.median(files)


def run(ctx: Context) -> list[Row]:
    repeats = max(5, ctx.sizes.repeats * 3)
    rows: list[Row] = []
    with chromium() as browser:
        for rtc in (False, True):
            where = "with collaboration" if rtc else "without collaboration"
            name = f"12 agent edits, JupyterLab {where}"
            if not ctx.wanted(name):
                continue
            progress(name)
            base = ctx.work / f"edits-{'rtc' if rtc else 'page'}"
            lab = start_server(base, rtc=rtc, extra_args=["--LabApp.expose_app_in_browser=True"])
            try:
                probe_file = base / "probe.json"
                cells = [("code", _chat_cell(probe_file))]
                cells += [("code", f"x_{i} = {i}") for i in range(CELLS)]
                filename = write_cells(lab, cells)
                with open_page(browser, lab, filename) as page:
                    page.locator(".jp-Notebook .jp-Cell").first.locator(
                        ".jp-InputArea-editor"
                    ).click()
                    page.keyboard.press("Shift+Enter")
                    agent = _Agent(*_endpoint(probe_file))
                    try:
                        read, saved = _read_times(lab, filename, agent, repeats)
                        tool, own = _edit_times(page, agent, repeats)
                    finally:
                        agent.close()
            finally:
                lab.stop()
            rows.append(
                Row(
                    f"{name}: insert_cell until shown",
                    "time (median)",
                    fmt(tool, "ms"),
                    f"{fmt(own, 'ms')}: the page's own insertCell",
                    tool / own,
                    f"≤ {EDIT_TARGET:g}x",
                    tool <= EDIT_TARGET * own,
                )
            )
            rows.append(
                Row(
                    f"{name}: read_cells of {CELLS:,} cells",
                    "time (median)",
                    fmt(read, "ms"),
                    f"{fmt(saved, 'ms')}: the saved file through the contents API",
                    read / saved,
                    f"< {READ_TARGET_MS:g} ms",
                    read < READ_TARGET_MS,
                )
            )
    return rows
