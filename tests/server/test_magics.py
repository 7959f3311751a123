"""``%%agent`` in a real kernel: local mode answers a card over the comm while the magic
awaits; server mode answers it over the browser socket."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.demo_answers import demo_answer
from tests.support.frontend import Frontend
from tests.support.server_peers import OPEN_CHAT

ANSWER = {"question_0": "blue", "confirm": True, "count": 4}


async def test_a_magic_cell_answers_a_card_over_the_comm_while_it_awaits(
    local_frontend: Frontend,
) -> None:
    kernel = local_frontend
    setup = kernel.client.execute("import acp_notebook")  # loads the magics
    await kernel.finished(setup)

    cell = kernel.client.execute("%%agent\nplease ask-user something")
    card = await kernel.until(
        lambda: next((e for e in kernel.events(cell) if e["kind"] == "elicitation_request"), None)
    )
    assert kernel.of(cell, "display_data"), "the chat is displayed under the cell"
    kernel.send_to_widget(
        kernel.widget_comm(cell),
        {
            "type": "chat:elicitation.respond",
            "requestId": card["requestId"],
            "action": "accept",
            "values": ANSWER,
            "id": 1,
        },
    )
    await kernel.finished(cell)
    # The chat under the cell shows the turn: its value is not shown again, and is `_`.
    assert kernel.of(cell, "execute_result") == []
    resolved = [e for e in kernel.events(cell) if e["kind"] == "elicitation_resolved"]
    assert resolved[0]["outcome"] == "accepted"
    value = kernel.client.execute("print(repr(_))")
    await kernel.finished(value)
    assert kernel.of(value, "stream")[0]["text"].startswith("<Turn 1: end_turn,")


@pytest.mark.parametrize("awaited", [True, False])
async def test_magic_forms(local_frontend: Frontend, awaited: bool) -> None:
    kernel = local_frontend
    code = (
        "import json, pandas as pd\n"
        "import acp_notebook\n"
        f"get_ipython().autoawait = {awaited}\n"
        "frame = pd.DataFrame({'a': [1, 2]})\n"
    )
    setup = kernel.client.execute(code)
    await kernel.finished(setup)
    first = kernel.client.execute("%%agent demo\nhello")
    await kernel.finished(first, timeout=120)

    def views(cell: str) -> list[int]:
        """The from_item of each chat view the cell displayed (%%agent's TurnView)."""
        opened = [c["data"]["state"] for c in kernel.of(cell, "comm_open")]
        return [state["from_item"] for state in opened if "from_item" in state]

    assert views(first) == [0]
    count = kernel.client.execute("print(len(acp_notebook.Chat.opened()[0].state['items']))")
    await kernel.finished(count, timeout=120)
    first_turn = int(kernel.of(count, "stream")[0]["text"])
    second = kernel.client.execute(
        "t = %agent --attach frame what is in it?\n"
        "print(json.dumps({'turn': t.number, 'text': t.text, "
        "'chats': len(acp_notebook.Chat.opened())}))"
    )
    await kernel.finished(second, timeout=120)
    out = json.loads("".join(c["text"] for c in kernel.of(second, "stream")))
    assert out["turn"] == 2 and out["chats"] == 1
    # The second prompt's view starts after the first turn's items.
    assert first_turn >= 2 and views(second) == [first_turn]
    assert "- frame: pandas DataFrame `frame`: 2 rows × 1 columns" in out["text"]
    third = kernel.client.execute("%%agent --new\nhi")
    await kernel.finished(third, timeout=120)
    fourth = kernel.client.execute("%%agent --bogus\nhi")
    await kernel.until(lambda: kernel.of(fourth, "error"))
    assert "unknown option --bogus" in kernel.of(fourth, "error")[0]["evalue"]


async def test_a_magic_cell_in_server_mode_is_answered_from_the_page(
    start_kernel: Any, cells: Any, browser: Any
) -> None:
    kernel_id = await start_kernel()
    kernel = await cells(kernel_id)
    opened = kernel.execute(OPEN_CHAT)
    ids = await kernel.line(opened, "chat:")
    await kernel.finished(opened)
    cell = kernel.execute("%%agent\nask-user please")
    tab = await browser(kernel_id, ids["chat"])
    card = await tab.card(ids["chat"])
    ack = await tab.request(
        {
            "type": "chat:elicitation.respond",
            "chatId": ids["chat"],
            "requestId": card["requestId"],
            "action": "accept",
            "values": ANSWER,
        }
    )
    assert ack["accepted"], ack
    await kernel.finished(cell)
    assert cell not in kernel.errors
    out = await kernel.run(
        "t = _\nprint(json.dumps({'turn': t.number, 'ok': t.ok, 'text': t.text}))"
    )
    seen = json.loads(out)
    assert seen["turn"] == 1 and seen["ok"]
    assert demo_answer(seen["text"])["content"] == ANSWER
