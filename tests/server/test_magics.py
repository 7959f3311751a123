"""``%%agent`` in a real kernel: local mode answers a card over the comm while the magic
awaits; server mode answers it over the browser socket."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager, start_new_async_kernel

from acp_notebook.kernel_auth import SECRET_ENV, URL_ENV

from .conftest import OPEN_CHAT

ANSWER = {"question_0": "blue", "confirm": True, "count": 4}


class Frontend:
    """A notebook frontend on a kernel's channels: outputs per cell, the widget comm."""

    def __init__(self, client: AsyncKernelClient) -> None:
        self.client = client
        self.messages: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        while True:
            self.messages.append(await self.client.get_iopub_msg())
            self._changed.set()

    async def until(self, find: Any, timeout: float = 30) -> Any:
        async with asyncio.timeout(timeout):
            while True:
                self._changed.clear()
                if found := find():
                    return found
                await self._changed.wait()

    def of(self, msg_id: str, kind: str) -> list[dict[str, Any]]:
        return [
            m["content"]
            for m in self.messages
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == kind
        ]

    async def finished(self, msg_id: str, timeout: float = 30) -> None:
        await self.until(
            lambda: any(c["execution_state"] == "idle" for c in self.of(msg_id, "status")), timeout
        )
        errors = self.of(msg_id, "error")
        assert not errors, "\n".join(errors[0]["traceback"])

    def events(self, msg_id: str) -> list[dict[str, Any]]:
        """The chat events the kernel sent to the widget over its comm."""
        return [
            event
            for c in self.of(msg_id, "comm_msg")
            if c["data"].get("method") == "custom" and "events" in c["data"]["content"]
            for event in c["data"]["content"]["events"]
        ]

    def widget_comm(self, msg_id: str) -> str:
        for c in self.of(msg_id, "comm_msg"):
            if c["data"].get("method") == "custom":
                return str(c["comm_id"])
        raise AssertionError("no widget comm")

    def send_to_widget(self, comm_id: str, content: dict[str, Any]) -> None:
        """What the widget's model.send() puts on the shell channel."""
        data = {"comm_id": comm_id, "data": {"method": "custom", "content": content}}
        self.client.shell_channel.send(self.client.session.msg("comm_msg", data))

    async def stop(self) -> None:
        self._reader.cancel()
        self.client.stop_channels()


@pytest.fixture
async def local_kernel() -> AsyncIterator[Frontend]:
    """A kernel no Jupyter server started (local mode), as nbval or VS Code runs one."""
    env = {k: v for k, v in os.environ.items() if k not in (URL_ENV, SECRET_ENV)}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    env["ACP_DEMO_DELAY"] = "0"
    manager: AsyncKernelManager
    manager, client = await start_new_async_kernel(kernel_name="python3", env=env)
    frontend = Frontend(client)
    yield frontend
    await frontend.stop()
    await manager.shutdown_kernel(now=True)


async def test_a_magic_cell_answers_a_card_over_the_comm_while_it_awaits(
    local_kernel: Frontend,
) -> None:
    kernel = local_kernel
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
    (result,) = kernel.of(cell, "execute_result")
    assert result["data"]["text/plain"].startswith("<Turn 1: end_turn,")
    resolved = [e for e in kernel.events(cell) if e["kind"] == "elicitation_resolved"]
    assert resolved[0]["outcome"] == "accepted"


@pytest.mark.parametrize("awaited", [True, False])
async def test_magic_forms(local_kernel: Frontend, awaited: bool) -> None:
    kernel = local_kernel
    code = (
        "import json, pandas as pd\n"
        "import acp_notebook\n"
        f"get_ipython().autoawait = {awaited}\n"
        "frame = pd.DataFrame({'a': [1, 2]})\n"
    )
    setup = kernel.client.execute(code)
    await kernel.finished(setup)
    first = kernel.client.execute("%%agent demo\nhello")
    await kernel.finished(first)
    second = kernel.client.execute(
        "t = %agent --attach frame what is in it?\n"
        "print(json.dumps({'turn': t.number, 'text': t.text, "
        "'chats': len(acp_notebook.Chat.opened())}))"
    )
    await kernel.finished(second)
    out = json.loads("".join(c["text"] for c in kernel.of(second, "stream")))
    assert out["turn"] == 2 and out["chats"] == 1
    assert "resource notebook://variables/frame" in out["text"]
    third = kernel.client.execute("%%agent --new\nhi")
    await kernel.finished(third)
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
    assert json.loads(seen["text"].split("elicitation answered: ", 1)[1])["content"] == ANSWER
