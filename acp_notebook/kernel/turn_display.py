"""How a finished ``Turn`` shows as a cell's value: its text, not ``<Turn 7: ...>``.

The agent's text is untrusted, and a notebook renders a cell's HTML output as it is
(trusted while the kernel runs): so the HTML is built here, every character of the
agent's escaped, rather than handed to a Markdown renderer whose reading of a crafted
text (an unclosed fence in a list, a backslash before a backtick) could let raw HTML
through. Fenced code blocks become ``<pre>``, inline code ``<code>``; the rest keeps
its line breaks. Bounded: a long answer shows its start and says what was left out.
"""

from __future__ import annotations

import html
import re

MAX_SHOWN = 50_000  # characters of the answer shown; ``turn.text`` has them all
# A fence line as CommonMark opens one (up to 3 spaces, then ``` or ~~~ runs).
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# An inline code span on one line: a backtick run and the next run of the same length.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# Stop reasons said in words; any other is shown as the agent named it.
STOP_WORDS = {
    "cancelled": "Stopped",
    "max_tokens": "Stopped: the answer reached the agent's length limit",
    "max_turn_requests": "Stopped: the agent reached its limit of steps",
    "refusal": "The agent refused",
}


def footer(stop_reason: str | None, error: str | None) -> str | None:
    """The line under the text when the turn did not simply end: None when it did."""
    if error:
        return f"Error: {error}"
    if stop_reason in (None, "end_turn"):
        return None
    return STOP_WORDS.get(stop_reason, f"Stopped: {stop_reason}")


def _inline(line: str) -> str:
    """One line of prose: escaped, its code spans in ``<code>``."""
    out, at = [], 0
    for span in _CODE_SPAN.finditer(line):
        out.append(html.escape(line[at : span.start()]))
        out.append(f"<code>{html.escape(span.group(2).strip() or span.group(2))}</code>")
        at = span.end()
    out.append(html.escape(line[at:]))
    return "".join(out)


def text_html(text: str) -> str:
    """``text`` (an agent's Markdown) as escaped HTML: fences as blocks, code spans as code."""
    parts: list[str] = []
    prose: list[str] = []
    fence: str | None = None  # the opening run while inside a fenced block
    code: list[str] = []

    def flush_prose() -> None:
        if prose:
            body = "\n".join(_inline(line) for line in prose)
            parts.append(f'<div style="white-space:pre-wrap">{body}</div>')
            prose.clear()

    for line in text.split("\n"):
        opened = _FENCE.match(line)
        if fence is None and opened:
            flush_prose()
            fence = opened.group(1)
            continue
        if fence is not None:
            closing = line.strip()
            if closing.startswith(fence[0] * len(fence)) and not closing.strip(fence[0]):
                parts.append(f"<pre><code>{html.escape(chr(10).join(code))}</code></pre>")
                fence, code = None, []
            else:
                code.append(line)
            continue
        prose.append(line)
    if fence is not None:  # an unclosed fence: its lines are still code
        parts.append(f"<pre><code>{html.escape(chr(10).join(code))}</code></pre>")
    flush_prose()
    return "".join(parts)


def turn_html(text: str, stop_reason: str | None, error: str | None) -> str:
    """A turn as the HTML a notebook shows for it: its text (bounded), then a footer."""
    shown = text[:MAX_SHOWN]
    body = text_html(shown)
    if len(text) > len(shown):
        left = len(text) - len(shown)
        body += f"<div><i>… {left:,} more characters (turn.text has the whole answer)</i></div>"
    if not text and not error:
        body = "<div><i>(no text)</i></div>"
    note = footer(stop_reason, error)
    if note is not None:
        body += f'<div style="opacity:0.75"><i>{html.escape(note)}</i></div>'
    return f'<div class="acpnb-turn">{body}</div>'
