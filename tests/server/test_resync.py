"""Reattaching, a second tab, and the kernel's own socket coming back: nothing is lost."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_notebook.wire import fold as folding
from acp_notebook.wire.contracts import MAX_ID
from tests.support.demo_answers import demo_answer
from tests.support.server_peers import OPEN_CHAT, until


async def test_reattach_and_second_tab_see_the_pending_card(
    start_kernel: Any, cells: Any, browser: Any
) -> None:
    kernel_id = await start_kernel()
    kernel = await cells(kernel_id)
    chat_id = json.loads(
        (await kernel.run(OPEN_CHAT + 'chat.send_prompt("ask-user")')).split("chat:", 1)[1]
    )["chat"]

    first = await browser(kernel_id, chat_id)
    card = await first.card(chat_id)
    first.close()
    await first.wait_closed()

    # A reload: the card is still pending, nothing was cancelled by leaving.
    again = await browser(kernel_id, chat_id)
    ack = await again.resync(chat_id)
    assert [e["requestId"] for e in ack["events"] if e["kind"] == "elicitation_request"] == [
        card["requestId"]
    ]
    assert not [e for e in ack["events"] if e["kind"] == "elicitation_resolved"]
    assert [e["prompt"] for e in ack["events"] if e["kind"] == "turn_started"] == ["ask-user"]

    second = await browser(kernel_id, chat_id)
    assert (await second.card(chat_id))["requestId"] == card["requestId"]

    assert (await second.respond(chat_id, card, action="decline"))["accepted"]
    for tab in (again, second):
        resolved = await tab.event(chat_id, "elicitation_resolved", requestId=card["requestId"])
        assert resolved["outcome"] == "declined"
        await tab.event(chat_id, "turn_ended", turn=1)
    # Settled once: the other tab's late answer finds nothing to answer.
    late = await again.respond(chat_id, card, action="cancel")
    assert late["error"] == "ELICITATION_NOT_FOUND"
    assert demo_answer(again.text(chat_id)) == {"action": "decline"}


async def test_kernel_socket_reconnects_and_catches_up(
    start_kernel: Any, cells: Any, browser: Any
) -> None:
    kernel_id = await start_kernel()
    kernel = await cells(kernel_id)
    chat_id = json.loads((await kernel.run(OPEN_CHAT)).split("chat:", 1)[1])["chat"]
    # Drop the kernel's socket and hold the reconnection until the test says so.
    await kernel.run(
        "import asyncio\n"
        "from acp_notebook.kernel import server_transport as server_client\n"
        "client = server_client._client\n"
        "gate = asyncio.Event()\n"
        "connect = client._connect\n"
        "async def held():\n"
        "    await gate.wait()\n"
        "    return await connect()\n"
        "client._connect = held\n"
        "client.thread.submit(client._ws.close()).result(5)\n"
    )
    # Meanwhile a browser runs a whole turn the kernel does not see.
    tab = await browser(kernel_id, chat_id)
    await tab.resync(chat_id)
    assert (await tab.request({"type": "chat:prompt", "chatId": chat_id, "text": "hello"}))[
        "accepted"
    ]
    await tab.event(chat_id, "turn_ended", turn=1)

    out = await kernel.run(
        "client.thread.loop.call_soon_threadsafe(gate.set)\n"
        "turn = chat.wait(1, timeout=10)\n"
        "print(json.dumps({'text': turn.text, 'mode': chat.mode}))\n"
    )
    caught_up = json.loads(out)
    assert caught_up["mode"] == "server"
    assert caught_up["text"].startswith("Hello from the **demo agent**. You said: hello")


@pytest.fixture
async def history_chat(start_kernel: Any, cells: Any) -> tuple[str, str]:
    """A kernel and its chat whose ended turn holds tool calls and messages (``history 25``)."""
    kernel_id = await start_kernel()
    kernel = await cells(kernel_id)
    out = await kernel.run(OPEN_CHAT + 'chat.wait(chat.send_prompt("history 25"), timeout=30)')
    return kernel_id, str(json.loads(out.split("chat:", 1)[1])["chat"])


async def test_snapshot_resync_folds_the_ended_turns(
    history_chat: tuple[str, str], browser: Any
) -> None:
    """What a reloaded widget asks for: the ended turns as one snapshot, the same chat."""
    kernel_id, chat_id = history_chat
    tab = await browser(kernel_id, chat_id)
    full = await tab.resync(chat_id)
    ack = await tab.request({"type": "chat:resync", "chatId": chat_id, "snapshot": True})
    assert ack["accepted"] and ack["reset"] and ack["events"] == []
    state = folding.initial_state()
    for event in full["events"]:
        state = folding.fold(state, event)
    assert ack["snapshot"] == json.loads(json.dumps(folding.snapshot(state)))
    assert ack["snapshot"]["agent"]["status"] == "ready"
    assert [i["type"] for i in ack["snapshot"]["items"]] == ["user", "tool", "agent"]


async def test_a_resync_asked_in_the_url_is_answered_as_the_socket_opens(
    history_chat: tuple[str, str], browser: Any
) -> None:
    """A reloaded widget asks in its socket's URL: the snapshot resync comes unasked."""
    kernel_id, chat_id = history_chat
    plain = await browser(kernel_id, chat_id)
    asked = await plain.request({"type": "chat:resync", "chatId": chat_id, "snapshot": True})
    tab = await browser(kernel_id, chat_id, resync="r-1")
    ack = await until(lambda: tab.named.get("r-1"), tab._changed, 15)
    assert ack["accepted"] and ack["reset"]
    assert (ack["snapshot"], ack["events"]) == (asked["snapshot"], asked["events"])
    # Nothing is answered unasked without it; an id no request may have is refused.
    assert plain.named == {} and plain.refusals == []
    long = "x" * (MAX_ID + 1)
    bad = await browser(kernel_id, chat_id, resync=long)
    refusal = await until(lambda: bad.named.get(long), bad._changed, 15)
    assert refusal["error"] == "INVALID"
    assert (await bad.request({"type": "chat:resync", "chatId": chat_id}))["accepted"]
