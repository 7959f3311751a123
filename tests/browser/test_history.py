"""The Agent panel's history in a real JupyterLab and Notebook 7: the demo agent's past
sessions in the notebook's folder, found by title, opened (the conversation comes back
and goes on), forked and deleted."""

from __future__ import annotations

from datetime import timedelta

import pytest
from playwright.sync_api import Page, expect

from tests.support.lab import (
    JupyterServer,
    open_notebook,
    open_panel,
    send_in,
    unique,
    write_notebook,
)
from tests.support.past_sessions import last_used, past_sessions


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_find_yesterdays_conversation_continue_fork_and_delete(
    page: Page, server: JupyterServer, app: str
) -> None:
    folder = unique(f"history-{app}")
    (server.root / folder).mkdir()
    rainfall, question, another = past_sessions(
        server.root / folder, ["plot the rainfall", "a question", "another question"]
    )
    # Stored to the second: apart by an hour, and the rainfall talk yesterday.
    for hours, session_id in ((1, another), (2, question), (26, rainfall)):
        last_used(session_id, timedelta(hours=hours))
    filename = write_notebook(server, f"{folder}/analysis", ["1 + 1"])
    open_notebook(page, server, filename, app)

    panel = open_panel(page)
    panel.get_by_role("button", name="History").click()
    rows = panel.locator(".acpnb-history-row")
    # The folder's sessions, the most recent first, each by its title and when it was used.
    expect(rows.locator(".acpnb-history-open")).to_have_text(
        ["another question", "a question", "plot the rainfall"]
    )
    expect(rows.nth(2).locator(".acpnb-history-when")).to_have_text("yesterday")

    search = panel.get_by_role("searchbox", name="Search by title")
    search.fill("rain")
    expect(rows).to_have_count(1)
    rows.first.get_by_role("button", name="plot the rainfall").click()

    # The conversation comes back in the panel, under its title, and goes on.
    shown = panel.locator(".acpnb-panel-body .acpnb-root")
    expect(shown.locator(".acpnb-user").first).to_contain_text("plot the rainfall")
    expect(shown.locator(".acpnb-chat-title")).to_have_text("plot the rainfall")
    send_in(shown, "and the snowfall")
    expect(shown.locator(".acpnb-agent").last).to_contain_text("You said: and the snowfall")
    chats = panel.locator(".acpnb-panel-chats")
    first_chat = chats.input_value()

    # A fork of the shown chat opens beside it; both branches are in the list.
    panel.get_by_role("button", name="Fork chat").click()
    expect(chats.locator("option")).to_have_count(2)
    expect(chats).not_to_have_value(first_chat)
    expect(shown.locator(".acpnb-user").nth(1)).to_contain_text("and the snowfall")
    expect(rows.locator(".acpnb-history-open")).to_have_text(
        ["plot the rainfall", "plot the rainfall"]
    )
    # Opening the original again shows its chat: one live chat per session.
    panel.locator(f'.acpnb-history-row[data-session-id="{rainfall}"] .acpnb-history-open').click()
    expect(chats).to_have_value(first_chat)
    expect(chats.locator("option")).to_have_count(2)

    # Deleting asks first; cancelled, nothing goes; confirmed, the session is gone.
    search.fill("a question")
    expect(rows).to_have_count(1)
    rows.first.get_by_role("button", name="Delete").click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("a question")
    dialog.get_by_role("button", name="Cancel").click()
    expect(rows).to_have_count(1)
    rows.first.get_by_role("button", name="Delete").click()
    dialog.get_by_role("button", name="Delete").click()
    expect(rows).to_have_count(0)
    search.fill("")
    expect(rows).to_have_count(3)
    expect(panel.locator(f'.acpnb-history-row[data-session-id="{question}"]')).to_have_count(0)
