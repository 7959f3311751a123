"""The chat widget in a real JupyterLab and Notebook 7, driven like a person would.

Answers given in a card travel over the server extension's WebSocket, so they work even
while a cell blocks the kernel.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.agents import hostile_agent as hostile
from tests.support.chromium import ARTIFACTS, PageLog
from tests.support.lab import (
    REPO,
    JupyterServer,
    agent_text,
    cell,
    chat,
    code_cells,
    command_chat,
    copy_cleared,
    open_chat_notebook,
    open_notebook,
    permission_card,
    question_card,
    run_cell,
    save,
    send,
    unique,
    write_notebook,
)

HOSTILE_AGENT = Path(hostile.__file__)


# A cell that sends ``ask-user`` after the chat is ready.
ASK = 'turn_number = chat.send_prompt("ask-user")'


def demo_notebook(server: JupyterServer, name: str, *extra: str, chat_args: str = "") -> str:
    """A notebook whose first cell displays a ready demo chat; ``extra`` cells follow."""
    first = (
        "from acp_notebook import Chat\n"
        f'chat = Chat("demo"{chat_args})\n'
        "await chat.ready()\n"
        "print(chat.mode)\n"
        "chat"
    )
    return write_notebook(server, unique(name), [first, *extra])


def test_question_round_trip_through_the_comm(page: Page, server: JupyterServer) -> None:
    # Local mode: the kernel hosts the bridge and the widget talks to it over the comm,
    # as where no extension is reachable (VS Code, Colab). The UI is the same.
    filename = demo_notebook(server, "comm", chat_args=', transport="local"')
    open_notebook(page, server, filename)
    expect(run_cell(page, 0).locator(".jp-OutputArea-output").first).to_have_text("local")
    send(page, "ask-user")
    card = question_card(page)
    expect(card).to_be_visible()
    card.get_by_role("radio", name="Green").check()
    card.get_by_role("button", name="Answer").click()
    expect(card).to_have_count(0)
    expect(agent_text(page)).to_contain_text('"question_0":"green"')


def test_answer_while_another_cell_blocks_the_kernel(page: Page, server: JupyterServer) -> None:
    filename = demo_notebook(server, "blocked", ASK, "import time\ntime.sleep(30)")
    open_notebook(page, server, filename)
    expect(run_cell(page, 0).locator(".jp-OutputArea-output").first).to_have_text("server")
    run_cell(page, 1)
    card = question_card(page)
    expect(card).to_be_visible()
    sleeper = run_cell(page, 2, wait=False)
    busy = sleeper.locator(".jp-InputPrompt")
    expect(busy).to_have_text("[*]:")

    card.get_by_role("radio", name="Blue").check()
    card.get_by_role("button", name="Answer").click()

    expect(card).to_have_count(0)
    expect(agent_text(page)).to_contain_text('"question_0":"blue"')
    expect(busy).to_have_text("[*]:")  # the kernel never saw the answer: it is still asleep


def test_reload_while_a_question_is_pending(page: Page, server: JupyterServer) -> None:
    filename = demo_notebook(
        server, "reload", ASK, "print(chat.wait(turn_number, timeout=60).text)"
    )
    open_notebook(page, server, filename)
    run_cell(page, 0)
    run_cell(page, 1)
    expect(question_card(page)).to_be_visible()
    save(page)

    page.reload()
    card = question_card(page)  # back, from the server's history
    expect(card).to_be_visible(timeout=60_000)
    expect(card.get_by_role("radio", name="Red")).not_to_be_checked()
    card.get_by_role("radio", name="Red").check()
    card.get_by_role("button", name="Answer").click()

    expect(question_card(page)).to_have_count(0)
    expect(agent_text(page)).to_contain_text('"question_0":"red"')
    expect(run_cell(page, 2).locator(".jp-OutputArea-output")).to_contain_text('"question_0":"red"')


def test_permission_allowed_in_the_card(page: Page, server: JupyterServer) -> None:
    open_notebook(page, server, demo_notebook(server, "permission"))
    run_cell(page, 0)
    send(page, "permission")

    card = permission_card(page)
    expect(card).to_be_visible()
    # The title's backticks quote code: shown as inline code, not as backticks.
    expect(card.locator(".acpnb-card-title")).to_have_text("Run ls")
    expect(card.locator(".acpnb-card-title code")).to_have_text("ls")
    expect(card.get_by_role("button")).to_have_text(["Allow", "Always allow", "Reject"])
    card.get_by_role("button", name="Allow", exact=True).click()

    expect(agent_text(page)).to_have_text("permission: allow-once")
    # Who answered: this page's own Jupyter login, named "you" (not "Anonymous Aitne").
    expect(chat(page).locator(".acpnb-card-remnant")).to_have_text("Allowed (by you)")
    expect(permission_card(page)).to_have_count(0)


def test_decline_and_cancel(page: Page, server: JupyterServer) -> None:
    open_notebook(page, server, demo_notebook(server, "decline"))
    run_cell(page, 0)
    for button, action in (("Decline", "decline"), ("Cancel", "cancel")):
        send(page, "ask-user")
        card = question_card(page)
        expect(card).to_be_visible()
        # Neither needs the required choice to be made.
        expect(card.get_by_role("button", name="Answer")).to_be_disabled()
        card.get_by_role("button", name=button).click()
        expect(card).to_have_count(0)
        words = (
            "You declined the question." if action == "decline" else "The question was cancelled."
        )
        expect(agent_text(page)).to_contain_text(words)
        expect(agent_text(page)).to_contain_text(
            f'What the agent received: {{"action":"{action}"}}'
        )


def test_chinese_card(page: Page, server: JupyterServer) -> None:
    open_notebook(page, server, demo_notebook(server, "zh", chat_args=', locale="zh"'))
    run_cell(page, 0)
    send(page, "ask-user")

    card = question_card(page)
    expect(card).to_be_visible()
    expect(card.get_by_role("button")).to_have_text(["回答", "拒绝", "取消"])
    expect(card).to_contain_text("提问")
    expect(card).to_contain_text("必填")
    card.get_by_role("radio", name="Green").check()
    card.get_by_role("button", name="回答").click()
    expect(card).to_have_count(0)
    expect(agent_text(page)).to_contain_text('"question_0":"green"')


CARD_COLOURS = """card => {
    const colour = (selector) => getComputedStyle(card.querySelector(selector)).color;
    return {
        background: getComputedStyle(card).backgroundColor,
        message: colour(".acpnb-card-message"),
        label: colour(".acpnb-choice-label"),
        description: colour(".acpnb-choice-description"),
    };
}"""


def rgba(css: str) -> tuple[float, float, float, float]:
    """A computed colour, ``rgb()``/``rgba()`` or ``color(srgb ...)`` (0-1 channels), as 0-255."""
    parts = [float(v) for v in re.findall(r"[\d.]+", css)]
    scale = 255.0 if css.startswith("color(srgb") else 1.0
    alpha = parts[3] if len(parts) > 3 else 1.0
    return parts[0] * scale, parts[1] * scale, parts[2] * scale, alpha


def contrast(text: str, background: str) -> float:
    """The WCAG contrast ratio of text (alpha-blended onto the background) to the background."""
    *fg, alpha = rgba(text)
    bg = rgba(background)[:3]
    blended = [alpha * f + (1 - alpha) * b for f, b in zip(fg, bg, strict=True)]

    def luminance(rgb: list[float] | tuple[float, ...]) -> float:
        linear = [c / 255 / 12.92 if c <= 10 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2] + 0.05

    high, low = sorted((luminance(blended), luminance(bg)), reverse=True)
    return high / low


def readable_card(page: Page) -> str:
    """The question card's background; fails when its text is hard to read on it."""
    card = question_card(page)
    expect(card).to_be_visible()
    colours: dict[str, str] = card.evaluate(CARD_COLOURS)
    background = colours.pop("background")
    for part, colour in colours.items():
        ratio = contrast(colour, background)
        # WCAG AA for text; 3:1 for the secondary, dimmed option descriptions.
        least = 3.0 if part == "description" else 4.5
        assert ratio >= least, f"{part} text {colour} on {background}: contrast {ratio:.1f}"
    return background


