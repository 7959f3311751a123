"""Closing, deleting, forking and paging an agent's sessions, each where the agent
advertises it (``sessionCapabilities``), against real agent subprocesses."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from acp_notebook import SessionsUnavailable, delete_session, sessions
from acp_notebook.bridge.hub import Hub
from acp_notebook.demo import store as demo_store
from acp_notebook.kernel.chat import Chat, ChatError
from acp_notebook.kernel.transcript import render_html
from acp_notebook.wire.contracts import Ack
from tests.support.agents import FAULT_AGENT
from tests.support.fault_chats import received
from tests.support.hub_chats import Recorder, open_demo
from tests.support.past_sessions import past_session

DEMO = {"ACP_DEMO_DELAY": "0"}


async def _fault_chat(hub: Hub, tmp_path: Path, caps: object) -> tuple[str, Path]:
    log = tmp_path / "log"
    command = [sys.executable, str(FAULT_AGENT), "none", "initialize", str(log)]
    chat_id = await hub.open_chat(
        command=command, env={"FAULT_CAPS": json.dumps(caps)}, cwd=str(tmp_path)
    )
    rec = Recorder(hub.subscribe(chat_id))
    await rec.kind("agent_status", status="ready")
    return chat_id, log


async def test_closing_a_chat_closes_its_session_without_waiting_long(
    hub: Hub, tmp_path: Path
) -> None:
    # The fault agent never answers session/close: the close waits about 2 s, no more.
    chat_id, log = await _fault_chat(hub, tmp_path, {"sessionCapabilities": {"close": {}}})
    started = time.monotonic()
    await hub.close_chat(chat_id)
    assert time.monotonic() - started < 6
    closes = [m for m in received(log) if m.get("method") == "session/close"]
    assert [m["params"] for m in closes] == [{"sessionId": "fault-session"}]


async def test_no_session_close_where_the_agent_does_not_advertise_it(
    hub: Hub, tmp_path: Path
) -> None:
    chat_id, log = await _fault_chat(hub, tmp_path, {})
    await hub.close_chat(chat_id)
    assert "session/close" not in {m.get("method") for m in received(log)}


async def test_fork_through_the_hub_and_where_not_advertised(hub: Hub, tmp_path: Path) -> None:
    chat_id, rec = await open_demo(hub, owner="alice", cwd=str(tmp_path))
    ready = await rec.kind("agent_status", status="ready")
    assert ready["agentCapabilities"]["sessionCapabilities"]["fork"] == {}
    hub.chats[chat_id].session.prompt("hello there")
    await rec.kind("turn_ended")
    assert hub.chats[chat_id].session.title == "hello there"  # the chat lists show it
    fork = {"type": "chat:fork", "id": 1, "chatId": chat_id}
    assert (await hub.handle(fork, user="bob"))["error"] == "FORBIDDEN"
    ack = await hub.handle(fork, user="alice")
    assert ack["accepted"] is True and ack["sessionId"] != ready["sessionId"]
    Ack.model_validate(ack, strict=True)  # the contract names it
    # The fork is its chat owner's: she may continue it, as her own sessions.
    assert hub.config.sessions.owner("demo", str(tmp_path), ack["sessionId"]) == "alice"
    listed = {s.session_id: s.title for s in sessions("demo", str(tmp_path))}
    assert listed == {ready["sessionId"]: "hello there", ack["sessionId"]: "hello there"}

    other, _ = await _fault_chat(hub, tmp_path, {})
    refused = await hub.handle({"type": "chat:fork", "id": 2, "chatId": other}, trusted=True)
    assert refused["error"] == "INVALID"
    assert "does not advertise sessionCapabilities.fork" in refused["detail"]


async def test_chat_fork_continues_the_conversation_apart(tmp_path: Path) -> None:
    chat = Chat("demo", env=DEMO, cwd=str(tmp_path), transport="local")
    try:
        assert (await chat.ask("hello there", timeout=30)).ok
        assert chat.title == "hello there"  # from the agent's session_info_update
        assert "<b><bdi>demo</bdi></b> · <i><bdi>hello there</bdi></i>" in render_html(
            chat.snapshot
        )
        forked = chat.fork()
        try:
            assert await forked.ready() == "ready"
            source, fork = chat.state["agent"]["sessionId"], forked.state["agent"]["sessionId"]
            assert fork != source
            # The fork loaded the conversation so far, and goes on alone.
            assert forked.state["items"][0] == {"type": "user", "text": "hello there"}
            assert forked.title == "hello there"  # replayed with the conversation
            assert (await forked.ask("think", timeout=30)).ok
            assert (await chat.ask("plan", timeout=30)).ok
            users = [i["text"] for i in chat.state["items"] if i["type"] == "user"]
            assert users == ["hello there", "plan"]
            listed = {s.session_id for s in sessions("demo", str(tmp_path))}
            assert listed == {source, fork}
        finally:
            forked.close()
    finally:
        chat.close()


async def test_chat_fork_where_the_agent_cannot(tmp_path: Path) -> None:
    command = [sys.executable, str(FAULT_AGENT), "none", "initialize", str(tmp_path / "log")]
    chat = Chat(command=command, cwd=str(tmp_path), transport="local")
    try:
        assert await chat.ready() == "ready"
        with pytest.raises(ChatError, match=r"does not advertise sessionCapabilities\.fork"):
            chat.fork()
    finally:
        chat.close()


async def test_delete_session_removes_it_from_the_list(tmp_path: Path) -> None:
    session_id = await past_session(tmp_path)
    assert [s.session_id for s in sessions("demo", str(tmp_path))] == [session_id]
    delete_session("demo", session_id, str(tmp_path), env=DEMO)
    assert sessions("demo", str(tmp_path)) == []
    with pytest.raises(SessionsUnavailable, match="the agent refused: no stored session"):
        delete_session("demo", session_id, str(tmp_path), env=DEMO)
    with pytest.raises(ValueError, match="not a session id"):
        delete_session("demo", "../etc/passwd", str(tmp_path))
    command = [sys.executable, str(FAULT_AGENT), "none", "initialize", str(tmp_path / "log")]
    with pytest.raises(SessionsUnavailable, match="does not delete its sessions"):
        delete_session("fault", "fault-session", str(tmp_path), command=command)


def test_sessions_pages_with_a_cursor(tmp_path: Path) -> None:
    titles = {f"talk {n}" for n in range(5)}
    for n in range(5):
        demo_store.save(demo_store.Record(f"demo-{n:032x}", str(tmp_path), title=f"talk {n}"))
    env = {"ACP_DEMO_LIST_PAGE": "2"}
    first = sessions("demo", str(tmp_path), limit=2, env=env)
    assert len(first) == 2 and first.next_cursor is not None
    second = sessions("demo", str(tmp_path), limit=3, cursor=first.next_cursor, env=env)
    # Whole pages: a limit of 3 reads two pages of 2, which is all that is left.
    assert len(second) == 3 and second.next_cursor is None
    assert {s.title for s in [*first, *second]} == titles
    everything = sessions("demo", str(tmp_path), env=env)
    assert {s.title for s in everything} == titles and everything.next_cursor is None
    assert everything.offers == {"list", "load", "resume", "close", "delete", "fork"}
