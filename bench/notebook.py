"""7. Saved notebook: what a long conversation leaves in the ``.ipynb``.

JupyterLab saves widget state only when asked (the widget manager's ``saveState``); the
benchmark turns it on, runs an N-chunk conversation, saves, and reads the file. The
reference is the chat's whole fold snapshot, what saving it unabridged would take.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_notebook.kernel.widget_code import bundle_text
from tests.support.lab import run_cell, save

from .browser import OPEN_CHAT, chromium, notebook_page, wait_ready
from .common import Context, Row, fmt, stream_text

LIMIT = 200_000
PER_CHAT = 30_000
KB = 1000
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
SAVE_STATE = Path("@jupyter-widgets/jupyterlab-manager/plugin.jupyterlab-settings")


def _cells(count: int) -> list[str]:
    return [
        OPEN_CHAT,
        f"turn = chat.wait(chat.send_prompt('stream {count}'), timeout=600)\n"
        f"assert turn.text == ''.join(f'{{i}} ' for i in range({count}))",
        "import json\n"
        "print('sizes:' + json.dumps([len(json.dumps(chat.snapshot)), len(json.dumps(chat.state))]))",
    ]


def _text(value: str | list[str]) -> str:
    """A multiline string of the .ipynb format: a string or a list of lines."""
    return value if isinstance(value, str) else "".join(value)


def _html(nb: dict[str, Any]) -> str:
    """The chat's static transcript: the text/html of the first cell's output."""
    for output in nb["cells"][0]["outputs"]:
        html = output.get("data", {}).get("text/html")
        if html:
            return _text(html)
    return ""


def run(ctx: Context) -> list[Row]:
    count = ctx.sizes.browser_chunks
    lab = ctx.server().lab
    settings = lab.settings / SAVE_STATE
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"saveState": True}))
    try:
        with chromium() as browser, notebook_page(browser, lab, _cells(count)) as (page, path):
            for index in range(3):
                run_cell(page, index)
                if index == 0:
                    wait_ready(page)
            save(page)
    finally:
        settings.unlink()
    nb = json.loads(path.read_text())
    widgets = nb["metadata"].get("widgets", {}).get(WIDGET_STATE)
    assert widgets, "no widget state in the saved notebook"
    saved = len(json.dumps(widgets))
    models = [m.get("state", {}) for m in widgets.get("state", {}).values()]
    code = sum(len(json.dumps(m.get("_esm", ""))) for m in models)
    stdout = "".join(_text(o.get("text", "")) for o in nb["cells"][2]["outputs"])
    trait, full = json.loads(stdout.split("sizes:", 1)[1])
    readable = stream_text(count).strip() in _html(nb)
    name = f"7 saved notebook, {count:,}-chunk answer"
    # The state as it would be with the whole fold snapshot in place of the compact one.
    unabridged = saved - trait + full
    # One chat's model, and what it was when every model carried the whole bundle.
    chat_model = max(len(json.dumps(m)) for m in models if "_esm" in m)
    bundled = chat_model - code + len(json.dumps(bundle_text()))
    per_chat = chat_model - trait  # what each further chat adds besides its own transcript
    return [
        Row(
            "7 saved notebook, widget state per additional chat",
            f"one chat's model without its snapshot (code {fmt(code / KB, 'KB')})",
            fmt(per_chat / KB, "KB"),
            f"{fmt((bundled - trait) / KB, 'KB')} (the model carrying the bundle)",
            per_chat / (bundled - trait),
            f"< {PER_CHAT // KB} KB",
            per_chat < PER_CHAT,
        ),
        Row(
            name,
            f"widget state in the .ipynb (widget code {fmt(code / KB, 'KB')})",
            fmt(saved / KB, "KB"),
            f"{fmt(unabridged / KB, 'KB')} (with the whole fold snapshot)",
            saved / unabridged,
            f"< {LIMIT // KB} KB",
            saved < LIMIT,
        ),
        Row(
            name,
            "snapshot trait (from Python)",
            fmt(trait / KB, "KB"),
            f"{fmt(full / KB, 'KB')} (the whole fold snapshot)",
            trait / full,
            f"< {LIMIT // KB} KB",
            trait < LIMIT,
        ),
        Row(
            name,
            ".ipynb file, static transcript",
            fmt(path.stat().st_size / KB, "KB"),
            "",
            None,
            "text/html has the answer",
            readable,
        ),
    ]
