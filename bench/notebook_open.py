"""11. Opening a notebook that holds many saved chats, in JupyterLab.

A notebook of 20 code cells, each with a saved chat's output as ``Chat`` displays it (the
saved-chat data the extension renders as the chat view with its transcript, the static
``text/html`` transcript, the widget view): the time from navigation to every chat
rendered with its whole transcript (each one's last answer in the page), measured in the
page. The reference is the same notebook with only the static transcripts (``text/html``
and ``text/plain``), opened the same way; the two are opened in turn (A B A B ...), each
figure the median of its opens.
"""

from __future__ import annotations

import json
import statistics
import uuid
from typing import Any, cast

from playwright.sync_api import Browser

from acp_notebook import fold as folding
from acp_notebook import transcript
from tests.browser.lab import JupyterServer

from .browser import chromium
from .common import Context, Row, fmt

CHATS = 20
TURNS = 5
OPENS = 3
TARGET = 2.0
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# Every chat's last answer is in the page, under `arg.root` (the chat views, or the
# static transcripts), all `arg.count` of them.
ALL_SHOWN = """(arg) => {
    let shown = 0;
    for (const item of document.querySelectorAll(arg.items)) {
        if (item.textContent.includes(arg.last)) shown += 1;
    }
    return shown === arg.count ? performance.now() : false;
}"""


def _events(chat: int) -> list[dict[str, Any]]:
    """A chat of a few turns, each with a tool call and a Markdown answer."""
    events: list[dict[str, Any]] = [
        {"kind": "agent_status", "status": "ready", "agent": "demo", "sessionId": f"s{chat}"}
    ]
    for turn in range(1, TURNS + 1):
        tool = {
            "sessionUpdate": "tool_call",
            "toolCallId": f"t{turn}",
            "title": f"Read file {turn}",
        }
        done = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": f"t{turn}",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "ok\n" * 5}}],
        }
        last = f"End of chat {chat}." if turn == TURNS else f"Turn {turn} done."
        answer = (
            f"## Turn {turn}\n\nThe file has **{turn * 10} lines**; the `main` function"
            " calls:\n\n- `load()`\n- `parse()`\n- `save()`\n\n```python\nprint(1)\n```\n\n" + last
        )
        content = {"type": "text", "text": answer}
        chunk = {
            "sessionUpdate": "agent_message_chunk",
            "messageId": f"m{turn}",
            "content": content,
        }
        events += [
            {"kind": "turn_started", "turn": turn, "prompt": f"Look at file {turn}"},
            {"kind": "update", "update": tool},
            {"kind": "update", "update": done},
            {"kind": "update", "update": chunk},
            {"kind": "turn_ended", "turn": turn, "stopReason": "end_turn"},
        ]
    return [{**event, "seq": seq, "ts": 1.7e12 + seq} for seq, event in enumerate(events, 1)]


def _output(chat: int, with_chat: bool) -> dict[str, Any]:
    state = folding.initial_state()
    for event in _events(chat):
        state = folding.fold(state, cast(Any, event))
    snap = folding.snapshot(state)
    data: dict[str, Any] = {
        "text/plain": "Chat(agent='demo')",
        "text/html": transcript.render_html(snap),
    }
    if with_chat:
        # A kernel of another server: the saved chat is shown, as on a reopened notebook.
        saved = {
            "chatId": uuid.uuid4().hex,
            "kernelId": uuid.uuid4().hex,
            "agent": "demo",
            "cwd": ".",
            "mode": "server",
            "locale": "en",
        }
        data[transcript.SAVED_MIME] = transcript.saved_chat(transcript.compact(snap), saved, True)
        data[WIDGET_MIME] = {"version_major": 2, "version_minor": 0, "model_id": uuid.uuid4().hex}
    return {"output_type": "display_data", "metadata": {}, "data": data}


def _write(lab: JupyterServer, with_chat: bool) -> str:
    cells = [
        {
            "cell_type": "code",
            "id": f"c{n}",
            "metadata": {},
            "execution_count": n + 1,
            "source": f"chat{n} = Chat('demo')\nchat{n}",
            "outputs": [_output(n, with_chat)],
        }
        for n in range(CHATS)
    ]
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "cells": cells,
    }
    filename = f"open-{'chats' if with_chat else 'static'}-{uuid.uuid4().hex[:6]}.ipynb"
    (lab.root / filename).write_text(json.dumps(nb))
    return filename


def _open_ms(browser: Browser, lab: JupyterServer, filename: str, items: str) -> float:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = context.new_page()
        page.goto(lab.url(f"lab/tree/{filename}?reset"))
        handle = page.wait_for_function(
            ALL_SHOWN,
            arg={"items": items, "last": "End of chat", "count": CHATS},
            timeout=120_000,
            polling="raf",
        )
        return float(handle.json_value())
    finally:
        context.close()


def run(ctx: Context) -> list[Row]:
    lab = ctx.server().lab
    chats, static = _write(lab, True), _write(lab, False)
    opened: dict[str, list[float]] = {"chats": [], "static": []}
    with chromium() as browser:
        _open_ms(browser, lab, static, ".acpnb-static-agent")  # warm-up: caches, lab build
        for _ in range(OPENS):
            opened["chats"].append(_open_ms(browser, lab, chats, ".acpnb-root .acpnb-agent"))
            opened["static"].append(_open_ms(browser, lab, static, ".acpnb-static-agent"))
    figure, reference = statistics.median(opened["chats"]), statistics.median(opened["static"])
    return [
        Row(
            f"11 notebook open, {CHATS} saved chats (JupyterLab)",
            f"navigation to every chat view with its transcript (median of {OPENS})",
            fmt(figure, "ms"),
            f"{fmt(reference, 'ms')} (the same notebook, static transcripts only)",
            figure / reference,
            f"ratio <= {TARGET:g}",
            figure / reference <= TARGET,
        )
    ]
