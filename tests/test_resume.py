"""Conversations that outlive the agent process: session/load, session/resume,
session/list, and what a saved notebook keeps, against real agent subprocesses."""

from __future__ import annotations

import sys
from html import escape as html_escape
from pathlib import Path

import pytest

from acp_notebook import SessionInfo, sessions
from acp_notebook.agent.session_list import SessionsUnavailable
from acp_notebook.bridge.hub import Forbidden, Hub
from acp_notebook.kernel.chat import Chat
from acp_notebook.kernel.transcript import MAX_TEXT, STATIC_TEXT
from acp_notebook.wire.contracts import SAVED_MIME, saved_chat_data
from tests.support.agents import FAULT_AGENT, RESUME_ONLY_AGENT
from tests.support.hub_chats import Recorder, open_demo
from tests.support.past_sessions import past_session

DEMO = {"ACP_DEMO_DELAY": "0"}


def user_texts(rec: Recorder) -> list[str]:
    return [
        e["update"]["content"]["text"]
        for e in rec.of("update")
        if e["update"]["sessionUpdate"] == "user_message_chunk"
    ]


async def test_load_replays_the_conversation_into_the_new_chat(hub: Hub, tmp_path: Path) -> None:
    chat_id, rec = await open_demo(hub, cwd=str(tmp_path))
    ready = await rec.kind("agent_status", status="ready")
    session_id = ready["sessionId"]
    assert ready["agentCapabilities"]["loadSession"] is True
    hub.chats[chat_id].session.prompt("hello there")
    await rec.kind("turn_ended")
    said = rec.text()
    await hub.close_chat(chat_id)  # the agent process ends

    again = await hub.open_chat("demo", env=DEMO, cwd=str(tmp_path), load_session_id=session_id)
    rec2 = Recorder(hub.subscribe(again))
    await hub.chats[again].start_task
    assert hub.chats[again].session.status == "ready"
    ready2 = await rec2.kind("agent_status", status="ready")
    assert ready2["sessionId"] == session_id
    # The replay came before "ready": it is the new chat's history.
    assert user_texts(rec2) == ["hello there"]
    assert rec2.text() == said
    assert rec2.events.index(ready2) > max(
        i for i, e in enumerate(rec2.events) if e["kind"] == "update"
    )
    # And the chat goes on in the same session.
    hub.chats[again].session.prompt("think")
    ended = await rec2.kind("turn_ended")
    assert ended["stopReason"] == "end_turn"


async def test_a_session_has_one_live_chat(hub: Hub, tmp_path: Path) -> None:
    chat_id, rec = await open_demo(hub, cwd=str(tmp_path))
    session_id = (await rec.kind("agent_status", status="ready"))["sessionId"]
    hub.chats[chat_id].session.prompt("hello there")
    await rec.kind("turn_ended")
    load = {"env": DEMO, "cwd": str(tmp_path), "load_session_id": session_id}
    # Continuing the session of a live chat is that chat: no second agent process on it.
    assert await hub.open_chat("demo", **load) == chat_id
    assert len(hub.chats) == 1
    # Only its owner's to continue, when it has one.
    owned = await hub.open_chat("demo", env=DEMO, cwd=str(tmp_path), owner="alice")
    await hub.chats[owned].start_task
    theirs = hub.chats[owned].session.session_id
    assert theirs is not None
    with pytest.raises(Forbidden, match=r"open in another user's chat|started by another user"):
        await hub.open_chat("demo", **{**load, "load_session_id": theirs}, owner="bob")
    await hub.close_chat(owned)

    await hub.close_chat(chat_id)
    # Ended, it is continued by a new chat; and one still loading it is that chat too.
    loading = await hub.open_chat("demo", **load)
    assert loading != chat_id
    assert await hub.open_chat("demo", **load) == loading
    await hub.chats[loading].start_task
    assert hub.chats[loading].session.status == "ready"


async def test_chat_resume_of_a_live_session_is_that_chat(tmp_path: Path) -> None:
    chat = Chat("demo", env=DEMO, cwd=str(tmp_path), transport="local")
    try:
        await chat.ask("hello there", timeout=30)
        session_id = chat.state["agent"]["sessionId"]
        again = Chat.resume(session_id, "demo", cwd=str(tmp_path), env=DEMO, transport="local")
        assert again is chat
    finally:
        chat.close()
    # Closed, it is continued by a new chat.
    again = Chat.resume(session_id, "demo", cwd=str(tmp_path), env=DEMO, transport="local")
    try:
        assert again is not chat and await again.ready() == "ready"
        assert again.state["items"][0] == {"type": "user", "text": "hello there"}
    finally:
        again.close()


async def test_resume_when_the_agent_cannot_load(hub: Hub, tmp_path: Path) -> None:
    chat_id, rec = await open_demo(hub, cwd=str(tmp_path))
    session_id = (await rec.kind("agent_status", status="ready"))["sessionId"]
    hub.chats[chat_id].session.prompt("hello there")
    await rec.kind("turn_ended")
    await hub.close_chat(chat_id)

    command = [sys.executable, str(RESUME_ONLY_AGENT)]
    again = await hub.open_chat(
        command=command, env=DEMO, cwd=str(tmp_path), load_session_id=session_id
    )
    rec2 = Recorder(hub.subscribe(again))
    await hub.chats[again].start_task
    assert hub.chats[again].session.status == "ready"
    ready = await rec2.kind("agent_status", status="ready")
    assert ready["sessionId"] == session_id
    assert rec2.of("update") == []  # session/resume replays nothing
    hub.chats[again].session.prompt("plan")
    assert (await rec2.kind("turn_ended"))["stopReason"] == "end_turn"


