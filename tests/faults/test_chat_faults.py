"""Agent faults as the Python API sees them (local mode, the hub on its own thread)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.bridge.chat_session import SessionConfig
from acp_notebook.bridge.hub import HubConfig
from acp_notebook.kernel import local_transport as client_module
from acp_notebook.kernel.chat import Chat
from acp_notebook.kernel.local_transport import LocalClient
from acp_notebook.wire import fold as folding
from tests.support.chat_waits import refuses_prompts
from tests.support.fault_chats import fault_argv, received
from tests.support.processes import all_gone


@pytest.fixture
def local(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalClient]:
    """A local hub of this test's own, with short timeouts for hung agents."""
    session = SessionConfig(answer_timeout=30, start_timeout=2, cancel_grace=1)
    hub_client = LocalClient(HubConfig(session=session))
    monkeypatch.setattr(client_module, "_local", hub_client)
    yield hub_client
    hub_client.shutdown()


OpenChat = Callable[[str, str], Awaitable[tuple[Chat, int, Path]]]


@pytest.fixture
async def open_chat(local: LocalClient, tmp_path: Path) -> AsyncIterator[OpenChat]:
    """Opens a chat with the fault agent (its fault, at its point) on the local hub: the
    chat, its agent's pid, its log. Each is closed at the end, and its processes gone."""
    opened: list[tuple[Chat, int]] = []

    async def open_one(fault: str, point: str) -> tuple[Chat, int, Path]:
        log = tmp_path / f"agent-{len(opened)}.jsonl"
        chat = Chat(command=fault_argv(fault, point, log), transport="local")
        conn = client_module.local_client().hub.chats[chat.chat_id].session.conn
        async with asyncio.timeout(20):
            while conn.pid is None:  # spawned on the hub's thread
                await asyncio.sleep(0.01)
        opened.append((chat, conn.pid))
        return chat, conn.pid, log

    yield open_one
    for chat, pid in opened:
        await asyncio.to_thread(chat.close)
        await all_gone([pid], pid)


async def wait_pending(chat: Chat) -> dict[str, Any]:
    async with asyncio.timeout(20):
        while not chat.pending:
            await asyncio.sleep(0.02)
    return chat.pending[0]


@pytest.mark.fault("{fault} with a {point} pending, seen from Python")
@pytest.mark.parametrize("point", ["question", "permission"])
@pytest.mark.parametrize("fault", ["crash", "orphan"])
async def test_agent_dies_with_a_card_pending(open_chat: OpenChat, fault: str, point: str) -> None:
    chat, pid, log = await open_chat(fault, point)
    turn = await chat.ask("go", timeout=30)
    assert turn.error and not turn.ok
    assert chat.status == "exited" and not chat.pending
    state = chat.state
    cards = {**state["permissions"], **state["elicitations"]}
    assert [c["outcome"] for c in cards.values()] == ["cancelled"]  # never approved
    assert state["agent"]["detail"]
    await refuses_prompts(chat)
    assert not [m for m in received(log) if "method" not in m]
    await all_gone([pid], pid)


@pytest.mark.fault("hang with a question pending, Stop from Python")
async def test_stop_a_hung_agent_from_python(open_chat: OpenChat) -> None:
    chat, _pid, log = await open_chat("hang", "question")
    task = asyncio.create_task(chat.ask("go", timeout=30))
    request = await wait_pending(chat)
    await asyncio.to_thread(chat.cancel)
    turn = await task
    assert turn.stop_reason == "cancelled" and "did not end the turn" in (turn.error or "")
    assert not chat.pending
    assert chat.state["elicitations"][request["requestId"]]["outcome"] == "cancelled"
    answers = [m["result"] for m in received(log) if "method" not in m]
    assert answers == [{"action": "cancel"}]


@pytest.mark.fault("hang before initialize answers, seen from Python")
async def test_agent_that_never_starts(open_chat: OpenChat) -> None:
    chat, pid, _log = await open_chat("hang", "initialize")
    assert await asyncio.wait_for(chat.ready(), 20) == "exited"
    assert "did not start within 2 s" in chat.state["agent"]["detail"]
    await refuses_prompts(chat)
    await all_gone([pid], pid)


