"""A headless conversation with the demo agent: ``python -m acp_notebook.demo``.

It asks the agent a question-raising prompt, answers the question from Python
the way a notebook user would from the card, and prints the finished turn.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..kernel.chat import Chat


async def main() -> None:
    chat = Chat("demo")
    print(f"{chat!r} in {chat.mode} mode")

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        print(f"\nthe agent asks: {request['message']}")
        for field in request["fields"]:
            print(f"  - {field['name']} ({field['type']}): {field.get('title', '')}")
        values = {"question_0": "blue", "note": "from the demo", "confirm": True, "count": 2}
        print(f"answering: {values}")
        return values

    chat.on_elicitation(answer)
    turn = await chat.ask("ask-user")
    print(f"\nturn {turn.number} ended ({turn.stop_reason}): {turn.text}")
    turn = await chat.ask("plan")
    print(f"turn {turn.number} ended ({turn.stop_reason}): {turn.text}")
    for entry in turn.plan:
        print(f"  [{'x' if entry['status'] == 'completed' else ' '}] {entry['content']}")
    chat.close()


if __name__ == "__main__":
    asyncio.run(main())
