"""A shared notebook (jupyter-collaboration): a collaborator who joins while a question is
pending sees the live chat and its card, nothing is lost, and an answer settles the card
on every page. The owner's outputs reach the others through the shared document,
untrusted there until the notebook is signed: the saved output goes live on the
notebook's own kernel, never a false "exited"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.lab import (
    JupyterServer,
    agent_text,
    collaborative_server,
    open_notebook,
    question_card,
    run_cell,
    send,
    unique,
    write_notebook,
)
from tests.support.saved_views import CHAT, answer, chat_output, endings, live_card, watch_endings


@pytest.fixture(scope="module")
def rtc_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    yield from collaborative_server(tmp_path_factory.mktemp("jupyter-rtc-saved"))


@pytest.mark.fault("a collaborator joins a shared notebook while a question is pending")
def test_collaborators_see_the_live_chat_even_joining_mid_question(
    page: Page, browser: Browser, rtc_server: JupyterServer
) -> None:
    filename = write_notebook(rtc_server, unique("rtc-chat"), [CHAT.format(args="")])
    pages: list[Page] = []
    try:
        early = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        pages.append(early)
        for each in (page, early):
            watch_endings(each)
            open_notebook(each, rtc_server, filename)
        run_cell(page, 0)
        # The early collaborator sees the chat appear live, without a reload; each turn
        # end re-renders the output there and the chat stays live.
        for n in (1, 2):
            send(page, f"turn {n}")
            for each in (page, early):
                expect(agent_text(each)).to_contain_text(f"You said: turn {n}")
                expect(chat_output(each).locator(".acpnb-status")).to_have_text("idle")
        send(page, "ask-user")
        expect(question_card(early)).to_be_visible()

        # One more joins while the question is pending: the live chat and its card.
        late = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        pages.append(late)
        watch_endings(late)
        open_notebook(late, rtc_server, filename)
        expect(live_card(late)).to_be_visible(timeout=60_000)

        answer(live_card(page), "Green")
        for each in (page, early, late):
            expect(question_card(each)).to_have_count(0)
            expect(agent_text(each)).to_contain_text('"question_0":"green"')
        for each in (page, early, late):
            assert endings(each) == []
    finally:
        for each in pages:
            each.context.close()
