"""The quickstart walked top to bottom in JupyterLab as a newcomer would: each code cell
run with Shift+Enter, every card answered by a click (so the cells after them find
nothing left to answer from Python), the agent's code inserted with "Insert cell below",
a slow answer stopped with Stop, the Agent panel opened with its shortcut, and the resumed
chat at the end typed in. One test: the notebook is one story."""

from __future__ import annotations

import re

from playwright.sync_api import Locator, Page, expect

from tests.support.chromium import PageLog
from tests.support.lab import (
    REPO,
    JupyterServer,
    cell,
    code_cells,
    copy_cleared,
    open_notebook,
    open_panel,
    run_cell,
    send_in,
    unique,
)

QUICKSTART = REPO / "notebooks" / "quickstart.ipynb"


def output(target: Locator) -> Locator:
    return target.locator(".jp-OutputArea-output")


def test_the_quickstart_by_clicking(page: Page, server: JupyterServer, page_log: PageLog) -> None:
    filename = f"{unique('quickstart')}.ipynb"
    copy_cleared(QUICKSTART, server.root / filename)
    (
        setup,
        ask,
        answered,
        permission,
        allowed,
        plan,
        agentic,
        slow,
        stopped,
        magic,
        attach,
        close,
        resume,
        think,
    ) = code_cells(QUICKSTART)
    open_notebook(page, server, filename)

    # The chat; its greeting names the keywords the sections below use.
    chat = run_cell(page, setup).locator(".acpnb-root")
    send_in(chat, "hello")
    greeting = chat.locator(".acpnb-agent").last
    for keyword in ("ask-user", "permission", "agentic", "slow 30", "Insert cell below"):
        expect(greeting).to_contain_text(keyword)

    # A question: the cell points to its card, a screen above; its button brings the card
    # into view with the focus; answered there, the next cell only reads the turn.
    pointer = run_cell(page, ask).locator(".acpnb-pointer")
    expect(pointer).to_contain_text("demo asks you a question in its chat")
    card = chat.locator(".acpnb-card-elicitation")
    pointer.get_by_role("button", name="Go to the question").click()
    expect(card.get_by_role("radio").first).to_be_focused()
    expect(card).to_be_in_viewport()
    card.get_by_role("radio", name="Green").check()
    card.get_by_role("button", name="Answer").click()
    expect(card).to_have_count(0)
    expect(pointer).to_contain_text("Answered: demo's request")
    expect(output(run_cell(page, answered))).to_contain_text('"question_0":"green"')

    # A permission: allowed in its card.
    expect(run_cell(page, permission).locator(".acpnb-pointer")).to_contain_text(
        "demo asks your permission in its chat: Run ls"
    )
    chat.locator(".acpnb-card-permission").get_by_role("button", name="Allow", exact=True).click()
    expect(output(run_cell(page, allowed))).to_contain_text("permission: allow-once")

    expect(output(run_cell(page, plan))).to_contain_text("Check the result: completed")

    # The agent's code block, inserted into the notebook as a new cell, not run.
    run_cell(page, agentic)
    cells = page.locator(".jp-Notebook .jp-Cell")
    before = cells.count()
    reply = chat.locator(".acpnb-agent").last
    expect(reply.locator("pre").first).to_contain_text("value_3 = 6")
    reply.get_by_role("button", name="Insert cell below").first.click()
    expect(cells).to_have_count(before + 1)
    # A click in the chat selects the chat's cell: the new cell goes right below it.
    inserted = cell(page, setup + 1)
    expect(inserted.locator(".cm-line")).to_have_text(["value_0 = 0", "value_3 = 6"])
    expect(inserted.locator(".jp-InputPrompt")).to_have_text(re.compile(r"^\[ \]:$"))
    shift = 1  # every cell still to run is one further down

    # Stop on the slow answer; the next cell finds the turn stopped.
    run_cell(page, slow + shift)
    expect(chat.locator(".acpnb-agent").last).to_contain_text("tick 2")
    chat.get_by_role("button", name="Stop").click()
    expect(chat.locator(".acpnb-status")).to_contain_text("stopped")
    expect(output(run_cell(page, stopped + shift))).to_have_text("cancelled")

    # The Agent panel, by its shortcut: the same chat, answering there shows inline too.
    panel = open_panel(page)
    expect(panel.locator(".acpnb-agent").last).to_contain_text("tick 2")
    send_in(panel, "think")
    expect(panel.locator(".acpnb-agent").last).to_contain_text("Done thinking")
    expect(chat.locator(".acpnb-agent").last).to_contain_text("Done thinking")

    # %%agent shows the chat under its cell; a DataFrame goes along.
    under = run_cell(page, magic + shift).locator(".acpnb-root")
    expect(under.locator(".acpnb-agent").last).to_contain_text("You said: Hello from a cell!")
    run_cell(page, attach + shift)

    # Closed, then resumed: the resumed chat is shown, live, with the conversation so far.
    run_cell(page, close + shift)
    again = run_cell(page, resume + shift).locator(".acpnb-root")
    expect(again.locator(".acpnb-user").first).to_have_text("hello")
    send_in(again, "tool")
    expect(again.locator(".acpnb-agent").last).to_contain_text("edited notes.txt")
    expect(output(run_cell(page, think + shift))).to_contain_text("the answer is **42**")

    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    expect(errors).to_have_count(0)
    assert page_log.dialogs == []
