"""An agent's edit through the open page, without real-time collaboration: the server asks
the JupyterLab page that holds the notebook (the lab extension's page socket), the cell
appears without a reload, no "file changed on disk" dialog comes (the file is not written),
the cell carries the agent mark, `z` undoes it (a new source: Ctrl+Z in the cell, as the
user's own typing), and a stale edit is refused; a cell runs in the page."""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import nbformat
import pytest
from playwright.sync_api import Page, expect

from acp_notebook.wire.contracts import CellEdit
from tests.support.chromium import PageLog
from tests.support.lab import (
    REPO,
    JupyterServer,
    cell,
    open_notebook,
    save,
    start_server,
    unique,
    write_notebook,
)
from tests.support.page_edits import insert_edit

REPORTED_WITHIN = 30.0  # seconds for the page to report the notebook it opened


@pytest.fixture(scope="module")
def edit_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    """A server with the test extension that makes edits through ``Pages``, and without
    real-time collaboration (installed in the test environment: on, the pages would edit
    the server's shared document instead)."""
    base = tmp_path_factory.mktemp("page-edits")
    enabled = base / "config" / "jupyter_server_config.d" / "page_edit_server.json"
    enabled.parent.mkdir(parents=True)
    extensions = {
        "tests.support.page_edit_server": True,
        "jupyter_server_ydoc": False,
        "jupyter_server_fileid": False,
    }
    enabled.write_text(json.dumps({"ServerApp": {"jpserver_extensions": extensions}}))
    rtc_pages = ("@jupyter/docprovider-extension", "@jupyter/collaboration-extension")
    page_config = base / "config" / "labconfig" / "page_config.json"
    page_config.parent.mkdir(parents=True)
    page_config.write_text(json.dumps({"disabledExtensions": dict.fromkeys(rtc_pages, True)}))
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    server = start_server(base, extra_env={"PYTHONPATH": path})
    try:
        assert "jupyter_server_ydoc | extension was successfully loaded" not in server.log_text()
        yield server
    finally:
        server.stop()


