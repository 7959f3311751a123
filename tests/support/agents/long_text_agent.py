"""An ACP agent that sends long unbroken text, for the layout-cost tests and benchmarks.

Each prompt names one case, ``CASE SIZE [CHUNK]``, and the agent answers with it, then
says ``done N`` (N counts the turns) in a message of its own, so a page can tell when
everything arrived:

- ``message SIZE``: one word of SIZE characters in a message;
- ``code SIZE``: the word in a fenced code block;
- ``tool SIZE``: the word as a tool call's output;
- ``diff SIZE``: the word as the new text of a tool call's diff;
- ``title SIZE``: the word as a tool call's title, the session's title and a plan entry;
- ``thought SIZE``: the word in a thought;
- ``stream SIZE CHUNK``: the word in a message, streamed CHUNK characters at a time;
- ``answer SIZE CHUNK``: a Markdown answer of SIZE characters (paragraphs, lists, code)
  streamed CHUNK characters at a time.

Standard library only: run as a script, next to the fault agent it builds on.
"""

from __future__ import annotations

import itertools
import os
import string
from collections.abc import Iterator
from typing import Any

from fault_agent import Agent

# Letters and digits only: "/" or "+" would let the line break after them.
ALPHABET = string.ascii_letters + string.digits


def word(size: int) -> str:
    """SIZE characters without a break opportunity, like base64 or minified code."""
    return "".join(itertools.islice(itertools.cycle(ALPHABET), size))


def markdown(size: int) -> str:
    """A Markdown answer of SIZE characters: the blocks an agent's long answer is made of."""
    blocks = itertools.cycle(
        [
            "## Step {n}\n\n",
            "Paragraph {n} explains **what** changed and `why`, in plain words.\n\n",
            "- item {n}\n- another item with [a link](https://example.com/{n})\n\n",
            "```python\nprint({n})\nvalue = {n} * 2\n```\n\n",
            "> a quote {n}\n\n",
        ]
    )
    parts: list[str] = []
    total = 0
    for n, block in enumerate(blocks):
        if total >= size:
            break
        text = block.format(n=n)
        parts.append(text)
        total += len(text)
    return "".join(parts)[:size]


def pieces(text: str, size: int) -> Iterator[str]:
    return (text[start : start + size] for start in range(0, len(text), size))


class LongTextAgent(Agent):
    """The fault agent without a fault, its prompts answered with long text."""

    def tool(self, tool_id: str, **fields: Any) -> None:
        self.update(
            {"sessionUpdate": "tool_call", "toolCallId": tool_id, "status": "completed", **fields}
        )

    def case(self, name: str, size: int, chunk: int) -> None:
        turn = f"t{self.turns}"
        text = word(size)
        if name == "message":
            self.say(text, turn)
        elif name == "code":
            self.say(f"```\n{text}\n```\n", turn)
        elif name == "thought":
            self.say(text, turn, "agent_thought_chunk")
        elif name == "tool":
            block = {"type": "content", "content": {"type": "text", "text": text}}
            self.tool(turn, title="cat data.b64", kind="read", content=[block])
        elif name == "diff":
            block = {"type": "diff", "path": "data.b64", "oldText": "old\n", "newText": text}
            self.tool(turn, title="Edit data.b64", kind="edit", content=[block])
        elif name == "title":
            self.tool(turn, title=text, kind="other")
            self.update({"sessionUpdate": "session_info_update", "title": text})
            entry = {"content": text, "priority": "high", "status": "pending"}
            self.update({"sessionUpdate": "plan", "entries": [entry]})
        elif name == "stream":
            self.chunks(pieces(text, chunk), turn)
        elif name == "answer":
            self.chunks(pieces(markdown(size), chunk), turn)
        else:
            self.say(f"unknown case {name!r}", turn)

    def prompt(self, message: dict[str, Any]) -> None:
        self.turns += 1
        self.prompt_id = message["id"]
        text = " ".join(b.get("text", "") for b in message["params"]["prompt"])
        name, *numbers = text.split()
        size, chunk = (int(n) for n in [*numbers, "0", "0"][:2])
        self.case(name, size, chunk)
        self.say(f"done {self.turns}", f"done-{self.turns}")
        self.end_turn()


if __name__ == "__main__":
    LongTextAgent("none", "stream", os.devnull).serve()
