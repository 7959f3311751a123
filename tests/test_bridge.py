"""Round trips through the hub and a real demo-agent subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import pytest

from acp_notebook.agent.catalogue import AgentSpec
from acp_notebook.agent.jsonrpc import Notification, Request
from acp_notebook.bridge.chat_session import ChatSession, SessionConfig
from acp_notebook.bridge.hub import Hub, HubConfig
from acp_notebook.wire.contracts import MAX_QUEUE
from tests.support.agents import DEMO_FAULTS
from tests.support.demo_answers import demo_answer
from tests.support.hub_chats import Recorder, open_demo


def spy_answers(hub: Hub, chat_id: str) -> list[dict[str, Any]]:
    """Every response our side writes to the agent's stdin, decoded."""
    conn = hub.chats[chat_id].session.conn
    sent: list[dict[str, Any]] = []
    write = conn._write

    def recording(data: bytes) -> None:
        msg = json.loads(data)
        if "method" not in msg:
            sent.append(msg)
        write(data)

    conn._write = recording  # type: ignore[method-assign]
    return sent


async def prompt(hub: Hub, chat_id: str, text: str, user: str | None = None) -> dict[str, Any]:
    ack = await hub.handle(
        {"type": "chat:prompt", "chatId": chat_id, "text": text, "id": 1}, user=user
    )
    assert ack.get("accepted"), ack
    return ack


async def permission_respond(
    hub: Hub, chat_id: str, request_id: str, **answer: Any
) -> dict[str, Any]:
    """``chat:permission.respond`` (``optionId=`` or ``cancel=``); the ack."""
    respond = {"type": "chat:permission.respond", "chatId": chat_id, "requestId": request_id}
    return await hub.handle({**respond, **answer})


async def respond(
    hub: Hub,
    chat_id: str,
    request_id: str,
    action: str,
    values: Any = None,
    user: str | None = None,
) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "type": "chat:elicitation.respond",
        "chatId": chat_id,
        "requestId": request_id,
        "action": action,
        "id": 9,
    }
    if values is not None:
        msg["values"] = values
    return await hub.handle(msg, user=user)


