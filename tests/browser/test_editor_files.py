"""An agent's reads and writes through the client (fs/read_text_file, fs/write_text_file)
with the file open in a JupyterLab or Notebook 7 editor: the read has the editor's unsaved
changes, the write is reviewed in the chat with the file's diff, lands in the editor
(nothing saved behind it) and Ctrl+Z there takes it back; a write of what the file holds
asks nothing. A notebook open in a page is read as the page has it, unsaved cells
included, as the text its save writes."""

from __future__ import annotations

import time
from collections.abc import Iterator

import nbformat
import pytest
from playwright.sync_api import Page, expect

from tests.support.lab import (
    JupyterServer,
    cell,
    chat,
    collaborative_server,
    open_chat_notebook,
    open_notebook,
    permission_card,
    save,
    send,
    unique,
    write_notebook,
)

DEMO_CHAT = 'from acp_notebook import Chat\nchat = Chat("demo")\nawait chat.ready()\nchat'
ADDED = "Edited by the demo agent."


@pytest.fixture(scope="module")
def rtc_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    yield from collaborative_server(tmp_path_factory.mktemp("jupyter-rtc-files"))


def editor_round_trip(page: Page, server: JupyterServer, app: str, collaborative: bool) -> None:
    """A text file open in an editor: read with its unsaved line; the reviewed write lands
    in the editor, and its undo takes it back."""
    name = f"{unique('notes')}.md"
    (server.root / name).write_text("# Notes\n")
    # The file in JupyterLab's editor, or in Notebook 7's editor page.
    page.goto(server.url(f"lab/tree/{name}?reset" if app == "lab" else f"edit/{name}"))
    editor = page.locator(".jp-FileEditor .cm-content")
    expect(editor).to_contain_text("# Notes")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("unsaved line")
    page.keyboard.press("Enter")

    # The chat in another tab of the same browser: the page socket of this one answers.
    other = page.context.new_page()
    open_chat_notebook(other, server, "editor-files", DEMO_CHAT)
    send(other, f"edit-file {name}")
    card = permission_card(other)
    expect(card).to_be_visible()
    expect(card).to_contain_text("wants to write a file")
    expect(card.locator(".acpnb-card-title")).to_have_text(f"Changed file {name}")
    expect(card.locator(".acpnb-diff-path")).to_contain_text(
        "the open editor (its undo takes the change back)"
    )
    # The diff is over what the editor holds, unsaved line included.
    body = card.locator(".acpnb-diff-body")
    expect(body).to_contain_text(" unsaved line")
    expect(body).to_contain_text(f"+{ADDED}")
    card.get_by_role("button", name="Accept", exact=True).click()
    expect(chat(other)).to_contain_text("edit-file: written.")
    expect(chat(other)).to_contain_text("edit-file: read 2 lines")

    # In the editor, unsaved: the file on disk is as it was.
    expect(editor).to_contain_text(ADDED)
    expect(editor).to_contain_text("unsaved line")
    if not collaborative:
        assert (server.root / name).read_text() == "# Notes\n"

    # A write of what the editor holds: answered without a card.
    send(other, f"edit-file-same {name}")
    # Counted in the transcript: the screen reader's region speaks the messages too.
    transcript = chat(other).locator(".acpnb-transcript")
    expect(transcript.get_by_text("edit-file: written.")).to_have_count(2)
    expect(other.locator(".acpnb-card-permission .acpnb-card-actions")).to_have_count(0)

    # Ctrl+Z in the editor takes the agent's write back, and only it.
    page.bring_to_front()
    editor.click()
    page.keyboard.press("Control+z")
    expect(editor).not_to_contain_text(ADDED)
    expect(editor).to_contain_text("unsaved line")


def notebook_read(page: Page, server: JupyterServer, app: str, collaborative: bool) -> None:
    """A notebook open in a page with an unsaved edit of a cell: read with it, as the text
    its save writes; a write to it is refused before any card."""
    filename = write_notebook(server, unique("live"), ["x = 1"])
    saved = (server.root / filename).read_text()
    open_notebook(page, server, filename, app)
    cell(page, 0).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("  # unsaved edit")
    expect(cell(page, 0)).to_contain_text("x = 1  # unsaved edit")

    other = page.context.new_page()
    open_chat_notebook(other, server, "notebook-read", DEMO_CHAT)
    send(other, f"read-file {filename}")
    expect(chat(other)).to_contain_text(f"read-file: {filename}:")
    block = chat(other).locator("pre").last
    expect(block).to_contain_text('"nbformat_minor"')  # the whole text
    text = block.text_content() or ""
    read = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    assert read.cells[0].source == "x = 1  # unsaved edit", text
    # The shape of a saved .ipynb: what nbformat writes for the same notebook.
    assert text == nbformat.writes(read) + "\n"
    # The notebook tools change an open notebook, not a write of its file.
    send(other, f"edit-file {filename}")
    expect(chat(other)).to_contain_text(f"{filename} is open as a notebook in a page")
    expect(permission_card(other)).to_have_count(0)
    if collaborative:
        return  # collaboration saves the document itself
    assert (server.root / filename).read_text() == saved  # nothing saved behind the page
    # Saved by the page, the file is what the agent read.
    page.bring_to_front()
    save(page)
    deadline = time.monotonic() + 30  # Notebook 7 clears its dirty mark before the file is written
    while (server.root / filename).read_text() == saved and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (server.root / filename).read_text() == text


# What the agent does through the client, each with its file open in a page.
SCENARIOS = {"editor": editor_round_trip, "notebook": notebook_read}


@pytest.mark.parametrize("app", ["lab", "notebook"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_through_the_client_with_the_file_open_in_a_page(
    page: Page, server: JupyterServer, app: str, scenario: str
) -> None:
    SCENARIOS[scenario](page, server, app, False)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_with_real_time_collaboration(page: Page, rtc_server: JupyterServer, scenario: str) -> None:
    """The page may name a file "RTC:notes.md"; it is the server's notes.md all the same.
    Collaboration saves the document itself, so the disk follows the page there."""
    SCENARIOS[scenario](page, rtc_server, "lab", True)
