"""The demo agent's notebook actions in a real JupyterLab: it reads the kernel's variables
through the chat's notebook tools (served by the extension, read by the kernel) and runs a
line only after the person allows it in the card, which shows the code as Python."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.lab import (
    JupyterServer,
    agent_text,
    chat,
    open_notebook,
    permission_card,
    run_cell,
    send,
    unique,
    write_notebook,
)


def test_the_demo_reads_variables_and_runs_code_after_allow(
    page: Page, server: JupyterServer
) -> None:
    filename = write_notebook(
        server,
        unique("notebook-actions"),
        [
            "import pandas as pd\n"
            "sales = pd.DataFrame({'region': ['north', 'south'], 'revenue': [10.5, 20.25]})",
            "from acp_notebook import Chat\n"
            'chat = Chat("demo")\n'
            "await chat.ready()\n"
            "print(chat.mode)\n"
            "chat",
        ],
    )
    open_notebook(page, server, filename)
    run_cell(page, 0)
    expect(run_cell(page, 1).locator(".jp-OutputArea-output").first).to_have_text("server")
    send(page, "notebook")

    card = permission_card(page)
    expect(card).to_be_visible()
    expect(card.locator(".acpnb-card-title")).to_have_text("Run code in the kernel")
    expect(card.locator("code.language-python")).to_have_text("sales.shape")
    tools = chat(page).locator(".acpnb-tool")
    expect(tools.nth(0).locator(".acpnb-tool-title")).to_have_text("Read variables")
    expect(tools.nth(0)).to_contain_text("sales: pandas.DataFrame, (2, 2)")
    expect(tools.nth(1).locator(".acpnb-tool-title")).to_have_text("Inspected sales")
    expect(tools.nth(1)).to_contain_text("revenue: float64")
    # Not raw JSON: no "Raw output" and no tool names.
    expect(chat(page).get_by_text("mcp__notebook__")).to_have_count(0)
    expect(chat(page).locator(".acpnb-raw")).to_have_count(0)

    card.get_by_role("button", name="Allow", exact=True).click()
    ran = tools.nth(2)
    expect(ran.locator(".acpnb-tool-title")).to_have_text("Ran code")
    expect(ran.locator("code.language-python")).to_have_text("sales.shape")
    expect(ran.locator(".acpnb-nb-output")).to_contain_text("(2, 2)")
    expect(agent_text(page)).to_contain_text(
        "I inspected sales (pandas.DataFrame) and ran sales.shape: (2, 2)"
    )
