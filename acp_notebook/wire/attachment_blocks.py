"""Attachment blocks on the wire: what a prompt's attachments are, summarised and adapted.

An attachment is ``{"label", "block", "thumbnail"?}`` (see ``contracts.py``); this module
knows its shape and nothing of the Python objects it came from
(``notebook_tools/attachments.py`` makes it from those).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, unquote

from .contracts import AttachmentSummary


class AttachmentError(ValueError):
    """An object that cannot be attached; nothing was sent."""


Attachment = dict[str, Any]


def summary(attachment: Mapping[str, Any]) -> AttachmentSummary:
    """What the transcript keeps of an attachment."""
    block = attachment["block"]
    kind = block["type"]
    result: AttachmentSummary = {"type": kind, "label": attachment["label"]}
    mime = block["resource"].get("mimeType") if kind == "resource" else block.get("mimeType")
    if mime:
        result["mimeType"] = mime
    if attachment.get("thumbnail"):
        result["thumbnail"] = attachment["thumbnail"]
    return result


# A "%" that does not start an escape of two hex digits.
_BAD_ESCAPE = re.compile("%(?![0-9A-Fa-f]{2})")


def resource_name(uri: str) -> str:
    """A resource as people name it: the last segment of its URI's path, decoded (a
    variable's name for ``notebook://variables/df``, a file's for ``file:///w/notes.md``),
    else the URI. The twin of ``resourceName`` in js/src/attach.ts."""
    segment = uri.split("#", 1)[0].split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    if _BAD_ESCAPE.search(segment):  # as decodeURIComponent, which throws on it
        return uri
    try:
        name = unquote(segment, errors="strict")
    except UnicodeDecodeError:
        return uri
    return name or uri


def describe(summaries: Iterable[Mapping[str, Any]]) -> str:
    """Attachments as one line of text, for the static transcript."""
    icons = {"image": "🖼", "resource": "📎", "resource_link": "🔗", "text": "📝"}
    return " ".join(f"[{icons.get(str(s.get('type')), '📎')} {s.get('label')}]" for s in summaries)


def adapt(
    blocks: Iterable[dict[str, Any]], capabilities: Any, agent: str = "the agent"
) -> list[dict[str, Any]]:
    """The blocks this agent accepts, from its ``agentCapabilities``.

    An embedded resource goes as a text block (its uri, then its text) to an agent
    without ``embeddedContext``; an image to one without ``image`` is an error.
    """
    prompt = capabilities.get("promptCapabilities") if isinstance(capabilities, dict) else None
    prompt = prompt if isinstance(prompt, dict) else {}
    result = []
    for block in blocks:
        if block["type"] == "image" and prompt.get("image") is not True:
            raise AttachmentError(
                f"{agent} does not accept images (promptCapabilities.image is not true); "
                "nothing was sent"
            )
        if block["type"] == "resource" and prompt.get("embeddedContext") is not True:
            resource = block["resource"]
            block = {"type": "text", "text": f"{resource['uri']}\n{resource['text']}"}
        result.append(block)
    return result


def text_resource(label: str, uri: str, text: str, mime: str = "text/plain") -> Attachment:
    """``text`` embedded as a resource (what an agent without embeddedContext gets as text)."""
    resource = {"uri": uri, "mimeType": mime, "text": text}
    return {"label": label, "block": {"type": "resource", "resource": resource}}


def variable_uri(name: str) -> str:
    return f"notebook://variables/{quote(name)}"
