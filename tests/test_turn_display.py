"""A ``Turn`` as a cell's value: its text, escaped and bounded, with a footer when it did
not simply end; ``repr`` stays short for the REPL. The last test takes turns from the
demo agent over the real wire."""

from __future__ import annotations

import asyncio
import html
import re

from IPython.core.formatters import DisplayFormatter

from acp_notebook.kernel import turn_display
from acp_notebook.kernel.chat import Chat, Turn

DEMO = {"ACP_DEMO_DELAY": "0"}
HOSTILE = '<img src=x onerror="alert(1)">'


def tags(markup: str) -> set[str]:
    return set(re.findall(r"<(\w+)", markup))


def test_text_is_escaped_with_code_blocks_and_spans() -> None:
    text = (
        f"Here is **it** {HOSTILE} and `a < b`.\n"
        "```python\n"
        "if a < b:\n"
        f"    print('{HOSTILE}')\n"
        "```\n"
        "after"
    )
    out = turn_display.turn_html(text, "end_turn", None)
    # Only our own tags: the agent's markup is text.
    assert tags(out) <= {"div", "pre", "code", "i"}, tags(out)
    assert "<img" not in out and html.escape(HOSTILE) in out
    assert "<code>a &lt; b</code>" in out
    assert "<pre><code>if a &lt; b:\n    print(&#x27;&lt;img" in out
    assert out.endswith("after</div></div>")  # no footer for a turn that simply ended


def test_a_crafted_fence_or_backtick_cannot_open_markup() -> None:
    # An unclosed fence, a fence in a list item, a backslash before a backtick: the text
    # is escaped whatever a Markdown renderer would have made of it.
    for text in [
        f"```\n{HOSTILE}",
        f"- a\n  ```\n{HOSTILE}\n```",
        f"\\`{HOSTILE}`",
        f"~~~~\n{HOSTILE}\n~~~",
        f"`` {HOSTILE} ``",
    ]:
        out = turn_display.turn_html(text, None, None)
        assert "<img" not in out and "onerror=&quot;" in out, out


def test_footer_says_how_a_turn_ended() -> None:
    assert turn_display.footer("end_turn", None) is None
    assert turn_display.footer(None, None) is None
    assert turn_display.footer("cancelled", None) == "Stopped"
    assert turn_display.footer("max_tokens", None).startswith("Stopped: the answer reached")
    assert turn_display.footer("something_new", None) == "Stopped: something_new"
    assert turn_display.footer("end_turn", "the agent exited") == "Error: the agent exited"
    out = turn_display.turn_html("half an ans", "cancelled", None)
    assert out.endswith('<div style="opacity:0.75"><i>Stopped</i></div></div>')
    assert "(no text)" in turn_display.turn_html("", "end_turn", None)


def test_a_long_answer_is_bounded() -> None:
    text = "x" * (turn_display.MAX_SHOWN + 12_345)
    out = turn_display.turn_html(text, "end_turn", None)
    assert len(out) < turn_display.MAX_SHOWN + 500
    assert "… 12,345 more characters (turn.text has the whole answer)" in out


def test_a_notebook_shows_the_text_and_the_repl_the_repr() -> None:
    turn = Turn(7, f"The answer {HOSTILE}", "cancelled", None)
    assert repr(turn) == f"<Turn 7: cancelled, {len(turn.text)} characters>"
    assert "The answer &lt;img" in turn._repr_html_() and "Stopped" in turn._repr_html_()
    # A magic's turn: the chat under its cell shows it already, so nothing more is shown.
    shown = Turn(7, "text", "end_turn", None, shown=True)
    assert shown == Turn(7, "text", "end_turn", None)
    assert DisplayFormatter().format(shown) == ({}, {})


async def test_turns_from_the_demo_agent_display_as_their_text() -> None:
    chat = Chat("demo", env=DEMO, transport="local")
    try:
        turn = await chat.ask("plan", timeout=60)
        out = turn._repr_html_()
        assert turn.ok and html.escape(turn.text.splitlines()[0]) in out
        assert "Stopped" not in out
        # A stopped answer says so under its text.
        number = chat.send_prompt("slow")  # five seconds of ticks
        await chat._until(lambda: True if chat.state["turn"]["phase"] == "responding" else None, 60)
        chat.cancel()
        stopped = await asyncio.wait_for(asyncio.wrap_future(chat._turn_future(number)), 60)
        assert stopped.stop_reason == "cancelled", stopped
        assert stopped._repr_html_().endswith("<i>Stopped</i></div></div>")
    finally:
        chat.close()


async def test_a_view_from_here_shows_that_turn_only() -> None:
    chat = Chat("demo", env=DEMO, transport="local")
    try:
        await chat.ask("first question", timeout=60)
        view = chat.from_here()
        assert view.from_item == len(chat.state["items"]) and view.chat_id == chat.chat_id
        await chat.ask("second question", timeout=60)
        view.end_here()
        assert view.to_item == len(chat.state["items"]) > view.from_item
        await chat.ask("third question", timeout=60)
        # What a notebook shows where the widget cannot be: that turn's transcript.
        saved = view._repr_mimebundle_()[0]
        # The prompts of that turn only (the header may name the chat by its first prompt).
        said = "<b>You:</b> <bdi>{}</bdi>".format
        assert said("second question") in saved["text/html"]
        assert said("first question") not in saved["text/html"]
        assert said("third question") not in saved["text/html"]
        assert saved["text/plain"] == f"Chat(agent='demo'), from item {view.from_item}"
        assert said("first question") in chat._repr_mimebundle_()[0]["text/html"]  # the whole chat
    finally:
        chat.close()
