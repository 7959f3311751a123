"""Real-time collaboration in a real JupyterLab: an agent's edit through the server's
shared document shows live in every page that has the notebook open, with no reload,
and the agent shows as a collaborator while it edits."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support import page_edit_server
from tests.support.lab import (
    TOKEN,
    JupyterServer,
    cell,
    checkout_env,
    open_notebook,
    start_server,
    unique,
    write_notebook,
)

AGENT = "Demo agent"


@pytest.fixture(scope="module")
def rtc_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    # The test extension is a module of this checkout: the server must import it.
    lab = start_server(
        tmp_path_factory.mktemp("jupyter-rtc"),
        rtc=True,
        extensions={page_edit_server.__name__: True},
        extra_env=checkout_env(),
    )
    try:
        for name in ("jupyter_server_ydoc", page_edit_server.__name__):
            assert f"{name} | extension was successfully loaded" in lab.log_text(), lab.log_text()
        yield lab
    finally:
        lab.stop()


def agent_edit(server: JupyterServer, edit: dict[str, Any]) -> dict[str, Any]:
    """The edit made through the server's shared document, as the agent's tools make it."""
    body = {"path": edit["path"], "agent": AGENT, "op": "apply", "edit": edit}
    body["source"] = "shared_documents"  # the extension's SharedDocuments
    request = urllib.request.Request(
        server.url(page_edit_server.ROUTE),
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            answer: dict[str, Any] = json.load(response)
            return answer
    except urllib.error.HTTPError as error:
        raise AssertionError(error.read().decode(errors="replace")) from error


def test_an_agent_edit_needs_no_page_and_shows_live_in_every_open_page(
    page: Page, browser: Browser, rtc_server: JupyterServer
) -> None:
    filename = write_notebook(rtc_server, unique("rtc"), ["x = 1"])
    insert = {"op": "insert", "path": filename, "cellType": "code"}
    # No page has the notebook open: the edit goes into the shared document all the same.
    agent_edit(rtc_server, {**insert, "index": 0, "before": "", "after": "first = 0"})
    other = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
    try:
        pages = (page, other)
        for each in pages:
            open_notebook(each, rtc_server, filename)
            expect(cell(each, 0).locator(".jp-InputArea-editor")).to_contain_text("first = 0")
        applied = agent_edit(
            rtc_server, {**insert, "index": 2, "before": "", "after": "agent_wrote = 2"}
        )
        assert applied["index"] == 2
        for each in pages:
            expect(each.locator(".jp-Notebook .jp-Cell")).to_have_count(3)
            expect(cell(each, 2).locator(".jp-InputArea-editor")).to_contain_text("agent_wrote = 2")
            # Among the online collaborators, under the agent's name.
            each.get_by_role("tab", name="Collaboration").click()
            expect(each.locator(".jp-CollaboratorHeader", has_text=AGENT)).to_be_visible()
        # An edit of a cell both pages show changes it in both.
        change = {"op": "edit", "path": filename, "cellType": "code", "index": 1}
        agent_edit(rtc_server, {**change, "before": "x = 1", "after": "x = 10"})
        for each in pages:
            expect(cell(each, 1).locator(".jp-InputArea-editor")).to_contain_text("x = 10")
    finally:
        other.context.close()
