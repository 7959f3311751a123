"""A kernel's chats live as long as the kernel: through restarts, not past shutdown or death."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from typing import Any

import pytest
from jupyter_server.serverapp import ServerApp

from acp_notebook.server.app import AcpNotebookApp
from acp_notebook.wire.contracts import CHAT_GONE, CHAT_GONE_CLOSED, CHAT_GONE_KERNEL
from acp_notebook.wire.kernel_auth import SECRET_ENV, URL_ENV
from tests.support.processes import exists, gone
from tests.support.server_peers import OPEN_CHAT


async def open_chat(cells: Any, kernel_id: str, then: str = "") -> str:
    kernel = await cells(kernel_id)
    out = await kernel.run(OPEN_CHAT + then)
    return str(json.loads(out.split("chat:", 1)[1].splitlines()[0])["chat"])


def agent_pid(extension: AcpNotebookApp, kernel_id: str, chat_id: str) -> int:
    hub = extension.hubs.get(kernel_id)
    assert hub is not None
    pid = hub.chats[chat_id].session.conn.pid
    assert pid is not None and exists(pid)
    return pid


async def question_pending(
    start_kernel: Any, cells: Any, browser: Any, extension: AcpNotebookApp
) -> tuple[str, str, Any, dict[str, Any], int]:
    """A kernel whose chat's agent asks a question: the kernel, the chat, a tab showing
    the question's card, the card, and the agent's pid."""
    kernel_id = await start_kernel()
    chat_id = await open_chat(cells, kernel_id, 'chat.send_prompt("ask-user")')
    tab = await browser(kernel_id, chat_id)
    return (
        kernel_id,
        chat_id,
        tab,
        await tab.card(chat_id),
        agent_pid(extension, kernel_id, chat_id),
    )


async def test_shutdown_mid_question_cancels_the_card_and_ends_the_agent(
    start_kernel: Any, cells: Any, browser: Any, jp_fetch: Any, extension: AcpNotebookApp
) -> None:
    kernel_id, chat_id, tab, card, pid = await question_pending(
        start_kernel, cells, browser, extension
    )

    await jp_fetch("api", "kernels", kernel_id, method="DELETE")
    resolved = await tab.event(chat_id, "elicitation_resolved", requestId=card["requestId"])
    assert resolved["outcome"] == "cancelled"
    # The page is told why: its widget says the chat ended with its kernel.
    assert await tab.wait_closed() == (CHAT_GONE, CHAT_GONE_KERNEL)
    assert await gone(pid)
    assert extension.hubs.get(kernel_id) is None


async def test_a_closed_chat_tells_its_pages_it_was_closed(
    start_kernel: Any, cells: Any, browser: Any, extension: AcpNotebookApp
) -> None:
    kernel_id, chat_id, tab, card, pid = await question_pending(
        start_kernel, cells, browser, extension
    )

    await (await cells(kernel_id)).run("chat.close()")
    resolved = await tab.event(chat_id, "elicitation_resolved", requestId=card["requestId"])
    assert resolved["outcome"] == "cancelled"
    # Closed by the user: the widget says "closed", not that a kernel or server ended.
    assert await tab.wait_closed() == (CHAT_GONE, CHAT_GONE_CLOSED)
    assert await gone(pid)


async def test_restart_keeps_the_chat(
    start_kernel: Any, cells: Any, browser: Any, jp_fetch: Any, extension: AcpNotebookApp
) -> None:
    kernel_id = await start_kernel()
    chat_id = await open_chat(cells, kernel_id, 'chat.wait(chat.send_prompt("first"), timeout=10)')
    pid = agent_pid(extension, kernel_id, chat_id)

    await jp_fetch("api", "kernels", kernel_id, "restart", method="POST", body="")
    tab = await browser(kernel_id, chat_id)
    ack = await tab.resync(chat_id)
    assert [e["prompt"] for e in ack["events"] if e["kind"] == "turn_started"] == ["first"]
    prompt = {"type": "chat:prompt", "chatId": chat_id, "text": "second"}
    assert (await tab.request(prompt))["turn"] == 2
    await tab.event(chat_id, "turn_ended", turn=2)
    assert "You said: second" in tab.text(chat_id)
    assert agent_pid(extension, kernel_id, chat_id) == pid

    # The restarted kernel opens chats of its own on the same hub.
    assert await open_chat(cells, kernel_id) in extension.hubs.get(kernel_id).chats  # type: ignore[union-attr]


@pytest.mark.acp_config(
    AcpNotebookApp={"reconcile_interval": 0.2},
    KernelRestarter={"restart_limit": 0, "time_to_dead": 0.2},
)
async def test_a_dead_kernel_is_reconciled_away(
    start_kernel: Any, cells: Any, browser: Any, jp_serverapp: ServerApp, extension: AcpNotebookApp
) -> None:
    kernel_id, chat_id, tab, card, pid = await question_pending(
        start_kernel, cells, browser, extension
    )

    # Killed, and not restarted: the kernel manager forgets it without a shutdown event.
    kernel_pid = jp_serverapp.kernel_manager.get_kernel(kernel_id).provisioner.process.pid
    os.kill(kernel_pid, signal.SIGKILL)
    resolved = await tab.event(chat_id, "elicitation_resolved", requestId=card["requestId"])
    assert resolved["outcome"] == "cancelled"
    assert kernel_id not in jp_serverapp.kernel_manager.list_kernel_ids()
    assert await gone(pid)
    assert extension.hubs.get(kernel_id) is None


async def test_stopping_the_server_ends_every_agent(
    start_kernel: Any, cells: Any, jp_serverapp: ServerApp, extension: AcpNotebookApp
) -> None:
    pids = []
    for _ in range(2):
        kernel_id = await start_kernel()
        pids.append(agent_pid(extension, kernel_id, await open_chat(cells, kernel_id)))
    assert os.environ[URL_ENV].endswith("/a%40b/") and os.environ[SECRET_ENV] == extension.secret

    await jp_serverapp.cleanup_extensions()
    assert all(await asyncio.gather(*(gone(pid) for pid in pids)))
    assert URL_ENV not in os.environ and SECRET_ENV not in os.environ
