"""A chat's saved output in a real JupyterLab: kept current at every turn end without
re-rendering the live chat (no new socket, no resent history); never saying the chat
ended while it lives (an unsigned notebook, a reload in local mode; a collaborator of a
shared notebook: tests/faults/test_collaborator_browser.py), only once the server or the
kernel answered that it is gone."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbformat.sign import NotebookNotary
from playwright.sync_api import Page, WebSocket, expect

from acp_notebook.wire.contracts import SAVED_MIME
from tests.support.lab import (
    JupyterServer,
    agent_text,
    cell,
    chat,
    open_chat_notebook,
    open_notebook,
    question_card,
    run_cell,
    save,
    send,
    start_server,
    unique,
    write_notebook,
)
from tests.support.saved_views import CHAT, answer, chat_output, endings, live_card, watch_endings

TURNS = 10


def test_turn_ends_refresh_the_saved_output_without_reconnecting(
    page: Page, server: JupyterServer
) -> None:
    sockets: list[str] = []
    resent: list[int] = []  # events carried by each resync ack, per socket message

    def on_socket(ws: WebSocket) -> None:
        if "acp-notebook/ws/browser" not in ws.url:
            return
        sockets.append(ws.url)

        def on_frame(payload: str | bytes) -> None:
            frame = json.loads(payload)
            if "ack" in frame and isinstance(frame.get("events"), list):
                resent.append(len(frame["events"]))

        ws.on("framereceived", on_frame)

    page.on("websocket", on_socket)
    name = unique("churn")
    filename = write_notebook(
        server,
        name,
        ['from acp_notebook import Chat\nchat = Chat("demo")\nawait chat.ready()\nchat'],
    )
    open_notebook(page, server, filename)
    run_cell(page, 0)
    expect(chat(page).locator(".acpnb-status")).to_have_text("idle")
    assert len(sockets) == 1 and len(resent) == 1

    for n in range(1, TURNS + 1):
        send(page, f"turn {n}")
        expect(agent_text(page)).to_contain_text(f"You said: turn {n}")
        expect(chat(page).locator(".acpnb-status")).to_have_text("idle")
    # Flat: the one socket and the one resync of the first render, whatever the turns.
    assert len(sockets) == 1, sockets
    assert len(resent) == 1, resent
    expect(page.locator(".acpnb-root")).to_have_count(1)

    # And the saved output is current: it holds the last turn.
    save(page)
    nb = nbformat.read(server.root / filename, as_version=4)
    [output] = [o for o in nb.cells[0].outputs if SAVED_MIME in o.get("data", {})]
    saved = output["data"][SAVED_MIME]
    prompts = [i["text"] for i in saved["snapshot"]["items"] if i["type"] == "user"]
    assert prompts == [f"turn {n}" for n in range(1, TURNS + 1)]
    assert f"turn {TURNS}" in output["data"]["text/html"]
    assert saved["canLoad"] is True and saved["sessionId"].startswith("demo-")


def test_an_adopted_view_keeps_talking_over_the_comm(page: Page, server: JupyterServer) -> None:
    # Local mode: the live view adopted across re-renders still sends and receives on
    # the widget's comm after the render it came from is gone.
    open_chat_notebook(
        page,
        server,
        "comm",
        'from acp_notebook import Chat\nchat = Chat("demo", transport="local")\nawait chat.ready()\nchat',
    )
    for n in range(1, 4):
        send(page, f"turn {n}")
        expect(agent_text(page)).to_contain_text(f"You said: turn {n}")
        expect(chat(page).locator(".acpnb-status")).to_have_text("idle")
    expect(page.locator(".acpnb-root")).to_have_count(1)
    expect(chat(page).locator(".acpnb-user")).to_have_count(3)


def test_a_server_restart_never_loses_a_pending_question_silently(
    page: Page, tmp_path: Path
) -> None:
    base = tmp_path / "jupyter"
    lab = start_server(base)
    try:
        filename = write_notebook(
            lab,
            "restart",
            ['from acp_notebook import Chat\nchat = Chat("demo")\nawait chat.ready()\nchat'],
        )
        open_notebook(page, lab, filename)
        run_cell(page, 0)
        send(page, "ask-user")
        expect(question_card(page)).to_be_visible()
        # The server's shutdown ends the kernel's chats: the open question is cancelled
        # to the agent and the socket closes with CHAT_GONE. The output then offers the
        # saved chat with Continue instead of a dead one; no question is left open in it.
        lab.stop()
        lab = start_server(base, port=lab.port)
        output = page.locator(".jp-OutputArea-output").first
        expect(
            output.locator(".acpnb-continue").get_by_role("button", name="Continue")
        ).to_be_visible(timeout=60_000)
        expect(question_card(page)).to_have_count(0)
        expect(output.locator(".acpnb-status")).to_contain_text("exited")
        expect(output.locator(".acpnb-user").first).to_have_text("ask-user")
    finally:
        lab.stop()


def test_an_unsigned_notebook_shows_its_live_chat(page: Page, server: JupyterServer) -> None:
    watch_endings(page)
    filename = write_notebook(
        server, unique("unsigned"), [CHAT.format(args=""), 'n = chat.send_prompt("ask-user")']
    )
    open_notebook(page, server, filename)
    run_cell(page, 0)
    run_cell(page, 1)
    expect(question_card(page)).to_be_visible()
    save(page)
    # Changed on disk: the notebook's signature no longer matches, its outputs are untrusted.
    path = server.root / filename
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("changed elsewhere"))
    nbformat.write(nb, path)
    notary = NotebookNotary(data_dir=str(server.root.parent / "data"))
    assert not notary.check_signature(nbformat.read(path, as_version=4))

    page.reload()
    # Live on the notebook's own kernel: the pending card, answerable.
    card = live_card(page)
    answer(card, "Red")
    expect(card).to_have_count(0)
    expect(agent_text(page)).to_contain_text('"question_0":"red"')
    expect(chat_output(page).locator(".acpnb-status")).to_have_text("idle")
    assert endings(page) == []


def test_a_local_mode_reload_keeps_the_pending_card(page: Page, server: JupyterServer) -> None:
    # Local mode: the kernel hosts the chat and the widget talks over the comm (as on a
    # server without the extension: the renderer asks the kernel, never the server).
    watch_endings(page)
    filename = write_notebook(
        server,
        unique("local-reload"),
        [
            CHAT.format(args=', transport="local"'),
            'turn = await chat.ask("ask-user")',
            "print(turn.text)",
            'n = chat.send_prompt("ask-user")',
            "import time\ntime.sleep(12)",
            "print(chat.wait(n, timeout=60).text)",
        ],
    )
    open_notebook(page, server, filename)
    run_cell(page, 0)
    run_cell(page, 1, wait=False)  # it awaits the answer
    expect(question_card(page)).to_be_visible()
    save(page)

    # While a cell awaits, ipykernel hands the widget manager's comms to the kernel: the
    # widget comes back with the card, and answering it ends the awaited question.
    page.reload()
    answer(live_card(page), "Red")
    expect(question_card(page)).to_have_count(0)
    expect(run_cell(page, 2).locator(".jp-OutputArea-output")).to_contain_text('"question_0":"red"')

    # A cell that blocks the kernel holds the widget up: the saved copy (as of the last
    # turn end) waits for it, and the live card follows once the cell ends.
    run_cell(page, 3)
    expect(question_card(page)).to_be_visible()
    run_cell(page, 4, wait=False)
    expect(cell(page, 4).locator(".jp-InputPrompt")).to_have_text("[*]:")
    save(page)
    page.reload()
    status = chat_output(page).locator(".acpnb-status")
    expect(status).to_have_text("waiting for the kernel…")
    card = live_card(page)
    answer(card, "Blue")
    expect(card).to_have_count(0)
    expect(run_cell(page, 5).locator(".jp-OutputArea-output")).to_contain_text(
        '"question_0":"blue"'
    )
    assert endings(page) == []


def test_a_continued_chat_opens_at_its_end(page: Page, server: JupyterServer) -> None:
    # A conversation longer than the transcript's box: Continue brings it back scrolled to
    # its last message, where the person goes on, as the live chat was.
    filename = write_notebook(server, unique("long"), [CHAT.format(args=""), "chat.close()"])
    open_notebook(page, server, filename)
    run_cell(page, 0)
    for n in range(6):
        send(page, f"stream 400 part {n}")
        expect(chat(page).locator(".acpnb-status")).to_have_text("idle")
    run_cell(page, 1)
    save(page)
    page.reload()  # the saved chat, as the notebook opens tomorrow
    output = chat_output(page)
    output.locator(".acpnb-continue").get_by_role("button", name="Continue").click()
    expect(output.locator(".acpnb-saved")).to_have_count(0, timeout=60_000)
    expect(output.locator(".acpnb-status")).to_have_text("idle", timeout=60_000)
    expect(output.locator(".acpnb-user")).to_have_count(6, timeout=60_000)
    transcript = output.locator(".acpnb-transcript")
    page.wait_for_timeout(1000)  # the history's frames built and laid out
    left = transcript.evaluate("box => box.scrollHeight - box.scrollTop - box.clientHeight")
    tall = transcript.evaluate("box => box.scrollHeight > 2 * box.clientHeight")
    assert tall and left < 24, left
