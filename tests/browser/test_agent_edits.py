"""The agent works in the open notebook, end to end: the real claude wrapper (its model
scripted on 127.0.0.1) calls ``insert_cell`` and ``run_cell`` of the chat's notebook
tools; claude asks before each (mode default), and that permission card is the edit's
review, with the cell's diff. After Allow the cell and its output appear in the open
notebook with no reload and no file-changed dialog, and undo takes the cell back; No
leaves the notebook untouched; an edit naming a stale revision is refused.

In JupyterLab and Notebook 7 without collaboration (the edit goes to the open page), and
in JupyterLab with collaboration (the shared document: a second page sees the cell appear
live and undo in the first takes it back for both; with no page open at all the server
edits the shared document itself).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.chromium import PageLog
from tests.support.claude_wrapper import require_wrapper, wrapper_env
from tests.support.lab import (
    JupyterServer,
    cell,
    open_notebook,
    permission_card,
    send,
    start_server,
    unique,
    write_notebook,
)
from tests.support.mock_anthropic import MockAnthropic, text, tool_use

INSERT = "mcp__notebook__insert_cell"
RUN = "mcp__notebook__run_cell"
EDIT = "mcp__notebook__edit_cell"
# The chat asks before every tool call (claude's mode default), as a careful user has it.
CHAT = 'from acp_notebook import Chat\nchat = Chat("claude-code", mode="default")\nchat'


class ClaudeLab:
    def __init__(self, lab: JupyterServer, mock: MockAnthropic) -> None:
        self.lab, self.mock = lab, mock


def claude_lab(base: Path, rtc: bool) -> Iterator[ClaudeLab]:
    wrapper = require_wrapper()
    with MockAnthropic() as mock:
        env = wrapper_env(base / "home", mock.url)
        env["PATH"] = os.pathsep.join([str(wrapper.parent), os.environ.get("PATH", "")])
        lab = start_server(base, extra_env=env, rtc=rtc)
        try:
            yield ClaudeLab(lab, mock)
        finally:
            lab.stop()


@pytest.fixture(scope="module")
def page_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClaudeLab]:
    yield from claude_lab(tmp_path_factory.mktemp("edits-page"), rtc=False)


@pytest.fixture(scope="module")
def rtc_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClaudeLab]:
    yield from claude_lab(tmp_path_factory.mktemp("edits-rtc"), rtc=True)


def run_in_place(page: Page, index: int) -> None:
    """Run a cell with Ctrl+Enter: Shift+Enter on the last cell would add an empty one."""
    cell(page, index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Control+Enter")


def open_chat(page: Page, lab: JupyterServer, app: str = "lab") -> str:
    """A notebook whose one cell shows a claude chat, open in ``app`` and run."""
    filename = write_notebook(lab, unique("edits"), [CHAT])
    open_notebook(page, lab, filename, app)
    run_in_place(page, 0)
    expect(page.locator(".acpnb-status[data-status='ready']")).to_be_attached(timeout=90_000)
    return filename


def script_insert_and_run(mock: MockAnthropic, prompt: str, source: str, output: str) -> None:
    """The model inserts ``source`` at the end (index 1, after the chat's cell), runs it,
    and says what it printed."""
    mock.on_user(prompt, tool_use(INSERT, {"source": source}))
    mock.on_tool_result(INSERT, tool_use(RUN, {"index": 1}), contains="at index 1 ")
    mock.on_tool_result(RUN, text(f"It printed {output}."), contains=output)


def allow(page: Page, expected_diff: str | None = None) -> None:
    """Answer the pending permission card with claude's allow-once ("Yes")."""
    card = permission_card(page).filter(has=page.locator("button:not(:disabled)")).last
    expect(card).to_be_visible(timeout=90_000)
    if expected_diff is not None:
        # The agent's own request is the review: it shows the cell's diff.
        expect(card.locator(".acpnb-diff-body")).to_contain_text(expected_diff)
    card.get_by_role("button", name=re.compile(r"^(Yes|Allow)", re.I)).first.click()


def undo_in_notebook(page: Page) -> None:
    """``z`` in command mode, as a person takes back a cell change."""
    page.evaluate("document.activeElement?.blur()")
    cell(page, 0).locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("z")


def insert_and_run(page: Page, lab: ClaudeLab, marker: str) -> None:
    source = f"print({marker!r})"
    script_insert_and_run(lab.mock, f"Add a cell for {marker}", source, marker)
    send(page, f"Add a cell for {marker}")
    allow(page, source)
    added = cell(page, 1)
    expect(added.locator(".jp-InputArea-editor")).to_contain_text(source, timeout=60_000)
    allow(page)  # run_cell, reviewed like run_code: claude's own card
    expect(added.locator(".jp-OutputArea-output")).to_contain_text(marker, timeout=60_000)
    expect(added.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"))
    expect(page.locator(".acpnb-agent").last).to_contain_text(f"It printed {marker}.")


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_claude_inserts_and_runs_a_cell_in_the_open_page(
    page: Page, page_log: PageLog, page_lab: ClaudeLab, app: str
) -> None:
    filename = open_chat(page, page_lab.lab, app)
    marker = f"agent_{app}_{time.monotonic_ns() % 10_000}"
    insert_and_run(page, page_lab, marker)
    # The page holds the change (unsaved); the file on disk was not written behind it.
    on_disk = nbformat.read(page_lab.lab.root / filename, as_version=4)
    assert [c.source for c in on_disk.cells] == [CHAT]
    expect(page.locator(".jp-Dialog")).to_have_count(0)
    undo_in_notebook(page)
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(1)
    assert page_log.dialogs == []

    if app != "lab":
        return
    # No: claude never calls the tool, and the notebook stays as it was.
    page_lab.mock.on_user("Add a rejected cell", tool_use(INSERT, {"source": "rejected = 1"}))
    page_lab.mock.on(
        lambda r: any(t.tool_name == INSERT and t.is_error for t in r.tool_results),
        text("You declined."),
    )
    send(page, "Add a rejected cell")
    card = permission_card(page).filter(has=page.locator("button:not(:disabled)")).last
    expect(card.locator(".acpnb-diff-body")).to_contain_text("rejected = 1", timeout=90_000)
    card.get_by_role("button", name=re.compile(r"^(No|Reject)", re.I)).first.click()
    expect(page.locator(".acpnb-agent").last).to_contain_text("You declined.", timeout=60_000)
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(1)

    # An edit that names a revision the cell no longer has is refused with its source.
    stale = {"index": 0, "source": "overwritten = 1", "rev": "000000000000"}
    page_lab.mock.on_user("Change the first cell", tool_use(EDIT, stale))
    page_lab.mock.on_tool_result(EDIT, text("It changed since I read it."), contains="")
    send(page, "Change the first cell")
    allow(page)
    expect(page.locator(".acpnb-agent").last).to_contain_text("It changed since", timeout=60_000)
    [refused] = page_lab.mock.tool_results(EDIT)
    assert refused.is_error and "Chat(" in refused.text, refused.text
    expect(cell(page, 0).locator(".jp-InputArea-editor")).to_contain_text("Chat(")


def test_with_collaboration_every_page_sees_the_edit_and_none_is_needed(
    page: Page, browser: Browser, rtc_lab: ClaudeLab
) -> None:
    filename = open_chat(page, rtc_lab.lab, "lab")
    other = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
    try:
        open_notebook(other, rtc_lab.lab, filename)
        # The edit goes to the page the person was in last: the first, where they type the
        # prompt and answer the card, although the second opened after it.
        marker = f"shared_{time.monotonic_ns() % 10_000}"
        insert_and_run(page, rtc_lab, marker)
        # The second page follows the shared document: the cell and its output, live.
        added = cell(other, 1)
        expect(added.locator(".jp-InputArea-editor")).to_contain_text(marker)
        expect(added.locator(".jp-OutputArea-output")).to_contain_text(marker)
        expect(other.locator(".jp-Dialog")).to_have_count(0)
        # The page the chat is in made the change: its undo takes it back, for everyone.
        undo_in_notebook(page)
        for each in (page, other):
            expect(each.locator(".jp-Notebook .jp-Cell")).to_have_count(1)
    finally:
        other.context.close()

    # No page open: the kernel sends the prompt and its policy answers claude's card;
    # the edit lands in the shared document all the same, and a page opened later shows it.
    lone = write_notebook(
        rtc_lab.lab,
        unique("tabless"),
        [
            CHAT.removesuffix("chat") + "chat.on_permission(lambda request: 'allow-once')\nchat",
            "import threading\n"
            "threading.Timer(3, chat.send_prompt, ['Add a cell while nobody looks']).start()",
        ],
    )
    rtc_lab.mock.on_user("nobody looks", tool_use(INSERT, {"source": "tabless = 1"}))
    rtc_lab.mock.on_tool_result(INSERT, text("Added."), contains="at index 2 ")
    answered = len(rtc_lab.mock.tool_results(INSERT))
    # A page of its own: leaving a JupyterLab page asks first, which would keep it open.
    lone_page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
    try:
        open_notebook(lone_page, rtc_lab.lab, lone)
        run_in_place(lone_page, 0)
        ready = lone_page.locator(".acpnb-status[data-status='ready']")
        expect(ready).to_be_attached(timeout=90_000)
        run_in_place(lone_page, 1)
        prompt = cell(lone_page, 1).locator(".jp-InputPrompt")
        expect(prompt).to_have_text(re.compile(r"\[\d+\]"))
    finally:
        lone_page.context.close()  # the only page is gone; the kernel and its chat live on
    deadline = time.monotonic() + 90
    while len(rtc_lab.mock.tool_results(INSERT)) == answered:
        assert time.monotonic() < deadline, "the agent's insert never came back"
        time.sleep(0.2)
    result = rtc_lab.mock.tool_results(INSERT)[-1]
    assert not result.is_error and "shared" in result.text, result.text
    open_notebook(page, rtc_lab.lab, lone)
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(3)
    expect(cell(page, 2).locator(".jp-InputArea-editor")).to_contain_text("tabless = 1")