async def test_ask_user_accept_round_trip(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    answers = spy_answers(hub, chat_id)
    await prompt(hub, chat_id, "ask-user")
    req = await rec.kind("elicitation_request")
    assert [f["name"] for f in req["fields"]] == ["question_0", "note", "confirm", "count"]
    assert req["fields"][0]["required"] is True and req["deadline"] > req["ts"]
    ack = await respond(
        hub,
        chat_id,
        req["requestId"],
        "accept",
        {"question_0": "blue", "confirm": True, "count": 4},
    )
    assert ack == {"ack": 9, "accepted": True}
    resolved = await rec.kind("elicitation_resolved")
    assert resolved["outcome"] == "accepted"
    ended = await rec.kind("turn_ended")
    assert ended["stopReason"] == "end_turn"
    assert demo_answer(rec.text()) == {
        "action": "accept",
        "content": {"question_0": "blue", "confirm": True, "count": 4},
    }
    # A second answer to a settled id: NOT_FOUND, and the agent got exactly one answer.
    again = await respond(hub, chat_id, req["requestId"], "decline")
    assert again["error"] == "ELICITATION_NOT_FOUND"
    assert len([a for a in answers if "result" in a and "action" in a["result"]]) == 1


@pytest.mark.parametrize(("action", "outcome"), [("decline", "declined"), ("cancel", "cancelled")])
async def test_ask_user_decline_and_cancel(hub: Hub, action: str, outcome: str) -> None:
    chat_id, rec = await open_demo(hub)
    await prompt(hub, chat_id, "ask-user")
    req = await rec.kind("elicitation_request")
    assert (await respond(hub, chat_id, req["requestId"], action))["accepted"]
    assert (await rec.kind("elicitation_resolved"))["outcome"] == outcome
    await rec.kind("turn_ended")
    assert demo_answer(rec.text()) == {"action": action}


async def test_invalid_answer_keeps_the_card_pending(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    await prompt(hub, chat_id, "ask-user")
    req = await rec.kind("elicitation_request")
    for values in (
        {"question_0": "purple"},
        {"nope": "x", "question_0": "red"},
        {"count": 2},
        {"question_0": "red", "count": "three"},
    ):
        ack = await respond(hub, chat_id, req["requestId"], "accept", values)
        assert ack["error"] == "INVALID" and ack["detail"], values
    assert not rec.of("elicitation_resolved")
    assert [
        e["requestId"]
        for e in hub.chats[chat_id].session.resync()
        if e["kind"] == "elicitation_request"
    ] == [req["requestId"]]
    assert (await respond(hub, chat_id, req["requestId"], "accept", {"question_0": "red"}))[
        "accepted"
    ]
    await rec.kind("turn_ended")


async def test_answer_timeout_cancels_to_the_agent() -> None:
    hub = Hub(HubConfig(session=SessionConfig(answer_timeout=0.3)))
    try:
        chat_id, rec = await open_demo(hub)
        answers = spy_answers(hub, chat_id)
        await prompt(hub, chat_id, "ask-user")
        await rec.kind("elicitation_request")
        resolved = await rec.kind("elicitation_resolved", timeout=5)
        assert resolved["outcome"] == "timeout"
        await rec.kind("turn_ended")
        assert demo_answer(rec.text()) == {"action": "cancel"}
        await prompt(hub, chat_id, "permission")
        await rec.kind("permission_request")
        assert (await rec.kind("permission_resolved", timeout=5))["outcome"] == "timeout"
        await rec.kind("turn_ended", turn=2)
        assert "permission: cancelled" in rec.text()
        assert len(answers) == 2  # one answer each, never a second
        await asyncio.sleep(0.1)
        assert not hub.chats[chat_id].session.pending
    finally:
        await hub.close()


async def test_one_deadline_per_pending_request() -> None:
    # The session owns the only timer of a request: armed on arrival, gone once settled.
    hub = Hub(HubConfig(session=SessionConfig(answer_timeout=0.3)))
    try:
        chat_id, rec = await open_demo(hub)
        session = hub.chats[chat_id].session
        await prompt(hub, chat_id, "ask-user")
        req = await rec.kind("elicitation_request")
        timer = session.pending[req["requestId"]].timer
        assert timer is not None and not timer.cancelled()
        assert req["deadline"] - req["ts"] == pytest.approx(300, abs=5)
        resolved = await rec.kind("elicitation_resolved", timeout=5)
        assert resolved["outcome"] == "timeout" and 250 <= resolved["ts"] - req["ts"] < 1000
        await rec.kind("turn_ended")
        await prompt(hub, chat_id, "permission")
        req = await rec.kind("permission_request")
        timer = session.pending[req["requestId"]].timer
        ack = await permission_respond(hub, chat_id, req["requestId"], cancel=True)
        assert ack["accepted"] and timer is not None and timer.cancelled()
    finally:
        await hub.close()


async def test_agent_withdraws_question(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    answers = spy_answers(hub, chat_id)
    await prompt(hub, chat_id, "ask-withdraw")
    req = await rec.kind("elicitation_request")
    resolved = await rec.kind("elicitation_resolved")
    assert resolved == {
        **resolved,
        "requestId": req["requestId"],
        "outcome": "cancelled",
        "by": "agent",
    }
    await rec.kind("turn_ended")
    assert "question withdrawn" in rec.text()
    assert [a["error"]["code"] for a in answers] == [-32800]
    ack = await respond(hub, chat_id, req["requestId"], "accept", {})
    assert ack["error"] == "ELICITATION_NOT_FOUND"


async def test_cancel_turn_while_question_pending(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    await prompt(hub, chat_id, "ask-user")
    await rec.kind("elicitation_request")
    assert (await hub.handle({"type": "chat:cancel", "chatId": chat_id}))["accepted"]
    assert (await rec.kind("elicitation_resolved"))["outcome"] == "cancelled"
    assert (await rec.kind("turn_ended"))["stopReason"] == "cancelled"
    assert len(rec.of("elicitation_resolved")) == 1


async def test_agent_crash_settles_everything(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub, command=DEMO_FAULTS)
    await prompt(hub, chat_id, "crash")
    exited = await rec.kind("agent_status", status="exited")
    assert exited["exitCode"] == 3 and "crashing on purpose" in exited["stderrTail"]
    ended = await rec.kind("turn_ended")
    assert ended["error"]
    ack = await hub.handle({"type": "chat:prompt", "chatId": chat_id, "text": "hello"})
    assert ack["error"] == "AGENT_EXITED"


async def test_agent_crash_with_question_pending() -> None:
    hub = Hub()
    try:
        chat_id, rec = await open_demo(hub)
        await prompt(hub, chat_id, "ask-user")
        req = await rec.kind("elicitation_request")
        os.killpg(hub.chats[chat_id].session.conn.pid or 0, 9)
        resolved = await rec.kind("elicitation_resolved")
        assert resolved["requestId"] == req["requestId"] and resolved["outcome"] == "cancelled"
        await rec.kind("agent_status", status="exited")
        await rec.kind("turn_ended")
        assert not hub.chats[chat_id].session.pending
    finally:
        await hub.close()


@pytest.mark.parametrize(
    ("option", "expect"),
    [("allow-once", "permission: allow-once"), ("reject", "permission: reject")],
)
async def test_permission_selected(hub: Hub, option: str, expect: str) -> None:
    chat_id, rec = await open_demo(hub)
    await prompt(hub, chat_id, "permission")
    req = await rec.kind("permission_request")
    assert [o["optionId"] for o in req["options"]] == ["allow-once", "allow-always", "reject"]
    bad = await permission_respond(hub, chat_id, req["requestId"], optionId="bogus")
    assert bad["error"] == "INVALID"
    ack = await permission_respond(hub, chat_id, req["requestId"], optionId=option)
    assert ack["accepted"]
    resolved = await rec.kind("permission_resolved")
    assert resolved["outcome"] == "selected" and resolved["optionId"] == option
    await rec.kind("turn_ended")
    assert expect in rec.text()


async def test_permission_cancelled(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    await prompt(hub, chat_id, "permission")
    req = await rec.kind("permission_request")
    ack = await permission_respond(hub, chat_id, req["requestId"], cancel=True)
    assert ack["accepted"]
    assert (await rec.kind("permission_resolved"))["outcome"] == "cancelled"
    await rec.kind("turn_ended")
    assert "permission: cancelled" in rec.text()
    again = await permission_respond(hub, chat_id, req["requestId"], cancel=True)
    assert again["error"] == "PERMISSION_NOT_FOUND"


async def test_resync_after_reattach_shows_pending_cards(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    await prompt(hub, chat_id, "ask-user")
    req = await rec.kind("elicitation_request")
    rec.sub.close()  # the page goes away
    again = Recorder(hub.subscribe(chat_id))
    ack = await hub.handle({"type": "chat:resync", "chatId": chat_id, "id": "r"})
    assert ack["accepted"] and ack["reset"]
    kinds = [e["kind"] for e in ack["events"]]
    assert kinds[:4] == ["access", "agent_status", "agent_status", "turn_started"]
    assert (
        next(e for e in ack["events"] if e["kind"] == "elicitation_request")["requestId"]
        == req["requestId"]
    )
    up_to_date = await hub.handle(
        {"type": "chat:resync", "chatId": chat_id, "since": hub.chats[chat_id].session.last_seq}
    )
    assert up_to_date["events"] == [] and up_to_date["reset"] is False
    # Resync cancelled nothing: the question can still be answered.
    assert (await respond(hub, chat_id, req["requestId"], "accept", {"question_0": "green"}))[
        "accepted"
    ]
    await again.kind("turn_ended")
    assert demo_answer(again.text())["content"] == {"question_0": "green"}


async def test_owner_gate(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub, owner="alice")
    assert (
        await hub.handle({"type": "chat:prompt", "chatId": chat_id, "text": "ask-user"}, user="bob")
    )["error"] == "FORBIDDEN"
    await prompt(hub, chat_id, "ask-user", user="alice")
    req = await rec.kind("elicitation_request")
    assert (
        await respond(hub, chat_id, req["requestId"], "accept", {"question_0": "red"}, user="bob")
    )["error"] == "FORBIDDEN"
    assert (await hub.handle({"type": "chat:resync", "chatId": chat_id}, user="bob"))["accepted"]
    assert (
        await respond(hub, chat_id, req["requestId"], "accept", {"question_0": "red"}, user="alice")
    )["accepted"]
    resolved = await rec.kind("elicitation_resolved")
    assert resolved["by"] == "alice"


async def test_access_is_announced_and_the_owner_shares_live(hub: Hub) -> None:
    chat_id = await hub.open_chat(
        "demo", env={"ACP_DEMO_DELAY": "0"}, owner="alice", owner_name="Alice A."
    )
    await hub.chats[chat_id].start_task
    # A page learns who it is with the chat's history, whose access says who may act.
    ack = await hub.handle({"type": "chat:resync", "chatId": chat_id}, user="bob", name="Bob")
    assert ack["viewer"] == {"id": "bob", "name": "Bob"}
    access = next(e for e in ack["events"] if e["kind"] == "access")
    assert (access["owner"], access["ownerName"], access["share"]) == ("alice", "Alice A.", None)
    # The kernel's own resync names no viewer.
    assert "viewer" not in await hub.handle({"type": "chat:resync", "chatId": chat_id})
    rec = Recorder(hub.subscribe(chat_id))

    share = {"type": "chat:share", "chatId": chat_id, "share": "anyone"}
    assert (await hub.handle(share, user="bob"))["error"] == "FORBIDDEN"
    assert (await hub.handle(share, user="alice", name="Alice A."))["accepted"]
    shared = await rec.kind("access")
    assert (shared["share"], shared["by"]) == ("anyone", "Alice A.")
    await prompt(hub, chat_id, "ask-user", user="bob")
    req = await rec.kind("elicitation_request")
    answer = {"type": "chat:elicitation.respond", "chatId": chat_id, "action": "decline"}
    assert (await hub.handle({**answer, "requestId": req["requestId"]}, user="bob", name="Bob"))[
        "accepted"
    ]
    assert (await rec.kind("elicitation_resolved"))["by"] == "Bob"
    # Only its owner unshares it (a shared chat lets anyone act, but not take it back).
    unshare = {**share, "share": None}
    assert (await hub.handle(unshare, user="alice"))["accepted"]
    assert (await rec.kind("access", share=None))["owner"] == "alice"
    assert (await hub.handle(unshare, user="bob"))["error"] == "FORBIDDEN"


async def test_busy_and_unknown_chat(hub: Hub) -> None:
    chat_id, _rec = await open_demo(hub)
    await prompt(hub, chat_id, "ask-user")
    again = {"type": "chat:prompt", "chatId": chat_id, "text": "again", "id": 5}
    for _ in range(MAX_QUEUE):  # queued behind the turn (test_queue.py)
        assert (await hub.handle(again))["queued"]
    ack = await hub.handle(again)
    assert ack == {"ack": 5, "error": "BUSY", "detail": ack["detail"]}
    assert (await hub.handle({"type": "chat:cancel", "chatId": "nope"}))[
        "error"
    ] == "CHAT_NOT_FOUND"


async def test_modes(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    ready = await rec.kind("agent_status", status="ready")
    assert ready["modes"]["currentModeId"] == "default"
    assert (await hub.handle({"type": "chat:set_mode", "chatId": chat_id, "modeId": "plan"}))[
        "accepted"
    ]
    upd = await rec.until(
        lambda e: e["kind"] == "update" and e["update"]["sessionUpdate"] == "current_mode_update"
    )
    assert upd["update"]["currentModeId"] == "plan"
    bad = await hub.handle({"type": "chat:set_mode", "chatId": chat_id, "modeId": "nope"})
    assert bad["error"] == "INVALID"


async def test_garbage_and_unknown_requests(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub, command=DEMO_FAULTS)
    await prompt(hub, chat_id, "garbage")
    assert (await rec.kind("turn_ended"))["stopReason"] == "end_turn"
    await prompt(hub, chat_id, "fs")
    await rec.kind("turn_ended", turn=2)
    assert "fs: error -32601" in rec.text()
    await prompt(hub, chat_id, "ask-url")
    await rec.kind("turn_ended", turn=3)
    assert "-32602" in rec.text()
    assert not rec.of("elicitation_request")
    # A link with credentials is refused, never shown: the chat says why.
    (note,) = [e for e in rec.of("agent_error") if "link" in e["message"]]
    assert "credentials" in note["message"]


async def test_url_login_accept_then_complete(hub: Hub) -> None:
    """A URL question: the card's url and host; accepted, the agent gets no content, then
    its elicitation/complete settles the card as completed."""
    chat_id, rec = await open_demo(hub)
    answers = spy_answers(hub, chat_id)
    await prompt(hub, chat_id, "url-login http://LocalHost:8123/login?next=%2F")
    req = await rec.kind("elicitation_request")
    assert req["url"] == "http://LocalHost:8123/login?next=%2F"
    assert req["host"] == "localhost:8123" and req["fields"] == []
    assert (await respond(hub, chat_id, req["requestId"], "accept"))["accepted"]
    assert (await rec.kind("elicitation_resolved"))["outcome"] == "accepted"
    done = await rec.kind("elicitation_resolved", outcome="completed")
    assert done["requestId"] == req["requestId"] and done["by"] == "agent"
    await rec.kind("turn_ended")
    assert demo_answer(rec.text()) == {"action": "accept"}
    assert [a["result"] for a in answers if "action" in a.get("result", {})] == [
        {"action": "accept"}
    ]


async def test_url_login_declined_is_not_completed(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    await prompt(hub, chat_id, "url-login")
    req = await rec.kind("elicitation_request")
    assert req["host"] == "127.0.0.1:9"
    # A values object is refused: a URL question has no fields.
    ack = await respond(hub, chat_id, req["requestId"], "accept", {"x": "y"})
    assert ack["error"] == "INVALID"
    assert (await respond(hub, chat_id, req["requestId"], "decline"))["accepted"]
    await rec.kind("turn_ended")
    assert [e["outcome"] for e in rec.of("elicitation_resolved")] == ["declined"]
    assert demo_answer(rec.text()) == {"action": "decline"}


async def test_turn_error(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub, command=DEMO_FAULTS)
    await prompt(hub, chat_id, "error")
    ended = await rec.kind("turn_ended")
    assert "API Error: 400" in ended["error"]
    await prompt(hub, chat_id, "hello")
    assert (await rec.kind("turn_ended", turn=2))["stopReason"] == "end_turn"


async def test_missing_agent_binary(hub: Hub) -> None:
    chat_id = await hub.open_chat(command=["/nonexistent/agent-binary"])
    rec = Recorder(hub.subscribe(chat_id))
    await hub.chats[chat_id].start_task
    assert hub.chats[chat_id].session.status == "exited"
    ack = await hub.handle({"type": "chat:resync", "chatId": chat_id})
    exited = next(e for e in ack["events"] if e.get("status") == "exited")
    assert "could not start" in exited["detail"]
    del rec


async def test_stream_is_coalesced_in_order(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    await prompt(hub, chat_id, "stream 5000")
    await rec.kind("turn_ended")
    assert rec.text() == "".join(f"{i} " for i in range(5000))
    seqs = [e["seq"] for e in rec.events]
    assert seqs == sorted(seqs)
    history = hub.chats[chat_id].session.history
    assert len(history) < 20  # 5000 chunks of one message: one history entry


async def test_question_without_tool_call_is_tied_to_the_running_tool() -> None:
    """An MCP server's question arrives with no toolCallId (claude's wrapper forwards it
    so): the bridge names the newest tool call still running, so the card can show it."""
    events: list[dict[str, Any]] = []
    # Never started: the agent's side is played by feeding the session directly.
    session = ChatSession("c1", AgentSpec("fake", ("fake-agent",)), cwd=".", sink=events.append)

    def update(**fields: Any) -> None:
        session._on_notification(
            Notification("session/update", {"sessionId": "s1", "update": fields})
        )

    def ask(rpc_id: int, **extra: Any) -> str | None:
        form = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        params = {"sessionId": "s1", "mode": "form", "message": "Sure?", "requestedSchema": form}
        session._on_request(Request(rpc_id, "elicitation/create", {**params, **extra}))
        asked = [e for e in events if e["kind"] == "elicitation_request"][-1]
        tool_call_id: str | None = asked.get("toolCallId")
        return tool_call_id

    try:
        assert ask(0) is None
        update(sessionUpdate="tool_call", toolCallId="search", title="ToolSearch")
        update(
            sessionUpdate="tool_call", toolCallId="mcp", title="mcp__picker__pick", status="pending"
        )
        assert ask(1) == "mcp"
        assert ask(2, toolCallId="own") == "own"  # a question naming its tool call keeps it
        update(sessionUpdate="tool_call_update", toolCallId="mcp", rawInput={})  # no status
        assert ask(3) == "mcp"
        update(sessionUpdate="tool_call_update", toolCallId="mcp", status="completed")
        assert ask(4) == "search"
        update(sessionUpdate="tool_call_update", toolCallId="search", status="failed")
        assert ask(5) is None
        # A tool call left pending when its turn ends is forgotten with the turn.
        update(sessionUpdate="tool_call", toolCallId="stuck", title="Bash", status="in_progress")
        session._started.set()  # as if the handshake had failed: the turn ends at once
        await session._run_turn(1, "hi")
        assert ask(6) is None
    finally:
        await session.close()


async def test_refused_session_new_says_why(hub: Hub, tmp_path: Any) -> None:
    # An agent that refuses session/new (claude does so with -32000 when not logged in).
    agent = tmp_path / "refuse.py"
    agent.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m.get('method') == 'initialize':\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'protocolVersion': 1}}), flush=True)\n"
        "    elif m.get('method') == 'session/new':\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': {'code': -32000, 'message': 'Authentication required'}}), flush=True)\n"
    )
    chat_id = await hub.open_chat(command=[sys.executable, str(agent)])
    await hub.chats[chat_id].start_task
    assert hub.chats[chat_id].session.status == "exited"
    ack = await hub.handle({"type": "chat:resync", "chatId": chat_id})
    exited = next(e for e in ack["events"] if e.get("status") == "exited")
    # It offers no sign-in method (no authMethods): the chat ends, saying what to do.
    assert exited["detail"].startswith("the agent refused to start: Authentication required")
    assert "needs a sign-in and offers no method" in exited["detail"]


async def test_prompt_while_starting_waits_for_the_handshake(hub: Hub) -> None:
    chat_id = await hub.open_chat("demo", env={"ACP_DEMO_DELAY": "0"})
    rec = Recorder(hub.subscribe(chat_id))
    await prompt(hub, chat_id, "hello")  # not waiting for the start: the agent is still starting
    ended = await rec.kind("turn_ended")
    assert ended["stopReason"] == "end_turn" and "demo agent" in rec.text()
    order = [
        e.get("status", e["kind"])
        for e in rec.events
        if e["kind"] in ("agent_status", "turn_started")
    ]
    assert order.index("turn_started") < order.index("ready")


async def test_cancel_while_starting_ends_the_queued_turn(hub: Hub) -> None:
    chat_id = await hub.open_chat("demo", env={"ACP_DEMO_DELAY": "0"})
    rec = Recorder(hub.subscribe(chat_id))
    await prompt(hub, chat_id, "hello")
    assert (await hub.handle({"type": "chat:cancel", "chatId": chat_id}))["accepted"]
    assert (await rec.kind("turn_ended"))["stopReason"] == "cancelled"
    await hub.chats[chat_id].start_task
    await prompt(hub, chat_id, "hello")
    assert (await rec.kind("turn_ended", turn=2))["stopReason"] == "end_turn"


async def test_closing_a_chat_delivers_its_last_events(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    await hub.close_chat(chat_id)
    exited = await rec.kind("agent_status", status="exited")
    assert exited["detail"]
    assert await rec.sub.next_frame() is None


async def test_mode_set_at_start_shows_in_modes_and_config_options(hub: Hub) -> None:
    _, rec = await open_demo(hub, mode="plan")
    ready = await rec.kind("agent_status", status="ready")
    assert ready["modes"]["currentModeId"] == "plan"
    assert [o["currentValue"] for o in ready["configOptions"] if o["id"] == "mode"] == ["plan"]


async def test_agents_do_not_inherit_the_extension_secret(
    hub: Hub, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP_NOTEBOOK_SECRET", "s3cret")
    monkeypatch.setenv("ACP_KEEP_ME", "yes")
    seen = tmp_path / "env.json"
    agent = tmp_path / "env_agent.py"
    agent.write_text(f"import json, os\njson.dump(dict(os.environ), open({str(seen)!r}, 'w'))\n")
    chat_id = await hub.open_chat(command=[sys.executable, str(agent)])
    await hub.chats[chat_id].start_task
    assert hub.chats[chat_id].session.status == "exited"
    env = json.loads(seen.read_text())
    assert env["ACP_KEEP_ME"] == "yes" and "ACP_NOTEBOOK_SECRET" not in env


async def test_cancel_while_starting_without_a_turn_cancels_nothing_later(hub: Hub) -> None:
    chat_id = await hub.open_chat("demo", env={"ACP_DEMO_DELAY": "0"})
    rec = Recorder(hub.subscribe(chat_id))
    assert (await hub.handle({"type": "chat:cancel", "chatId": chat_id}))["accepted"]
    await prompt(hub, chat_id, "hello")
    assert (await rec.kind("turn_ended"))["stopReason"] == "end_turn"


async def test_claude_code_does_not_inherit_is_sandbox(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As root with IS_SANDBOX set, claude's wrapper asks the CLI to skip permissions and
    # the CLI refuses to start; the claude-code spec drops it (Chat(env=...) still wins).
    monkeypatch.setenv("IS_SANDBOX", "yes")
    seen = tmp_path / "env.json"
    agent = tmp_path / "env_agent.py"
    agent.write_text(f"import json, os\njson.dump(dict(os.environ), open({str(seen)!r}, 'w'))\n")
    hub = Hub(HubConfig(agent_commands={"claude-code": [sys.executable, str(agent)]}))
    try:
        chat_id = await hub.open_chat("claude-code")
        await hub.chats[chat_id].start_task
        env = json.loads(seen.read_text())
        assert "IS_SANDBOX" not in env and env["CLAUDE_CODE_ENABLE_TODO_TOOLS"] == "1"
        chat_id = await hub.open_chat("claude-code", env={"IS_SANDBOX": "1"})
        await hub.chats[chat_id].start_task
        assert json.loads(seen.read_text())["IS_SANDBOX"] == "1"
    finally:
        await hub.close()


async def test_url_question_completion_by_the_bridge() -> None:
    """elicitation/complete: before an answer it settles the card (the agent is told
    cancel: no one consented); after a decline, or for an unknown id, it is ignored; an
    accepted card still waiting ends when the agent exits. A bad link is refused."""
    events: list[dict[str, Any]] = []
    # Never started: the agent's side is played by feeding the session directly.
    session = ChatSession("c1", AgentSpec("fake", ("fake-agent",)), cwd=".", sink=events.append)
    sent: list[dict[str, Any]] = []
    session.conn._write = lambda data: sent.append(json.loads(data))  # type: ignore[method-assign]

    def ask(rpc_id: int, elicitation_id: str, url: str = "https://example.com/a") -> str:
        params = {"sessionId": "s1", "mode": "url", "message": "Sign in", "url": url}
        session._on_request(
            Request(rpc_id, "elicitation/create", {**params, "elicitationId": elicitation_id})
        )
        return str(events[-1].get("requestId"))

    def complete(elicitation_id: object) -> None:
        session._on_notification(
            Notification("elicitation/complete", {"elicitationId": elicitation_id})
        )

    def outcomes() -> list[tuple[str, str]]:
        return [
            (e["requestId"], e["outcome"]) for e in events if e["kind"] == "elicitation_resolved"
        ]

    try:
        early = ask(1, "a")
        complete("unknown")
        complete(None)
        assert outcomes() == [] and sent == []
        complete("a")
        assert outcomes() == [(early, "completed")]
        assert sent == [{"jsonrpc": "2.0", "id": 1, "result": {"action": "cancel"}}]
        complete("a")  # once only
        declined, accepted = ask(2, "b"), ask(3, "c")
        session.respond_elicitation(declined, "decline", None)
        complete("b")
        session.respond_elicitation(accepted, "accept", None)
        assert outcomes()[1:] == [(declined, "declined"), (accepted, "accepted")]
        assert sent[-1]["result"] == {"action": "accept"}
        ask(4, "d", url="https://user:pw@example.com/")
        assert sent[-1]["error"]["code"] == -32602 and "credentials" in sent[-1]["error"]["message"]
        assert "credentials" in events[-1]["message"] and events[-1]["kind"] == "agent_error"
        session._on_exit(1)
        assert outcomes()[3:] == [(accepted, "cancelled")]
    finally:
        await session.close()
