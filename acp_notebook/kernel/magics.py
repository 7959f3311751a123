"""``%%agent`` and ``%agent``: a cell (or a line) as a prompt to the notebook's chat.

``%load_ext acp_notebook`` loads them (importing ``acp_notebook`` in IPython does too)::

    %%agent                      the current chat (a new ``Chat()`` if there is none)
    %%agent claude-code          the latest chat with that agent, or a new one
    %%agent --new                a new chat (of the named agent, or the default one)
    %%agent --chat helper        the Chat in variable ``helper``; created there if unset
    %%agent --attach df,fig      attach these variables (see ``attachments``)

    turn = %agent what does this error mean?   (options first, then the prompt)

Under the cell the chat shows this cell's turn (``Chat.from_here``: a button shows the
whole chat) and streams there; the magic's value is the finished ``Turn``, which the
cell does not show again (``_`` holds it). While it waits, questions and permissions
show as cards in the chat and can be answered there: the magic is rewritten into an awaited call (IPython's
autoawait), and ipykernel (>= 7.4) handles comm messages while a cell awaits, so a
card's answer reaches a local-mode chat too. With autoawait off the magic blocks
(``Chat.wait``), which in local mode raises ``NeedsAnswer`` on a question.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from .chat import Chat, Turn
from .turn_view import TurnView

# What IPython turns a magic into; rewritten into an await at a cell's top level.
_CALL = re.compile(r"\bget_ipython\(\)\.run_(cell|line)_magic\('agent', ")
_AWAIT = r"""await __import__("acp_notebook.kernel.magics").kernel.magics.run_\1('agent', """


_LINE = re.compile(r"^(?P<lead>\s*(?:[\w.]+\s*=\s*)?)%agent(?:\s(?P<rest>.*))?$", re.DOTALL)


class MagicError(ValueError):
    """A magic line that cannot be understood."""


@dataclass
class Options:
    agent: str | None = None
    new: bool = False
    chat: str | None = None
    attach: list[str] = field(default_factory=list)
    prompt: str = ""


def parse(line: str, cell: str | None) -> Options:
    """``%%agent`` options (an agent name and flags), or ``%agent``'s options then prompt."""
    options = Options()
    rest = line.strip()
    while rest:
        word, _, after = rest.partition(" ")
        after = after.lstrip()
        if word == "--new":
            options.new = True
        elif word in ("--chat", "--attach", "--agent"):
            value, _, after = after.partition(" ")
            if not value:
                raise MagicError(f"{word} needs a value")
            if word == "--chat":
                options.chat = value
            elif word == "--agent":
                options.agent = value
            else:
                options.attach += [name for name in value.split(",") if name]
        elif word.startswith("--"):
            raise MagicError(
                f"unknown option {word} (--new, --chat NAME, --attach A,B, --agent NAME)"
            )
        elif cell is not None and options.agent is None:
            options.agent = word
        else:
            break
        rest = after.lstrip()
    if cell is not None and rest:
        raise MagicError(f"%%agent takes one agent name and options, not {rest!r}")
    options.prompt = (cell if cell is not None else rest).strip()
    if not options.prompt:
        raise MagicError("%%agent needs a prompt: the cell's body (or the rest of the %agent line)")
    return options


def line_magic(lines: list[str]) -> list[str]:
    """``%agent ...`` as its call before IPython reads it: a prompt ending in ``?`` is a
    question, not a request for help (IPython's cleanup transformer)."""
    if lines and lines[0].lstrip().startswith("%%"):
        return lines  # a cell magic's body is its own
    result = []
    for line in lines:
        m = _LINE.match(line)
        if m:
            line = (
                f"{m['lead']}get_ipython().run_line_magic('agent', {(m['rest'] or '').strip()!r})\n"
            )
        result.append(line)
    return result


def rewrite(lines: list[str]) -> list[str]:
    """A top-level agent magic call as an await (IPython's post-transformer)."""
    return [_CALL.sub(_AWAIT, line) if not line[:1].isspace() else line for line in lines]


def _prepare(shell: Any, line: str, cell: str | None) -> tuple[Chat, TurnView, str, dict[str, Any]]:
    """The chat the magic picks, its view under the cell, its prompt and attachments."""
    from IPython.display import display

    options = parse(line, cell)
    ns = shell.user_ns
    missing = [name for name in options.attach if name not in ns]
    if missing:
        raise MagicError(f"--attach: no variable named {', '.join(missing)}")
    attach = {name: ns[name] for name in options.attach}
    chat = _choose(ns, options)
    view = chat.from_here()
    display(view)  # type: ignore[no-untyped-call]
    return chat, view, options.prompt, attach


def _choose(ns: dict[str, Any], options: Options) -> Chat:
    if options.chat is not None:
        existing = ns.get(options.chat)
        if isinstance(existing, Chat) and not options.new:
            return existing
        chat = ns[options.chat] = Chat(options.agent)
        return chat
    if not options.new:
        for chat in reversed(Chat.opened()):
            if chat.status != "exited" and options.agent in (None, chat.agent):
                return chat
    return Chat(options.agent)


# The ids of the IPython shells the magics are loaded in.
_loaded: set[int] = set()


async def run_cell(name: str, line: str, cell: str | None) -> Turn:
    """What ``%%agent`` becomes when the cell can await (see ``rewrite``); ``%agent``
    too, with no cell."""
    from IPython import get_ipython

    shell = get_ipython()
    if id(shell) not in _loaded:
        raise RuntimeError("the agent magics are not loaded: %load_ext acp_notebook")
    chat, view, prompt, attach = _prepare(shell, line, cell)
    return _shown(await chat.ask(prompt, attach=attach), view)


def _shown(turn: Turn, view: TurnView) -> Turn:
    """The turn as the magic's value: the view under the cell shows it (up to its end)."""
    view.end_here()
    return dataclasses.replace(turn, shown=True)


async def run_line(name: str, line: str, _stack_depth: int = 0) -> Turn:
    """What ``%agent`` becomes when the cell can await (see ``rewrite``)."""
    return await run_cell(name, line, None)


def load(shell: Any) -> None:
    """Register the magics and the rewrite on ``shell`` (again: nothing happens)."""
    if id(shell) in _loaded:
        return
    _loaded.add(id(shell))

    def agent(line: str, cell: str | None = None) -> Turn:
        """``%agent`` (a line) or ``%%agent`` (a cell) where the cell cannot await."""
        chat, view, prompt, attach = _prepare(shell, line, cell)
        return _shown(chat.wait(chat.send_prompt(prompt, attach=attach)), view)

    def awaited(lines: list[str]) -> list[str]:
        # Only where the cell's await runs on an asyncio loop: ipykernel's, or IPython's own.
        runner = getattr(shell.loop_runner, "__name__", "")
        asyncio_loop = hasattr(shell, "kernel") or runner == "_asyncio_runner"
        return rewrite(lines) if shell.autoawait and asyncio_loop else lines

    shell.register_magic_function(agent, "line", "agent")
    shell.register_magic_function(agent, "cell", "agent")
    shell.input_transformers_cleanup.append(line_magic)
    shell.input_transformers_post.append(awaited)
