"""11. Opening a notebook that holds many chats, in JupyterLab: saved ones, and live ones.

Saved: a notebook of 20 code cells, each with a saved chat's output as ``Chat`` displays
it (the saved-chat data the extension renders as the chat view with its transcript, the
static ``text/html`` transcript, the widget view), of a kernel that is gone: the time
from navigation to every chat rendered with its whole transcript (each one's last answer
in the page), measured in the page. Live: 20 chats opened by the cells of a notebook
whose kernel still runs them, 5 turns each (a thought, three tool calls, a diff, a
Markdown answer), the notebook saved and opened again in a new page: the time from
navigation to every chat view linked to its chat, agent ready, last answer shown.

The reference of each is the same notebook with only the static transcripts
(``text/html`` and ``text/plain``), opened the same way; the two are opened in turn
(A B A B ...), each figure the median of its opens.
"""

from __future__ import annotations

import json
import re
import statistics
import uuid
from typing import Any, cast

from playwright.sync_api import Browser, expect

from acp_notebook.kernel import transcript
from acp_notebook.wire import fold as folding
from tests.support.lab import JupyterServer, cell, run_cell, save

from .browser import chromium, open_page, write_cells
from .common import DEMO_ENV, Context, Row, fmt

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
    return shown === arg.count ? [performance.now(), performance.now()] : false;
}"""
# Every chat view linked to its live chat (agent ready, not "connecting…"), its last
# answer shown; and when the last of the views appeared.
LIVE_SHOWN = """(arg) => {
    const roots = document.querySelectorAll(".acpnb-root");
    if (window.__views === undefined && roots.length === arg.count) {
        window.__views = performance.now();
    }
    let shown = 0;
    for (const root of roots) {
        const status = root.querySelector(".acpnb-status[data-status='ready']");
        if (status === null || status.textContent === arg.connecting) continue;
        const items = root.querySelectorAll(".acpnb-agent");
        const last = items[items.length - 1];
        if (last !== undefined && last.textContent.includes(arg.last)) shown += 1;
    }
    return shown === arg.count ? [performance.now(), window.__views] : false;
}"""
# The demo agent's `agentic` answer of a chat's last turn.
LIVE_LAST = f"Turn {TURNS}: doubled"


def _events(chat: int) -> list[dict[str, Any]]:
    """A chat of a few turns, each with a tool call and a Markdown answer."""
    events: list[dict[str, Any]] = [
        {"kind": "agent_status", "status": "ready", "agent": "demo", "sessionId": f"s{chat}"}
    ]
    for turn in range(1, TURNS + 1):
        call = f"t{turn}"
        tool = {"sessionUpdate": "tool_call", "toolCallId": call, "title": f"Read file {turn}"}
        done = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call,
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


def _open_ms(
    browser: Browser, lab: JupyterServer, filename: str, shown: str, arg: dict[str, Any]
) -> list[float]:
    """Navigation to ``shown(arg)``, and to the last chat view in the page, in ms."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = context.new_page()
        page.goto(lab.url(f"lab/tree/{filename}?reset"))
        handle = page.wait_for_function(shown, arg=arg, timeout=120_000, polling="raf")
        return [float(t) for t in handle.json_value()]
    finally:
        context.close()


def _live_notebook(lab: JupyterServer, browser: Browser) -> str:
    """A notebook whose kernel runs ``CHATS`` chats of ``TURNS`` turns each, saved."""
    cells = [("code", f"chat{n} = Chat('demo', env={DEMO_ENV!r})\nchat{n}") for n in range(CHATS)]
    chats = ", ".join(f"chat{n}" for n in range(CHATS))
    turns = f"for c in [{chats}]:\n    for _ in range({TURNS}):\n        await c.ask('agentic')"
    filename = write_cells(
        lab, [("code", "from acp_notebook import Chat"), *cells, ("code", turns)]
    )
    with open_page(browser, lab, filename) as page:
        for index in range(CHATS + 2):
            run_cell(page, index, wait=index <= CHATS)
        expect(cell(page, CHATS + 1).locator(".jp-InputPrompt")).to_have_text(
            re.compile(r"\[\d+\]"), timeout=600_000
        )
        page.wait_for_function(LIVE_SHOWN, arg=_live_arg(), timeout=120_000)
        save(page)
    return filename


def _live_arg() -> dict[str, Any]:
    return {"last": LIVE_LAST, "count": CHATS, "connecting": "connecting…"}


def _static_copy(lab: JupyterServer, filename: str) -> str:
    """``filename`` with only the static transcripts of its chats' outputs."""
    nb = json.loads((lab.root / filename).read_text())
    for entry in nb["cells"]:
        for output in entry.get("outputs", []):
            if "data" in output:
                output["data"] = {
                    k: v for k, v in output["data"].items() if k in ("text/html", "text/plain")
                }
    static = f"static-{filename}"
    (lab.root / static).write_text(json.dumps(nb))
    return static


def _ab(
    browser: Browser, lab: JupyterServer, opens: list[tuple[str, str, dict[str, Any]]]
) -> list[list[float]]:
    """Medians of opening each of ``opens`` (file, predicate, arg), in turn ``OPENS`` times."""
    times: list[list[list[float]]] = [[] for _ in opens]
    for _ in range(OPENS):
        for spent, (filename, shown, arg) in zip(times, opens, strict=True):
            spent.append(_open_ms(browser, lab, filename, shown, arg))
    return [[statistics.median(part) for part in zip(*spent, strict=True)] for spent in times]


def _row(what: str, figure: float, reference: float, views: float | None = None) -> Row:
    shown = "" if views is None else f"; the last view in the page at {views:,.0f} ms"
    return Row(
        f"11 notebook open, {CHATS} {what} (JupyterLab)",
        f"navigation to every chat view with its transcript (median of {OPENS}{shown})",
        fmt(figure, "ms"),
        f"{fmt(reference, 'ms')} (the same notebook, static transcripts only)",
        figure / reference,
        f"ratio <= {TARGET:g}",
        figure / reference <= TARGET,
    )


def run(ctx: Context) -> list[Row]:
    lab = ctx.server().lab
    chats, static = _write(lab, True), _write(lab, False)
    saved = {"last": "End of chat", "count": CHATS}
    with chromium() as browser:
        static_view = {**saved, "items": ".acpnb-static-agent"}
        _open_ms(browser, lab, static, ALL_SHOWN, static_view)  # warm-up: caches, lab build
        (saved_ms, _), (saved_ref, _) = _ab(
            browser,
            lab,
            [
                (chats, ALL_SHOWN, {**saved, "items": ".acpnb-root .acpnb-agent"}),
                (static, ALL_SHOWN, static_view),
            ],
        )
        live = _live_notebook(lab, browser)
        live_static = _static_copy(lab, live)
        static_live = {"items": ".acpnb-static-agent", "last": LIVE_LAST, "count": CHATS}
        _open_ms(browser, lab, live_static, ALL_SHOWN, static_live)  # its kernel started
        (live_ms, views), (live_ref, _) = _ab(
            browser,
            lab,
            [(live, LIVE_SHOWN, _live_arg()), (live_static, ALL_SHOWN, static_live)],
        )
    return [
        _row("saved chats", saved_ms, saved_ref),
        _row("live chats, linked", live_ms, live_ref, views),
    ]
