"""Continue on a downloaded notebook, in a real JupyterLab (issue 27, item 1).

A saved chat whose file says ``mode: bypassPermissions``, in a notebook that is not
trusted (changed on disk, so its signature no longer matches). Continue asked nothing
(0 dialogs in 11 clicks) and sent the file's mode. Now every click asks once, saying
the agent, the directory and the session; a cancel starts nothing; a confirmed
Continue sends no mode and continues the conversation.
"""

from __future__ import annotations

import json

import nbformat
import pytest
from playwright.sync_api import Page, Request, expect

from acp_notebook.wire.contracts import SAVED_MIME
from tests.support import lab
from tests.support.saved_views import CHAT, chat_output

CLICKS = 11


@pytest.mark.fault("11 clicks on Continue of an untrusted notebook whose saved mode is bypass")
def test_an_untrusted_continue_asks_once_per_click(page: Page, server: lab.JupyterServer) -> None:
    filename = lab.write_notebook(
        server, lab.unique("downloaded"), [CHAT.format(args=""), "chat.close()"]
    )
    lab.open_notebook(page, server, filename)
    lab.run_cell(page, 0)
    lab.send(page, "remember 4817")
    expect(lab.agent_text(page)).to_contain_text("You said: remember 4817")
    lab.run_cell(page, 1)  # the chat ends: the server says it is gone
    lab.save(page)
    # The file as someone else would hand it over: a bypass mode, and no valid signature.
    path = server.root / filename
    nb = nbformat.read(path, as_version=4)
    [output] = [o for o in nb.cells[0].outputs if SAVED_MIME in o.get("data", {})]
    saved = output["data"][SAVED_MIME]
    saved["mode"] = "bypassPermissions"
    nb.cells.append(nbformat.v4.new_markdown_cell("downloaded"))
    nbformat.write(nb, path)

    posts: list[Request] = []
    page.on(
        "request",
        lambda r: (
            posts.append(r) if r.method == "POST" and "acp-notebook/api/chats" in r.url else None
        ),
    )
    page.reload()
    output_node = chat_output(page)
    button = output_node.locator(".acpnb-continue").get_by_role("button", name="Continue")
    expect(button).to_be_visible(timeout=60_000)
    dialog = page.locator(".jp-Dialog")
    for _ in range(CLICKS):
        button.click()
        expect(dialog).to_have_count(1)
        text = dialog.inner_text()
        assert "not trusted" in text and "agent: demo" in text, text
        assert f"session: {saved['sessionId']}" in text and f"directory: {saved['cwd']}" in text
        dialog.get_by_role("button", name="Cancel").click()
        expect(dialog).to_have_count(0)
        expect(output_node.locator(".acpnb-continue-note")).to_have_text("not continued")
    assert posts == []  # nothing started

    button.click()
    dialog.get_by_role("button", name="Continue").click()
    expect(dialog).to_have_count(0)
    # The conversation is back, live (no saved view left): the demo replays it on load.
    expect(output_node.locator(".acpnb-saved")).to_have_count(0, timeout=60_000)
    expect(output_node.locator(".acpnb-user").first).to_have_text("remember 4817", timeout=60_000)
    expect(output_node.locator(".acpnb-status")).to_have_text("idle", timeout=60_000)
    assert len(posts) == 1
    body = json.loads(posts[0].post_data or "{}")
    assert body["loadSessionId"] == saved["sessionId"] and "mode" not in body, body