async def test_an_agent_that_cannot_continue_says_so(hub: Hub, tmp_path: Path) -> None:
    # The fault agent advertises no capabilities at all.
    command = [sys.executable, str(FAULT_AGENT), "none", "initialize"]
    chat_id = await hub.open_chat(
        command=[*command, str(tmp_path / "log")], cwd=str(tmp_path), load_session_id="s-1"
    )
    rec = Recorder(hub.subscribe(chat_id))
    await hub.chats[chat_id].start_task
    assert hub.chats[chat_id].session.status == "exited"
    exited = await rec.kind("agent_status", status="exited")
    assert "cannot continue an earlier session" in exited["detail"]
    assert "loadSession" in exited["detail"]


async def test_loading_an_unknown_session_is_refused_with_the_reason(
    hub: Hub, tmp_path: Path
) -> None:
    chat_id = await hub.open_chat(
        "demo", env=DEMO, cwd=str(tmp_path), load_session_id="demo-" + "f" * 32
    )
    rec = Recorder(hub.subscribe(chat_id))
    await hub.chats[chat_id].start_task
    assert hub.chats[chat_id].session.status == "exited"
    exited = await rec.kind("agent_status", status="exited")
    assert "no stored session" in exited["detail"]


async def test_sessions_lists_what_chat_resume_continues(tmp_path: Path) -> None:
    session_id = await past_session(tmp_path)
    listed = sessions("demo", str(tmp_path))
    assert [s.session_id for s in listed] == [session_id]
    [info] = listed
    assert isinstance(info, SessionInfo)
    assert (info.title, info.cwd) == ("hello there", str(tmp_path))
    assert info.updated_at is not None and info.updated_at.tzinfo is not None
    assert sessions("demo", str(tmp_path / "elsewhere")) == []

    again = Chat.resume(session_id, "demo", cwd=str(tmp_path), env=DEMO, transport="local")
    try:
        assert await again.ready() == "ready"
        items = again.state["items"]
        assert items[0] == {"type": "user", "text": "hello there"}
        assert items[-1]["type"] == "agent" and "hello there" in items[-1]["text"]
        turn = await again.ask("think", timeout=30)
        assert turn.ok and "42" in turn.text
        assert again.state["agent"]["sessionId"] == session_id
    finally:
        again.close()


async def test_the_saved_output_of_a_long_answer_is_bounded(tmp_path: Path) -> None:
    chat = Chat("demo", env=DEMO, cwd=str(tmp_path), transport="local")
    try:
        usual = (await chat.ask("stream 20000", timeout=60)).text
        assert STATIC_TEXT > len(usual) > 5 * MAX_TEXT
        # An answer of usual length is whole in the static transcript (for reading)...
        assert html_escape(usual) in chat._repr_mimebundle_()[0]["text/html"]
        answer = (await chat.ask("stream 40000", timeout=60)).text
        assert len(answer) > STATIC_TEXT
        data = chat._repr_mimebundle_()[0]
        # ...a very long one keeps its end there, marked as cut.
        html = data["text/html"]
        kept = answer[-STATIC_TEXT + 1 :]
        assert len(html) < len(usual) + STATIC_TEXT + 4000
        assert html_escape("…" + kept[:200]) in html and html_escape(kept[-1000:]) in html
        # The saved snapshot keeps less: widget state stays small.
        *_, item = [i for i in data[SAVED_MIME]["snapshot"]["items"] if i["type"] == "agent"]
        assert item["text"] == "…" + answer[-MAX_TEXT + 1 :]
    finally:
        chat.close()


def test_sessions_of_an_agent_that_does_not_list(tmp_path: Path) -> None:
    command = [sys.executable, str(FAULT_AGENT), "none", "initialize"]
    with pytest.raises(SessionsUnavailable, match="does not list its sessions"):
        sessions(command=[*command, str(tmp_path / "log")], cwd=str(tmp_path))


async def test_the_saved_output_carries_what_continuing_takes(tmp_path: Path) -> None:
    chat = Chat(
        "demo", env={**DEMO, "SECRET_TOKEN": "s3cret"}, cwd=str(tmp_path), transport="local"
    )
    try:
        assert (await chat.ask("hello there", timeout=30)).ok
        data = chat._repr_mimebundle_()[0]
        saved = data[SAVED_MIME]
        saved_chat_data.validate_python(saved, strict=True)  # its contract
        assert saved["version"] == 1
        assert (saved["chatId"], saved["agent"], saved["cwd"]) == (
            chat.chat_id,
            "demo",
            str(tmp_path),
        )
        assert saved["sessionId"] == chat.state["agent"]["sessionId"]
        assert saved["canLoad"] is True
        assert saved["snapshot"]["items"][0] == {"type": "user", "text": "hello there"}
        assert "s3cret" not in repr(data)  # the chat's environment never goes into the notebook
        assert "application/vnd.jupyter.widget-view+json" in data and "text/html" in data
    finally:
        chat.close()
    command = Chat(
        command=[sys.executable, "-m", "acp_notebook.demo.agent"], env=DEMO, transport="local"
    )
    try:
        assert (await command.ask("hi", timeout=30)).ok
        # A command line is never started again from a notebook: no Continue.
        assert command._repr_mimebundle_()[0][SAVED_MIME]["canLoad"] is False
    finally:
        command.close()
