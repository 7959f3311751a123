"""A chat's saved output in a real JupyterLab: kept current at every turn end without
re-rendering the live chat (no new socket, no resent history)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from playwright.sync_api import Page, WebSocket, expect

from acp_notebook.wire.contracts import SAVED_MIME
from tests.support.lab import (
    JupyterServer,
    agent_text,
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
