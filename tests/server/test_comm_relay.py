"""The comm relay in server mode: a page whose WebSocket to the extension fails falls
back to the widget's comm, and its requests reach the hub through the kernel.

It is a documented fallback (Chat._on_widget_msg): the kernel relays the page's
chat requests naming the comm message. This page talks to the kernel's own ports, not
through the server, so the server never saw its message: the answer shows as
``by: "kernel"`` (a page's relayed click through the server is that page's login's:
tests/faults/test_owner_gate.py). The chat's events follow on the comm from then on,
and the kernel's own requests (chat:open, chat:subscribe, chat:close) are refused there.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.serverapp import ServerApp

from tests.support.frontend import Frontend
from tests.support.server_peers import OPEN_CHAT


def comm_acks(frontend: Frontend) -> dict[Any, dict[str, Any]]:
    """The acks the widget sent back over its comm, by request id."""
    acks: dict[Any, dict[str, Any]] = {}
    for m in frontend.messages:
        if m["msg_type"] == "comm_msg" and m["content"]["data"].get("method") == "custom":
            content = m["content"]["data"]["content"]
            if "ack" in content:
                acks[content["ack"]] = content
    return acks


def comm_events(frontend: Frontend) -> list[dict[str, Any]]:
    return [
        event
        for m in frontend.messages
        if m["msg_type"] == "comm_msg" and m["content"]["data"].get("method") == "custom"
        for event in m["content"]["data"]["content"].get("events") or []
    ]


async def test_a_page_on_the_comm_answers_through_the_kernel(
    start_kernel: Any, jp_serverapp: ServerApp, browser: Any
) -> None:
    kernel_id = await start_kernel()
    client = jp_serverapp.kernel_manager.get_kernel(kernel_id).client()
    client.start_channels()
    await client.wait_for_ready(timeout=60)
    frontend = Frontend(client)
    try:
        cell = client.execute(OPEN_CHAT + 'chat.send_prompt("ask-user")\n')
        await frontend.finished(cell)
        printed = "".join(c["text"] for c in frontend.of(cell, "stream"))
        chat_id = json.loads(printed.split("chat:", 1)[1])["chat"]
        (comm_id,) = {
            c["comm_id"]
            for c in frontend.of(cell, "comm_open")
            if "chat_id" in c["data"]["state"]  # the Chat's (its chat_id is set after)
        }
        watcher = await browser(kernel_id, chat_id)  # sees what the relay does
        card = await watcher.card(chat_id)

        def ask(content: dict[str, Any]) -> Any:
            frontend.send_to_widget(comm_id, content)
            return frontend.until(lambda: comm_acks(frontend).get(content["id"]))

        opened = await ask({"type": "chat:open", "id": "p-1", "agent": "demo"})
        assert opened["error"] == "FORBIDDEN", opened
        resync = await ask({"type": "chat:resync", "id": "p-2"})
        assert resync["accepted"] and any(
            e["kind"] == "elicitation_request" for e in resync["events"]
        )
        answer = {"type": "chat:elicitation.respond", "id": "p-3", "action": "decline"}
        assert (await ask(answer | {"requestId": card["requestId"]}))["accepted"]
        resolved = await watcher.event(chat_id, "elicitation_resolved")
        assert resolved["by"] == "kernel" and resolved["outcome"] == "declined"
        # From the first comm request on, the chat's events go to the comm too.
        await frontend.until(lambda: any(e["kind"] == "turn_ended" for e in comm_events(frontend)))
    finally:
        await frontend.stop()