def ask(server: JupyterServer, path: str, op: str, **args: Any) -> tuple[int, Any]:
    """The page's answer to ``op`` on the notebook ``path`` (through the server)."""
    body = json.dumps({"path": path, "op": op, **args}).encode()
    request = urllib.request.Request(server.url("acp-test/page-edit"), body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def post_edit(server: JupyterServer, edit: CellEdit) -> tuple[int, Any]:
    return ask(server, edit["path"], "apply", edit=edit)


def edit_once_reported(server: JupyterServer, edit: CellEdit) -> Any:
    """The edit's answer, once the page has told the server it holds the notebook."""
    deadline = time.monotonic() + REPORTED_WITHIN
    while (answer := post_edit(server, edit))[0] == 404 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert answer[0] == 200, answer
    return answer[1]


def test_an_edit_lands_in_the_open_notebook_and_z_undoes_it(
    page: Page, edit_server: JupyterServer, page_log: PageLog
) -> None:
    filename = write_notebook(edit_server, unique("page-edit"), ["a = 1"])
    open_notebook(page, edit_server, filename)
    insert = insert_edit(filename, 1, "b = a + 41")
    applied = edit_once_reported(edit_server, insert)
    assert applied["index"] == 1
    added = cell(page, 1)
    expect(added.locator(".jp-InputArea-editor")).to_have_text("b = a + 41")
    expect(added).to_have_class(re.compile(r"\bacpnb-agent-cell\b"))
    # Not written to the file: the page holds the change, unsaved.
    on_disk = nbformat.read(edit_server.root / filename, as_version=4)
    assert [c.source for c in on_disk.cells] == ["a = 1"]

    # An edit of a cell whose source is not what the agent read is refused, untouched.
    stale: CellEdit = {**insert, "op": "edit", "cellId": applied["cellId"], "before": "b = 0"}
    status, reason = post_edit(edit_server, stale)
    assert status == 409 and "b = a + 41" in reason
    expect(added.locator(".jp-InputArea-editor")).to_have_text("b = a + 41")

    # `z` in command mode takes the insert back, as for the user's own.
    page.evaluate("document.activeElement?.blur()")
    cell(page, 0).locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(1)

    # The page's model is the notebook: saving it raises no "file changed on disk" dialog.
    edit_once_reported(edit_server, insert)
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(2)
    save(page)
    expect(page.locator(".jp-Dialog")).to_have_count(0)
    on_disk = nbformat.read(edit_server.root / filename, as_version=4)
    assert [c.source for c in on_disk.cells] == ["a = 1", "b = a + 41"]
    assert page_log.dialogs == []

    # The mark reads "agent" until the user edits the cell.
    added = cell(page, 1)
    badge = "el => getComputedStyle(el, '::after').content"
    assert added.locator(".jp-InputPrompt").evaluate(badge) == '"agent"'
    added.locator(".jp-InputArea-editor").click()
    page.keyboard.press("End")
    page.keyboard.type(" + 1")
    expect(added).not_to_have_class(re.compile(r"\bacpnb-agent-cell\b"))


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_a_cell_runs_in_the_page_and_the_active_cell_is_read(
    page: Page, edit_server: JupyterServer, app: str
) -> None:
    filename = write_notebook(edit_server, unique("page-run"), ["a = 1", "print(a + 41)"])
    open_notebook(page, edit_server, filename, app)
    insert = insert_edit(filename, 2, "print('from the agent')\n6 * 7")
    cell_id = edit_once_reported(edit_server, insert)["cellId"]
    status, parts = ask(edit_server, filename, "run", cellId=cell_id, timeout=30)
    assert status == 200, parts
    text = "\n".join(p["text"] for p in parts if p["type"] == "text")
    assert "from the agent" in text and "42" in text and "[execution count 1]" in text
    ran = cell(page, 2)
    expect(ran.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[1\]"))
    expect(ran.locator(".jp-OutputArea-output").last).to_have_text("42")

    # The user's active cell and selected text.
    cell(page, 1).locator(".jp-InputArea-editor").click()
    page.keyboard.press("End")
    page.keyboard.press("Shift+Home")
    status, active = ask(edit_server, filename, "active")
    assert status == 200 and active["index"] == 1, active
    assert active["selection"] == "print(a + 41)"


def sleeping_cell(page: Page, server: JupyterServer, name: str) -> tuple[str, str]:
    """A notebook open in the page with a cell the agent inserted that sleeps a minute."""
    filename = write_notebook(server, unique(name), ["a = 1"])
    open_notebook(page, server, filename)
    sleep = insert_edit(filename, 1, "import time\ntime.sleep(60)")
    return filename, edit_once_reported(server, sleep)["cellId"]


@contextlib.contextmanager
def running(
    page: Page, server: JupyterServer, filename: str, cell_id: str
) -> Iterator[Future[tuple[int, Any]]]:
    """That cell run as the agent asks (through the server), running in the page meanwhile."""
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(ask, server, filename, "run", cellId=cell_id, timeout=120)
        expect(cell(page, 1).locator(".jp-InputPrompt")).to_have_text("[*]:")
        yield run


def test_a_run_past_its_timeout_is_interrupted_and_a_closed_page_ends_a_run(
    page: Page, edit_server: JupyterServer
) -> None:
    filename, cell_id = sleeping_cell(page, edit_server, "page-long-run")
    status, parts = ask(edit_server, filename, "run", cellId=cell_id, timeout=1)
    assert status == 200, parts
    assert "interrupted" in parts[-1]["text"]
    expect(cell(page, 1).locator(".jp-OutputArea-output")).to_contain_text("KeyboardInterrupt")

    # The page goes away while a run waits on it: the run ends at once, saying why.
    with running(page, edit_server, filename, cell_id) as run:
        started = time.monotonic()
        page.close()  # unsaved: a reload would ask first
        status, reason = run.result(timeout=60)
    assert status == 409 and "page closed" in reason
    assert time.monotonic() - started < 30


def test_a_kernel_restart_ends_a_run_in_the_page_and_says_so(
    page: Page, edit_server: JupyterServer
) -> None:
    filename, cell_id = sleeping_cell(page, edit_server, "page-restart")
    with running(page, edit_server, filename, cell_id) as run:
        started = time.monotonic()
        [session] = [s for s in edit_server.get_json("api/sessions") if s["path"] == filename]
        restart = f"api/kernels/{session['kernel']['id']}/restart"
        request = urllib.request.Request(edit_server.url(restart), b"", method="POST")
        urllib.request.urlopen(request, timeout=60).close()
        status, parts = run.result(timeout=60)
    assert status == 200, parts
    assert "kernel was restarted" in parts[-1]["text"]
    assert time.monotonic() - started < 30


def test_an_edited_source_is_undone_in_the_cell_as_the_users_own_typing(
    page: Page, edit_server: JupyterServer
) -> None:
    filename = write_notebook(edit_server, unique("page-edit-source"), ["a = 1", "b = 2"])
    open_notebook(page, edit_server, filename)
    change: CellEdit = {
        "op": "edit",
        "path": filename,
        "cellType": "code",
        "index": 1,
        "before": "b = 2",
        "after": "b = 3",
    }
    edit_once_reported(edit_server, change)
    editor = cell(page, 1).locator(".jp-InputArea-editor")
    expect(editor).to_have_text("b = 3")
    editor.click()
    page.keyboard.press("Control+z")
    expect(editor).to_have_text("b = 2")


def test_two_pages_with_one_notebook_the_one_the_user_is_in_gets_the_edit(
    page: Page, edit_server: JupyterServer
) -> None:
    filename = write_notebook(edit_server, unique("page-two-tabs"), ["a = 1"])
    open_notebook(page, edit_server, filename)
    other = page.context.new_page()
    open_notebook(other, edit_server, filename)
    insert = insert_edit(filename, 1, "b = 2")
    cells = ".jp-Notebook .jp-Cell"
    edit_once_reported(edit_server, insert)
    expect(other.locator(cells)).to_have_count(2)
    expect(page.locator(cells)).to_have_count(1)  # keeps its copy, as for the user's typing
    # The user goes back to the first tab: the next edit lands there.
    time.sleep(1.1)  # the page reports focus at most once a second
    page.bring_to_front()
    page.evaluate("window.dispatchEvent(new FocusEvent('focus'))")
    deadline = time.monotonic() + 10
    while page.locator(cells).count() < 2 and time.monotonic() < deadline:
        edit_once_reported(edit_server, {**insert, "after": "c = 3"})
        time.sleep(0.2)
    expect(page.locator(cells)).to_have_count(2)
    expect(cell(page, 1).locator(".jp-InputArea-editor")).to_have_text("c = 3")
