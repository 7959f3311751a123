"""Answers reach the agent through the extension while a cell keeps the kernel busy."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.support.demo_answers import demo_answer
from tests.support.server_peers import OPEN_CHAT

ANSWER = {"question_0": "blue", "confirm": True, "count": 4}


async def test_answer_reaches_agent_while_a_cell_blocks(
    start_kernel: Any, cells: Any, browser: Any, jp_fetch: Any
) -> None:
    kernel_id = await start_kernel()
    kernel = await cells(kernel_id)
    blocking = kernel.execute(
        OPEN_CHAT + 'turn = chat.send_prompt("ask-user")\nprint("turn:" + str(turn), flush=True)\n'
        "time.sleep(20)\n"
    )
    ids = await kernel.line(blocking, "chat:")
    assert ids["kernel"] == kernel_id
    chat_id = ids["chat"]
    assert await kernel.line(blocking, "turn:") == 1

    tab = await browser(kernel_id, chat_id)
    card = await tab.card(chat_id)
    assert [f["name"] for f in card["fields"]][:1] == ["question_0"]

    answered_at = time.monotonic()
    ack = await tab.request(
        {
            "type": "chat:elicitation.respond",
            "chatId": chat_id,
            "requestId": card["requestId"],
            "action": "accept",
            "values": ANSWER,
        }
    )
    assert ack["accepted"], ack
    resolved = await tab.event(chat_id, "elicitation_resolved", requestId=card["requestId"])
    assert resolved["outcome"] == "accepted"
    ended = await tab.event(chat_id, "turn_ended", turn=1)
    took = time.monotonic() - answered_at
    assert ended["stopReason"] == "end_turn"
    echoed = demo_answer(tab.text(chat_id))
    assert echoed == {"action": "accept", "content": ANSWER}
    # The turn finished long before the cell could have, and the cell is still running.
    assert took < 10, took
    assert kernel.busy(blocking)

    # The kernel's own Chat folded the same events from its background thread meanwhile.
    await jp_fetch("api", "kernels", kernel_id, "interrupt", method="POST", body="")
    await kernel.finished(blocking)
    state = json.loads(
        await kernel.run(
            "s = chat.state\n"
            f"card = s['elicitations'][{card['requestId']!r}]\n"
            "print(json.dumps({'outcome': card['outcome'], 'active': s['turn']['active'], "
            "'text': s['items'][-1]['text']}))"
        )
    )
    assert state["outcome"] == "accepted" and state["active"] is False
    assert "What the agent received:" in state["text"]