def test_dark_theme(page: Page, server: JupyterServer) -> None:
    filename = demo_notebook(server, "dark", ASK)
    open_notebook(page, server, filename)
    run_cell(page, 0)
    run_cell(page, 1)
    light = readable_card(page)
    save(page)
    server.set_theme("JupyterLab Dark")
    try:
        page.reload()
        expect(page.locator("body[data-jp-theme-light='false']")).to_have_count(1)
        expect(question_card(page)).to_be_visible(timeout=60_000)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "dark-theme.png"), full_page=True)
        dark = readable_card(page)
    finally:
        server.set_theme(None)
    assert dark != light
    # Dark means dark: the card's background is darker than mid-grey.
    assert sum(rgba(dark)[:3]) < 3 * 128, dark


def test_hostile_markdown_and_titles_stay_inert(
    page: Page, server: JupyterServer, page_log: PageLog
) -> None:
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    agent = [sys.executable, str(HOSTILE_AGENT)]
    open_chat_notebook(page, server, "hostile", command_chat(agent))
    send(page, "hello")

    permission = permission_card(page)
    expect(permission).to_be_visible()
    expect(permission).to_contain_text(hostile.TOOL_TITLE)
    permission.get_by_role("button", name=hostile.OPTION_NAME).click()
    question = question_card(page)
    expect(question).to_be_visible()
    for text in (hostile.FIELD_TITLE, hostile.FIELD_DESCRIPTION, hostile.OPTION_LABEL):
        expect(question).to_contain_text(text)
    question.get_by_role("radio").check()
    question.get_by_role("button", name="Answer").click()
    expect(agent_text(page)).to_have_text("hostile agent done: permission allow, question accept")

    root = chat(page)
    expect(root.locator(".acpnb-agent").first).to_contain_text('<img src="/pwned-1.png"')
    expect(root.locator(".acpnb-tool-title")).to_have_text(hostile.TOOL_TITLE)
    root.locator(".acpnb-tool-title").hover()
    assert root.locator("img, script, iframe, [onerror], [onmouseover]").count() == 0
    assert root.locator("a[href^='javascript']").count() == 0
    assert page.evaluate("() => window.__acpPwned") is None
    assert [url for url in fetched if "pwned" in url] == []
    assert page_log.dialogs == []
    assert [e for e in page_log.errors if "pwned" in e.lower()] == []