@pytest.mark.fault("a prompt and an attachment holding a lone surrogate, from Python (local mode)")
async def test_a_lone_surrogate_from_python(open_chat: OpenChat) -> None:
    # os.fsdecode of a file name in Latin-1 gives one; server mode read it as U+FFFD,
    # local mode refused the prompt as INVALID ("unable to parse raw data as a unicode string").
    chat, _pid, log = await open_chat("none", "stream")
    turn = await chat.ask("caf\udce9", timeout=20, attach=["name: caf\udce9"])
    assert turn.text == "echo: name: caf\ufffd caf\ufffd"  # attachments go first
    (prompt,) = [
        m["params"]["prompt"] for m in received(log) if m.get("method") == "session/prompt"
    ]
    assert [b["text"] for b in prompt if b["type"] == "text"] == [
        "name: caf\ufffd",
        "caf\ufffd",
    ]


@pytest.mark.fault("12,000 tool calls in one turn, a question pending: the kernel's fold")
async def test_many_tool_calls_are_bounded_in_the_kernel(
    open_chat: OpenChat, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kernel folded every event of a chat's life: 100,000 tool calls cost it 110 MB,
    # and each turn end took three full snapshots of it (0.6 s each).
    snapshots = 0
    real = folding.snapshot

    def counted(state: folding.ChatState) -> dict[str, Any]:
        nonlocal snapshots
        snapshots += 1
        return real(state)

    chat, _pid, _log = await open_chat("none", "stream")
    turn_task = asyncio.create_task(chat.ask("tools 12000", timeout=60))
    question = await wait_pending(chat)
    async with asyncio.timeout(30):  # every tool call folded, the question still open
        while len(chat.state["items"]) < folding.MAX_ITEMS * 9 // 10:
            await asyncio.sleep(0.05)
        while chat._state.seq < 24_000:
            await asyncio.sleep(0.05)
    monkeypatch.setattr(folding, "snapshot", counted)
    assert [p["requestId"] for p in chat.pending] == [question["requestId"]]
    await asyncio.to_thread(chat.answer, question["requestId"], {"color": "red"})
    turn = await turn_task
    monkeypatch.setattr(folding, "snapshot", real)
    assert snapshots == 1  # one for the widget state and the saved transcript
    assert turn.ok and turn.text.startswith("question answered")
    assert [t["toolCallId"] for t in turn.tool_calls][-1] == "tool-11999"
    state = chat.state
    assert len(state["items"]) <= folding.MAX_ITEMS
    # What went is said; the newest calls and the answered question stay.
    assert state["dropped"]["items"] == 12_003 - len(state["items"])
    assert state["items"][0] == {"type": "elicitation", "requestId": question["requestId"]}
    assert state["elicitations"][question["requestId"]]["outcome"] == "accepted"
    assert state["toolCalls"]["tool-11999"]["status"] == "completed"
    assert "tool-0" not in state["toolCalls"]
    assert "earlier items" in chat._repr_mimebundle_()[0]["text/html"]


@pytest.mark.fault("a widget message over the comm whose type is a list, not a string")
async def test_a_comm_request_of_another_type_is_refused(
    open_chat: OpenChat, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `type in TRUSTED_TYPES` (a frozenset) raised TypeError on a list: the comm handler
    # failed and the page's request got no answer.
    chat, _pid, _log = await open_chat("none", "stream")
    sent: list[Any] = []
    monkeypatch.setattr(chat, "send", sent.append)
    for kind in ([], {"a": 1}, "chat:open"):
        sent.clear()
        chat._on_widget_msg(chat, {"type": kind, "id": 7}, [])
        async with asyncio.timeout(10):
            while not sent:
                await asyncio.sleep(0.01)
        assert sent[0]["ack"] == 7, sent
        assert sent[0]["error"] == ("FORBIDDEN" if kind == "chat:open" else "INVALID"), sent
    assert (await chat.ask("still here", timeout=20)).text == "echo: still here"


@pytest.mark.fault("a policy answers 40 permissions, one a turn: what the kernel keeps of them")
async def test_policy_answers_are_not_kept_after_they_settle(
    open_chat: OpenChat,
) -> None:
    # Every id a policy had answered was kept for the chat's life.
    chat, _pid, _log = await open_chat("none", "stream")
    chat.on_permission(lambda request: "allow")
    for _ in range(40):
        turn = await chat.ask("permission", timeout=20)
        assert turn.text.startswith("permission answered"), turn.text
    assert not chat._policy_done and not chat.pending
