"""Who may answer, in real JupyterLab pages (issue 26, item 1).

On a plain server the token's holder is one person in any browser: a second browser
context (no cookies shared, so another "Anonymous ..." login) answers the card the
first one shows, and goes on prompting and answering after its cookie is cleared. With named users in a shared notebook (real-time collaboration), the
collaborator who does not own the chat sees it live and is told on the card, before any
click, that only its owner can answer; once the owner lets anyone answer, the
collaborator answers and both pages say by whom.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.support.identities import BOB_TOKEN, NamedUsers
from tests.support.lab import (
    JupyterServer,
    checkout_env,
    open_notebook,
    open_panel,
    run_cell,
    send_in,
    start_server,
    unique,
    write_notebook,
)

OPEN = ["from acp_notebook import Chat\nchat = Chat('demo')\nchat"]


@pytest.fixture(scope="module")
def named_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    # The identity provider is a module of this checkout: the server must import it.
    named: dict[str, Any] = {"rtc": True, "extra_args": NamedUsers.ARGS}
    lab = start_server(tmp_path_factory.mktemp("jupyter-named"), extra_env=checkout_env(), **named)
    try:
        assert "jupyter_server_ydoc | extension was successfully loaded" in lab.log_text()
        yield lab
    finally:
        lab.stop()


def second_page(browser: Browser) -> Page:
    """Another browser: no cookie of the first page's."""
    return browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()


def permission_card(box: Locator) -> Locator:
    return box.locator(".acpnb-card-permission")


def test_the_token_holder_answers_from_a_second_browser_and_after_clearing_cookies(
    page: Page, browser: Browser, server: JupyterServer
) -> None:
    filename = write_notebook(server, unique("second-browser"), OPEN)
    open_notebook(page, server, filename)
    inline = run_cell(page, 0).locator(".acpnb-root")
    send_in(inline, "permission")
    expect(permission_card(inline)).to_be_visible()
    # The owner's page offers sharing; there is no one else to share with here.
    expect(inline.locator(".acpnb-share")).to_be_visible()

    other = second_page(browser)
    try:
        open_notebook(other, server, filename)  # the same kernel, another anonymous login
        panel = open_panel(other)
        card = permission_card(panel)
        expect(card).to_be_visible()
        expect(card.locator(".acpnb-card-locked")).to_be_hidden()
        card.get_by_role("button", name="Allow", exact=True).click()
        # Answered as the second browser's login: "you" there, "another browser" here.
        expect(panel.locator(".acpnb-card-remnant")).to_have_text("Allowed (by you)")
        expect(inline.locator(".acpnb-card-remnant")).to_have_text("Allowed (by another browser)")

        # The second browser's cookie is cleared mid-chat: logged in again with the
        # token, it is yet another anonymous user, and still the chat's owner.
        other.context.clear_cookies()
        open_notebook(other, server, filename)
        panel = open_panel(other)
        send_in(panel, "permission")
        card = permission_card(panel)
        expect(card).to_be_visible()
        card.get_by_role("button", name="Allow", exact=True).click()
        # Its earlier answer was another login's: nothing was refused, the name moved on.
        expect(panel.locator(".acpnb-card-remnant")).to_have_text(
            ["Allowed (by another browser)", "Allowed (by you)"]
        )
        expect(inline.locator(".acpnb-card-remnant").last).to_have_text(
            "Allowed (by another browser)"
        )
    finally:
        other.context.close()


def test_a_collaborator_is_told_who_may_answer_until_the_owner_shares(
    page: Page, browser: Browser, named_server: JupyterServer
) -> None:
    filename = write_notebook(named_server, unique("shared-chat"), OPEN)
    bob = second_page(browser)
    try:
        open_notebook(page, named_server, filename)  # Alice: the server's token
        open_notebook(bob, named_server, filename, token=BOB_TOKEN)
        alices = run_cell(page, 0).locator(".acpnb-root")
        send_in(alices, "permission")
        expect(permission_card(alices)).to_be_visible()

        # Bob sees the chat live, and is told before any click that only Alice answers.
        panel = open_panel(bob)
        expect(panel.locator(".acpnb-panel-chats option")).to_have_text(re.compile(r"· Alice's$"))
        card = permission_card(panel)
        expect(card).to_be_visible()
        expect(card.locator(".acpnb-card-locked")).to_contain_text("Only Alice can answer")
        expect(card.get_by_role("button", name="Allow", exact=True)).to_be_disabled()
        expect(panel.locator("textarea.acpnb-composer-input")).to_be_disabled()
        expect(panel.locator(".acpnb-composer-locked")).to_contain_text("Only Alice")
        expect(panel.locator(".acpnb-share")).to_be_hidden()  # sharing is Alice's
        expect(panel.locator(".acpnb-stop")).to_be_hidden()

        # Alice lets anyone answer: Bob's card is his to answer now.
        alices.locator(".acpnb-share input").check()
        expect(card.locator(".acpnb-card-locked")).to_be_hidden()
        card.get_by_role("button", name="Allow", exact=True).click()
        expect(panel.locator(".acpnb-card-remnant")).to_have_text("Allowed (by you)")
        expect(alices.locator(".acpnb-card-remnant")).to_have_text("Allowed (by Bob)")
        expect(panel.locator("textarea.acpnb-composer-input")).to_be_enabled()
        # Bob prompts now too, and Alice answers: each page says who answered what.
        send_in(panel, "permission")
        permission_card(alices).get_by_role("button", name="Reject").click()
        expect(panel.locator(".acpnb-card-remnant")).to_have_text(
            ["Allowed (by you)", "Rejected (by Alice)"]
        )
        expect(alices.locator(".acpnb-card-remnant")).to_have_text(
            ["Allowed (by Bob)", "Rejected (by you)"]
        )
    finally:
        bob.context.close()