def test_notebook7_question_round_trip(page: Page, server: JupyterServer) -> None:
    filename = demo_notebook(server, "nb7", ASK)
    open_notebook(page, server, filename, app="notebook")
    expect(run_cell(page, 0).locator(".jp-OutputArea-output").first).to_have_text("server")
    run_cell(page, 1)

    card = question_card(page)
    expect(card).to_be_visible()
    card.get_by_role("radio", name="Blue").check()
    card.get_by_role("textbox", name="A note").fill("from Notebook 7")
    card.get_by_role("button", name="Answer").click()

    expect(card).to_have_count(0)
    expect(agent_text(page)).to_contain_text('"question_0":"blue"')
    expect(agent_text(page)).to_contain_text('"note":"from Notebook 7"')


@pytest.mark.parametrize("name", ["quickstart", "from-python"])
def test_example_notebook_runs_all_in_server_mode(
    name: str, page: Page, server: JupyterServer
) -> None:
    """nbval runs the examples with the chat in the kernel; here they run through the server."""
    source = REPO / "notebooks" / f"{name}.ipynb"
    filename = f"{unique(name)}.ipynb"
    copy_cleared(source, server.root / filename)
    open_notebook(page, server, filename)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

    for index in code_cells(source):
        prompt = cell(page, index).locator(".jp-InputPrompt")
        expect(prompt).to_have_text(re.compile(r"\[\d+\]"), timeout=60_000)
    expect(
        page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    ).to_have_count(0)
    expect(page.locator(".jp-Notebook .jp-OutputArea-output").first).to_be_visible()
