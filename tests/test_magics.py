"""The agent magics' pure parts: options, and the rewrites IPython runs on a cell."""

from __future__ import annotations

import pytest

from acp_notebook.kernel.magics import MagicError, Options, line_magic, parse, rewrite


def test_cell_options_and_body() -> None:
    assert parse("", "  what is this?\n") == Options(prompt="what is this?")
    assert parse("claude-code --new --attach df,fig", "q") == Options(
        agent="claude-code", new=True, attach=["df", "fig"], prompt="q"
    )
    assert parse("--chat helper", "q").chat == "helper"
    with pytest.raises(MagicError, match="one agent name"):
        parse("demo codex", "q")
    with pytest.raises(MagicError, match="unknown option --fast"):
        parse("--fast", "q")
    with pytest.raises(MagicError, match="needs a prompt"):
        parse("demo", "   ")
    with pytest.raises(MagicError, match="--chat needs a value"):
        parse("--chat", "q")


def test_line_options_then_the_prompt_as_typed() -> None:
    assert parse("--agent demo  why  is 'x' slow?", None) == Options(
        agent="demo", prompt="why  is 'x' slow?"
    )
    assert parse("explain --new", None).prompt == "explain --new"


def test_line_magic_is_read_before_ipython_sees_a_question_mark() -> None:
    lines = ["t = %agent what is this?\n", "  %agent\n", "x = 1\n"]
    assert line_magic(lines) == [
        "t = get_ipython().run_line_magic('agent', 'what is this?')\n",
        "  get_ipython().run_line_magic('agent', '')\n",
        "x = 1\n",
    ]
    cell = ["%%agent\n", "%agent inside a prompt\n"]
    assert line_magic(cell) == cell


def test_top_level_calls_become_awaits() -> None:
    lines = [
        "get_ipython().run_cell_magic('agent', '', 'hi\\n')\n",
        "t = get_ipython().run_line_magic('agent', 'hi')\n",
        "    get_ipython().run_line_magic('agent', 'in a block')\n",
        "get_ipython().run_line_magic('time', 'x')\n",
    ]
    assert rewrite(lines) == [
        "await __import__(\"acp_notebook.kernel.magics\").kernel.magics.run_cell('agent', '', 'hi\\n')\n",
        "t = await __import__(\"acp_notebook.kernel.magics\").kernel.magics.run_line('agent', 'hi')\n",
        lines[2],
        lines[3],
    ]
