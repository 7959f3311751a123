"""axe-core over the chat widget and the Agent panel in JupyterLab, light, dark and dark
high-contrast themes (the same chats, the page reloaded), and the panel's layout at its default width; and in
Notebook 7.

On screen: finished answers, a thought, a plan, a tool call's diff, a prompt with a code
fence, a pending permission (inline, in the panel, and a cell's pointer to it), a pending question and a queued
prompt (in the panel). axe-core is the npm package tests/browser/package.json pins (`make
setup` installs it); its checks are WCAG 2.1 A and AA, scoped to the widget's and the
panel's roots (contrast included: 4.5:1 for text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, expect

from tests.support.lab import (
    JupyterServer,
    agent_text,
    chat,
    open_notebook,
    open_panel,
    permission_card,
    run_cell,
    save,
    send,
    send_in,
    unique,
    write_notebook,
)

AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
ROOTS = [".acpnb-root", "#acp-notebook-panel", ".acpnb-pointer"]
FENCED = "```python\nprint('hi')\n```\nask-user"

# The violations, each with the elements and axe's reason (for the assertion's message),
# and how many elements passed the contrast check (axe checked the roots' text).
RUN_AXE = """async ({ roots, tags }) => {
  const result = await axe.run(
    { include: roots.map((selector) => [selector]) },
    { runOnly: { type: "tag", values: tags } },
  );
  const contrast = result.passes.find((rule) => rule.id === "color-contrast");
  return {
    violations: result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary}`),
    })),
    contrastChecked: contrast?.nodes.length ?? 0,
  };
}"""

# Copies of the widget's stylesheet in the page (the lab extension's: exactly one).
STYLESHEETS = """() => [...document.styleSheets].filter((sheet) => {
  try {
    return [...sheet.cssRules].some((rule) => rule.cssText.includes("--acpnb-styles"));
  } catch {
    return false;  // another origin's sheet
  }
}).length"""

# What a narrow panel must not do: cut a line of the placeholder, overflow sideways, leave
# a row of a card's buttons ragged (a button alone at the start of a line), or cut a code
# block instead of scrolling it.
LAYOUT = """(panel) => {
  const box = panel.querySelector("textarea.acpnb-composer-input");
  const ragged = [];
  for (const row of panel.querySelectorAll(".acpnb-card .acpnb-card-actions")) {
    const end = row.getBoundingClientRect().right;
    const lines = new Map();
    for (const button of row.children) {
      const { top, right } = button.getBoundingClientRect();
      lines.set(Math.round(top), Math.max(lines.get(Math.round(top)) ?? 0, right));
    }
    if (lines.size > 1) ragged.push(...[...lines.values()].filter((right) => end - right > 2));
  }
  const pre = panel.querySelector(".acpnb-user pre");
  return {
    width: panel.getBoundingClientRect().width,
    sideways: panel.scrollWidth - panel.clientWidth,
    placeholderCut: box.scrollHeight - box.clientHeight,
    raggedRows: ragged.length,
    preScrolls: getComputedStyle(pre).overflowX,
  };
}"""


def violations(page: Page) -> list[dict[str, Any]]:
    """axe's WCAG 2.1 A/AA violations in the widget and the panel."""
    # JupyterLab's <body> is 0 px high (its shell is positioned over it) and hides its
    # overflow: axe would take every element as clipped by it, and check almost nothing.
    page.add_style_tag(content="body { min-height: 100vh; }")
    page.add_script_tag(path=str(AXE))
    result: dict[str, Any] = page.evaluate(RUN_AXE, {"roots": ROOTS, "tags": TAGS})
    # The cards, the transcript, the header and the panel's controls: many texts.
    assert result["contrastChecked"] > 50, result
    found: list[dict[str, Any]] = result["violations"]
    return found


def dark_theme(page: Page, server: JupyterServer) -> None:
    """The page again in JupyterLab's dark theme (the saved notebook shows the chat)."""
    save(page)
    server.set_theme("JupyterLab Dark")
    page.reload()
    expect(page.locator("body[data-jp-theme-light='false']")).to_have_count(1, timeout=60_000)


def fill_inline(page: Page) -> Locator:
    """The inline chat with finished turns: a thought, a plan, a diff."""
    for prompt, done in (
        ("think", "the answer is 42"),
        ("plan", "plan done"),
        ("tool", "edited notes.txt"),
    ):
        send(page, prompt)
        expect(agent_text(page)).to_contain_text(done)
    return chat(page)


def test_widget_and_panel_pass_axe_in_every_theme(page: Page, server: JupyterServer) -> None:
    assert AXE.exists(), f"{AXE} is missing: `make setup` installs tests/browser's packages"
    code = "from acp_notebook import Chat\nchat = Chat('demo')\nchat"
    pointing = "request = await chat.next_request()"
    open_notebook(page, server, write_notebook(server, unique("a11y"), [code, pointing]))
    run_cell(page, 0)
    # Opened first: a chat's output shown again at a turn's end takes the focus back to
    # its composer, where the panel's shortcut does not reach JupyterLab.
    panel = open_panel(page)
    expect(panel.get_by_role("heading", name="Agent chats")).to_be_visible()
    widget = fill_inline(page)
    expect(widget.locator(".acpnb-plan")).to_be_visible()
    expect(widget.locator(".acpnb-diff-add").first).to_be_visible()

    # The same chat: its permission card shows in the panel and inline.
    send_in(panel, "permission")
    expect(panel.locator(".acpnb-card-permission")).to_be_visible()
    expect(permission_card(page)).to_be_visible()
    # A cell that waits for it points to its card.
    pointer = run_cell(page, 1).locator(".acpnb-pointer")
    expect(pointer.get_by_role("button", name="Go to the permission")).to_be_visible()
    panel.get_by_role("button", name="New chat").click()
    expect(panel.get_by_label("Chat", exact=True).locator("option")).to_have_count(2)
    send_in(panel, FENCED)
    question = panel.locator(".acpnb-card-elicitation")
    expect(question).to_be_visible()
    # The prompt's code fence is rendered as code, not shown as backticks.
    user = panel.locator(".acpnb-user").last
    expect(user.locator("pre")).to_have_text("print('hi')")
    expect(user).not_to_contain_text("```")
    send_in(panel, "hello")  # waits in the queue behind the question
    expect(panel.locator(".acpnb-queued")).to_have_count(1)

    # One copy of the widget's stylesheet, though an inline widget was shown.
    assert page.evaluate(STYLESHEETS) == 1
    layout = panel.evaluate(LAYOUT)
    assert layout["width"] <= 300, layout  # JupyterLab's default sidebar width
    assert layout["sideways"] <= 0, layout
    assert layout["placeholderCut"] <= 0, layout
    assert layout["raggedRows"] == 0, layout
    assert layout["preScrolls"] == "auto", layout

    found = violations(page)
    assert found == [], "\n".join(map(str, found))
    try:
        dark_theme(page, server)
        # The chats live on in the server: the pending cards are shown again.
        expect(permission_card(page)).to_be_visible(timeout=60_000)
        expect(open_panel(page).locator(".acpnb-card-elicitation")).to_be_visible()
        expect(page.locator(".acpnb-pointer button")).to_be_visible()
        found = violations(page)
        assert found == [], "\n".join(map(str, found))
        # And JupyterLab's high-contrast theme: the widget's colours are its variables.
        server.set_theme("JupyterLab Dark High Contrast")
        page.reload()
        expect(
            page.locator("body[data-jp-theme-name='JupyterLab Dark High Contrast']")
        ).to_have_count(1, timeout=60_000)
        expect(permission_card(page)).to_be_visible(timeout=60_000)
        expect(open_panel(page).locator(".acpnb-card-elicitation")).to_be_visible()
        found = violations(page)
        assert found == [], "\n".join(map(str, found))
    finally:
        server.set_theme(None)


def test_widget_and_panel_pass_axe_in_notebook_7(page: Page, server: JupyterServer) -> None:
    # Notebook 7's page: its own shell, the same theme variables. Finished turns, a
    # pending permission inline, in the panel and pointed to from a cell.
    code = "from acp_notebook import Chat\nchat = Chat('demo')\nchat"
    pointing = "request = await chat.next_request()"
    filename = write_notebook(server, unique("a11y-nb7"), [code, pointing])
    open_notebook(page, server, filename, app="notebook")
    run_cell(page, 0)
    widget = fill_inline(page)
    send(page, "permission")
    expect(permission_card(page)).to_be_visible()
    expect(run_cell(page, 1).locator(".acpnb-pointer button")).to_be_visible()
    panel = open_panel(page)
    expect(panel.locator(".acpnb-card-permission")).to_be_visible()
    expect(widget.locator(".acpnb-diff-add").first).to_be_visible()
    found = violations(page)
    assert found == [], "\n".join(map(str, found))
