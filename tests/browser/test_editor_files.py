"""An agent's reads and writes through the client (fs/read_text_file, fs/write_text_file)
with the file open in a JupyterLab or Notebook 7 editor: the read has the editor's unsaved changes, the
write is reviewed in the chat with the file's diff, lands in the editor (nothing saved
behind it) and Ctrl+Z there takes it back; a write of what the file holds asks nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.support.lab import (
    JupyterServer,
    chat,
    collaborative_server,
    open_chat_notebook,
    permission_card,
    send,
    unique,
)

DEMO_CHAT = 'from acp_notebook import Chat\nchat = Chat("demo")\nawait chat.ready()\nchat'
ADDED = "Edited by the demo agent."


@pytest.fixture(scope="module")
def rtc_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    yield from collaborative_server(tmp_path_factory.mktemp("jupyter-rtc-files"))


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_a_write_through_the_client_lands_in_the_open_editor(
    page: Page, server: JupyterServer, app: str
) -> None:
    editor_round_trip(page, server, app, collaborative=False)


def test_with_real_time_collaboration_the_write_lands_in_the_shared_editor(
    page: Page, rtc_server: JupyterServer
) -> None:
    """The page names the file "RTC:notes.md"; it is the server's notes.md all the same.
    Collaboration saves the document itself, so the disk follows the editor there."""
    editor_round_trip(page, rtc_server, "lab", collaborative=True)


def editor_round_trip(page: Page, server: JupyterServer, app: str, collaborative: bool) -> None:
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
    expect(chat(other).get_by_text("edit-file: written.")).to_have_count(2)
    expect(other.locator(".acpnb-card-permission .acpnb-card-actions")).to_have_count(0)

    # Ctrl+Z in the editor takes the agent's write back, and only it.
    page.bring_to_front()
    editor.click()
    page.keyboard.press("Control+z")
    expect(editor).not_to_contain_text(ADDED)
    expect(editor).to_contain_text("unsaved line")
