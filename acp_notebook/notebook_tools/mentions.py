"""The composer's ``@`` mentions: the kernel's variables, and one of them as an attachment.

Read in the kernel with the notebook tools' reader (``notebook_tools.variables``), on a
worker thread, so they answer while a cell runs; asked over the same channel as those
tools (``kernel:query`` in server mode, a direct call in local mode). Answers are JSON
text that fits the channel's cap (``wire.contracts.MAX_ANSWER``, 64 KiB).
"""

from __future__ import annotations

import json

from ..wire.attachment_blocks import text_resource, variable_uri
from ..wire.clip import clip
from ..wire.contracts import MAX_LABEL
from . import attachments, bounded
from .variables import inspect_variable, type_name, user_namespace, user_variables

MAX_VARIABLES = 200
MAX_ANSWER = 60_000  # characters of one answer, under the channel's 64 KiB
ATTACH_SECONDS = 5.0  # converting one value (a DataFrame's CSV head, a figure's PNG)


def variables() -> str:
    """``{"variables": [{"name", "type"}], "omitted": n}``: names and types only, so
    no value's code runs."""
    names = user_variables(user_namespace())
    listed = [{"name": n, "type": type_name(v)[:128]} for n, v in names[:MAX_VARIABLES]]
    return json.dumps({"variables": listed, "omitted": max(0, len(names) - MAX_VARIABLES)})


def mention(name: str) -> str:
    """The attachment for variable ``name`` (JSON): what ``attach=`` makes of it when that
    fits the answer (a DataFrame, a small figure, a string...), else the notebook tools'
    inspection of it as text."""
    ns = user_namespace()
    found = dict(user_variables(ns))
    if name not in found:
        raise ValueError(f"no variable named {name!r}")
    value = found[name]
    made = bounded.call(lambda: attachments.attach(value, name), ATTACH_SECONDS)
    if isinstance(made, dict):
        block = made["block"]
        if block["type"] == "resource":  # a DataFrame's head: cut to fit, it is text
            block["resource"]["text"] = _fit(block["resource"]["text"])
        elif block["type"] == "text":
            block["text"] = _fit(block["text"])
        text = json.dumps(made)
        if len(text) <= MAX_ANSWER:
            return text
    # Not attachable as such (or an image too large for the answer): the inspection.
    label = f"{name} · {type_name(value)}"[:MAX_LABEL]
    inspected = _fit(inspect_variable(name, ns))
    return json.dumps(text_resource(label, variable_uri(name), inspected))


def _fit(text: str) -> str:
    # JSON may double a character (escapes); leave room for the rest of the answer.
    return clip(text, MAX_ANSWER // 2 - 1000)
