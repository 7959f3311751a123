"""What a saved notebook keeps of a chat: a compact snapshot and a static HTML transcript.

Widget state is saved into the ``.ipynb``, so it holds a bounded summary of the
fold rather than the event stream; the HTML transcript lets a notebook opened
without a kernel (or rendered by nbconvert) still show the conversation. The
``SAVED_MIME`` output carries the snapshot with what continuing the chat takes
(agent name, cwd, mode, ACP session id): never a command line or an environment.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any, cast

from ..agent.resume import continue_method
from ..wire.attachment_blocks import describe
from ..wire.clip import clip, clip_start
from ..wire.contracts import FoldSnapshot, SavedChatData, valid_session_id

MAX_ITEMS = 200
MAX_TEXT = 20_000
# The static transcript is for reading (nbconvert, a viewer): whole for any answer of
# usual length, still bounded, since each turn's end sends it to the frontend again.
STATIC_TEXT = 200_000
MAX_TOOL_TEXT = 4_000
# A command's output in the saved chat: its end, like a terminal's scrollback.
MAX_TERMINAL_TEXT = 20_000
# What in a terminal's output is not text: CSI sequences (colours, cursor) and OSC strings.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?")


def _run_code(tool: dict[str, Any]) -> str | None:
    """The code of a notebook run_code call (kept, so a saved chat still shows it)."""
    raw = tool.get("rawInput")
    if tool.get("title") not in ("mcp__notebook__run_code", "run_code") or not isinstance(
        raw, dict
    ):
        return None
    code = raw.get("code")
    return clip_start(code, MAX_TOOL_TEXT) if isinstance(code, str) else None


def _compact_tool(tool: dict[str, Any]) -> dict[str, Any]:
    content = []
    for block in tool.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "diff":
            old = block.get("oldText")
            content.append(
                {
                    "type": "diff",
                    "path": block.get("path"),
                    "oldText": None if old is None else clip_start(str(old), MAX_TOOL_TEXT),
                    "newText": clip_start(str(block.get("newText") or ""), MAX_TOOL_TEXT),
                }
            )
        elif block.get("type") == "content":
            inner = block.get("content")
            text = inner.get("text") if isinstance(inner, dict) else None
            if isinstance(text, str):
                shown = {"type": "text", "text": clip_start(text, MAX_TOOL_TEXT)}
                content.append({"type": "content", "content": shown})
    kept = {
        "toolCallId": tool.get("toolCallId"),
        "title": clip_start(str(tool.get("title") or ""), 256),
        "kind": tool.get("kind"),
        "status": tool.get("status"),
        "content": content,
        "locations": (tool.get("locations") or [])[:20],
        "rawInput": {"code": code} if (code := _run_code(tool)) is not None else None,
        "rawOutput": None,
    }
    terminal = tool.get("terminal")
    if isinstance(terminal, dict):
        output = terminal["output"]
        over = max(0, len(output) - MAX_TERMINAL_TEXT)
        kept["terminal"] = {**terminal, "output": output[over:], "cut": terminal["cut"] + over}
    return kept


def compact(snap: FoldSnapshot, max_text: int = MAX_TEXT) -> FoldSnapshot:
    """The fold snapshot cut down for widget state: recent items, texts of at most
    ``max_text`` characters (their end; an edit card's sources, their start), no raw
    I/O, no queue (prompts waiting for a turn are the live chat's, and may be long) and no
    sign-in (the live agent's: a terminal method names its command line)."""
    whole = {k: v for k, v in cast(dict[str, Any], snap).items() if k not in ("queue", "auth")}
    items = whole["items"][-MAX_ITEMS:]
    kept_items = []
    # The cards of the items kept, each under its map in the snapshot.
    kept: dict[str, dict[str, Any]] = {"toolCalls": {}, "permissions": {}, "elicitations": {}}
    for item in items:
        item = dict(item)
        if "text" in item:
            item["text"] = clip_start(item["text"], max_text)
        if item.get("attachments"):
            # Labels only: thumbnails would make saved notebooks heavy.
            item["attachments"] = [
                {k: v for k, v in a.items() if k != "thumbnail"} for a in item["attachments"]
            ]
        key, id_key = _CARDS.get(item["type"], ("", ""))
        card = whole[key].get(item[id_key]) if key else None
        if card is not None:
            if key == "toolCalls":
                card = _compact_tool(card)
            elif "edit" in card:
                edit = card["edit"]
                sources = {k: clip(edit[k], max_text) for k in ("before", "after")}
                card = {**card, "edit": {**edit, **sources}}
            kept[key][item[id_key]] = card
        kept_items.append(item)
    return cast(FoldSnapshot, {**whole, "items": kept_items, **kept, "commands": []})


# The items that stand for a card: the snapshot's map of those cards, and the id key.
_CARDS = {
    "tool": ("toolCalls", "toolCallId"),
    "permission": ("permissions", "requestId"),
    "elicitation": ("elicitations", "requestId"),
}


# What in chat text ends the isolate around it: a POP DIRECTIONAL ISOLATE that matches
# none of the text's own isolates (Chromium isolates a <bdi> with the same characters),
# and a paragraph separator. js/src/dom.ts `contained` does the same in the widget.
_ISOLATE_ENDS = re.compile("[\u2066-\u2069\u2029\u0085\x1c-\x1e]")


def _contained(text: str) -> str:
    """``text`` safe to isolate: a stray POP DIRECTIONAL ISOLATE is dropped, isolates it
    leaves open are closed, paragraph separators become line feeds."""
    open_ = 0

    def keep(match: re.Match[str]) -> str:
        nonlocal open_
        char = match.group()
        if char == "\u2069":
            if open_ == 0:
                return ""
            open_ -= 1
            return char
        if char >= "\u2066":
            open_ += 1
            return char
        return "\n"

    return _ISOLATE_ENDS.sub(keep, text) + "\u2069" * open_


def _text(value: object) -> str:
    """Chat text, escaped and isolated: a right-to-left override in it (agents send
    them) cannot reorder what follows."""
    return f"<bdi>{html.escape(_contained(str(value)), quote=True)}</bdi>"


# The items that are text, each in its own markup.
_TEXT_ROWS = {
    "user": '<div class="acpnb-static-user"><b>You:</b> {}</div>',
    "agent": '<div class="acpnb-static-agent" style="white-space:pre-wrap">{}</div>',
    "thought": "<details><summary>Thought</summary><pre>{}</pre></details>",
    "error": '<div style="color:#b00">{}</div>',
}


def render_html(snap: FoldSnapshot) -> str:
    """A static, script-free transcript; every agent string is escaped."""
    rows = "".join(_row(cast(dict[str, Any], snap), dict(item)) for item in snap["items"])
    agent = snap["agent"]
    # The session's title as the agent named it, beside the agent's name.
    title = f" · <i>{_text(clip(snap['title'], 200))}</i>" if snap["title"] else ""
    name = _text(agent.get("name") or "agent")
    head = f"<div><b>{name}</b>{title} · {_text(agent.get('status'))}</div>"
    dropped = snap.get("dropped")
    if dropped:  # the kernel's fold is bounded: say what it no longer holds
        head += (
            f"<div><i>{dropped['items']:,} earlier items and {dropped['characters']:,}"
            " characters of a long message are no longer kept</i></div>"
        )
    return f'<div class="acpnb-static">{head}{rows}</div>'


# A turn cut short, by its stopReason (js/src/i18n.ts says the same).
_STOPPED = {
    "cancelled": "Stopped",
    "max_tokens": "Stopped: the answer reached the agent's length limit",
    "max_turn_requests": "Stopped: the agent reached its limit of steps in one turn",
    "refusal": "The agent refused to go on",
}


def _row(snap: dict[str, Any], item: dict[str, Any]) -> str:
    kind = item["type"]
    if kind == "stopped":
        reason = item["reason"]
        said = _STOPPED.get(reason)
        return f"<div><i>{_text(said) if said else f'Stopped ({_text(reason)})'}</i></div>"
    if kind in _TEXT_ROWS:
        attached = item.get("attachments")  # a user message's
        extra = f" {_text(describe(attached))}" if attached else ""
        return _TEXT_ROWS[kind].format(_text(item["text"]) + extra)
    if kind == "tool":
        tool = snap["toolCalls"].get(item["toolCallId"], {})
        title = tool.get("title") or item["toolCallId"]
        card = _card("🔧", title, " — ", tool.get("status") or "")
        code = _run_code(tool)
        if code is not None:
            card += f"<pre>{_text(code)}</pre>"
        terminal = tool.get("terminal")
        if terminal:
            card += f"<pre>{_text(_terminal_text(terminal))}</pre>"
        return card
    if kind == "permission":
        p = snap["permissions"].get(item["requestId"], {})
        title = (p.get("toolCall") or {}).get("title") or "permission"
        return _card("🔒", title, ": ", p.get("optionId") or p.get("outcome") or "pending")
    if kind == "elicitation":
        e = snap["elicitations"].get(item["requestId"], {})
        # A URL question names the host it asked to open, as text: a saved page opens nothing.
        title = e.get("message") or ""
        if e.get("host"):
            title = f"{title} ({e['host']})"
        return _card("❓", title, " — ", e.get("outcome") or "pending")
    return ""


def _terminal_text(terminal: Mapping[str, Any]) -> str:
    """A terminal's output as plain text (no escapes), saying what was cut before it."""
    text = _ESCAPES.sub("", terminal["output"])
    cut = terminal["cut"]
    return f"[{cut:,} earlier characters not kept]\n{text}" if cut else text


def _card(icon: str, title: object, separator: str, state: object) -> str:
    return f"<div>{icon} {_text(title)}{separator}{_text(state)}</div>"


def saved_chat(
    compact_snapshot: FoldSnapshot, chat: Mapping[str, Any], named: bool
) -> SavedChatData:
    """The ``SAVED_MIME`` data: ``chat`` (its ids, agent, cwd, mode and locale), the
    transcript, and whether "Continue" can reopen it.

    Only a named agent can be reopened (the server starts no command from a notebook),
    and only one that advertised session/load or session/resume.
    """
    agent_state = compact_snapshot["agent"]
    session_id = agent_state.get("sessionId")
    data = {
        "version": 1,
        **chat,
        "sessionId": session_id,
        "canLoad": named
        and valid_session_id(session_id)
        and continue_method(agent_state.get("capabilities")) is not None,
        "snapshot": compact_snapshot,
    }
    return cast(SavedChatData, data)
