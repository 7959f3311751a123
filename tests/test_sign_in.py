"""Signing in to an agent that needs it (ACP authMethods, authenticate, logout), on the
real wire to the demo agent's login mode (acp_notebook/demo/login.py): the hub and the
Python API in local mode; tests/server/test_sign_in_server.py drives it in server mode."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from acp import schema

from acp_notebook.agent.auth_methods import take_auth_methods
from acp_notebook.bridge.hub import Hub
from acp_notebook.kernel.chat import AuthRequired, Chat
from acp_notebook.wire.contracts import SAVED_MIME
from acp_notebook.wire.errors import InvalidRequest
from tests.support.hub_chats import Recorder

# What the demo login's terminal method reads (acp_notebook/demo/login.py): the secret.
SECRET = "open sesame"
ARGV = ("python", "-m", "agent")


def login_env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {"ACP_DEMO_DELAY": "0", "ACP_DEMO_LOGIN": str(tmp_path / "signed-in"), **more}


async def auth(hub: Hub, chat_id: str, **request: Any) -> dict[str, Any]:
    return await hub.handle({"type": "chat:auth", "chatId": chat_id, "id": 1, **request})


async def open_login_chat(hub: Hub, tmp_path: Path) -> tuple[str, Recorder]:
    chat_id = await hub.open_chat("demo", env=login_env(tmp_path), cwd=str(tmp_path))
    return chat_id, Recorder(hub.subscribe(chat_id))


def test_auth_methods_are_validated_and_bounded() -> None:
    raw: list[Any] = [
        {"id": "plain", "name": "Agent's own", "description": "d" * 5000},
        {"id": "plain", "name": "the same id again"},
        {
            "id": "tty",
            "name": "Terminal",
            "type": "terminal",
            "args": ["--login"],
            "env": {"A": "1 2"},
        },
        {
            "id": "v2env",
            "name": "Terminal",
            "type": "terminal",
            "env": [{"name": "B", "value": "x"}],
        },
        {"id": "bad-arg", "name": "x", "type": "terminal", "args": [1]},
        {"id": "bad-env", "name": "x", "type": "terminal", "env": {"A=B": "1"}},
        {"id": "many", "name": "x", "type": "terminal", "args": ["a"] * 65},
        {
            "id": "key",
            "name": "Key",
            "type": "env_var",
            "vars": [{"name": "K", "secret": False}],
            "link": "javascript:alert(1)",
        },
        {"id": "no-vars", "name": "Key", "type": "env_var", "vars": [{"name": "1BAD"}]},
        {"id": "odd", "name": "Future", "type": "_vendor"},
        {"id": "", "name": "empty id"},
        {"id": "x" * 129, "name": "long id"},
        {"name": "no id"},
        "not an object",
    ]
    methods = take_auth_methods(raw, ARGV)
    assert [m["id"] for m in methods] == ["plain", "tty", "v2env", "key"]
    plain, tty, v2env, key = methods
    assert plain["type"] == "agent" and len(plain.get("description") or "") == 1024
    # A terminal method runs the agent's own command: never one the agent names.
    assert tty["command"] == [*ARGV, "--login"]
    assert tty["commandLine"] == "A='1 2' python -m agent --login"
    assert v2env["env"] == [{"name": "B", "value": "x"}]
    assert key["vars"] == [{"name": "K", "secret": False, "optional": False}]
    assert "link" not in key  # only http(s) links are kept
    assert len(take_auth_methods([{"id": str(n), "name": "m"} for n in range(40)], ARGV)) == 16
    assert take_auth_methods({"id": "not a list"}, ARGV) == []


async def test_agent_method_signs_in_and_the_chat_starts(hub: Hub, tmp_path: Path) -> None:
    chat_id, rec = await open_login_chat(hub, tmp_path)
    required = await rec.kind("auth", state="required")
    assert [m["id"] for m in required["methods"]] == ["demo-agent", "demo-terminal", "demo-key"]
    assert required["logout"] is True and required["detail"] == "Authentication required"
    session = hub.chats[chat_id].session
    assert session.status == "starting"
    # A prompt sent now waits for the sign-in, and then runs.
    ack = await hub.handle({"type": "chat:prompt", "chatId": chat_id, "text": "hello", "id": 2})
    assert ack["accepted"]
    assert (await auth(hub, chat_id, op="start", methodId="demo-agent"))["accepted"]
    await rec.kind("auth", state="signed_in", methodId="demo-agent")
    await rec.kind("agent_status", status="ready")
    assert (await rec.kind("turn_ended"))["stopReason"] == "end_turn"
    assert "hello" in rec.text()
    # Signed in: nothing to start now.
    again = await auth(hub, chat_id, op="start", methodId="demo-agent")
    assert again["error"] == "INVALID" and "not asked for a sign-in" in again["detail"]


async def test_terminal_method_takes_a_typed_line_and_never_shows_it(
    hub: Hub, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    chat_id, rec = await open_login_chat(hub, tmp_path)
    await rec.kind("auth", state="required")
    assert (await auth(hub, chat_id, op="input", text="x"))["error"] == "INVALID"  # none runs

    # A wrong password: the command exits 1, and the card offers the methods again.
    assert (await auth(hub, chat_id, op="start", methodId="demo-terminal"))["accepted"]
    running = await rec.kind("auth", state="signing_in", methodId="demo-terminal")
    tool_id = running["toolCallId"]
    await rec.until(lambda e: "Password:" in json.dumps(e) and e["kind"] == "update")
    assert (await auth(hub, chat_id, op="input", text="wrong guess"))["accepted"]
    failed = await rec.until(
        lambda e: e["kind"] == "auth" and e["state"] == "required" and e["seq"] > running["seq"],
        timeout=30,
    )
    assert failed["detail"] == "Demo login in a terminal: the sign-in command ended with code 1"

    # A line with a newline is refused before it reaches the command.
    assert (await auth(hub, chat_id, op="start", methodId="demo-terminal"))["accepted"]
    second = await rec.until(
        lambda e: e["kind"] == "auth" and e["state"] == "signing_in" and e["toolCallId"] != tool_id
    )
    await rec.until(
        lambda e: (
            e["kind"] == "update"
            and e["update"].get("toolCallId") == second["toolCallId"]
            and "Password:" in json.dumps(e)
        )
    )
    bad = await auth(hub, chat_id, op="input", text=f"{SECRET}\nmore")
    assert bad["error"] == "INVALID" and SECRET not in json.dumps(bad)
    assert (await auth(hub, chat_id, op="input", text=SECRET))["accepted"]
    await rec.kind("auth", state="signed_in", methodId="demo-terminal", timeout=30)
    await rec.kind("agent_status", status="ready")
    shown = json.dumps(rec.events)
    assert "Signed in." in shown and "Wrong password." in shown
    # The command ran on the user's click, as the card showed it.
    call = next(
        e["update"] for e in rec.of("update") if e["update"].get("sessionUpdate") == "tool_call"
    )
    assert call["rawInput"]["command"].endswith("-m acp_notebook.demo.agent --login")
    assert call["rawInput"]["command"].startswith("ACP_DEMO_LOGIN_BY=terminal ")

    # What the user typed is nowhere: not in the events, the resync, or the logs.
    session = hub.chats[chat_id].session
    assert SECRET not in shown and "wrong guess" not in shown
    assert SECRET not in json.dumps(session.resync())
    assert SECRET not in json.dumps(
        await hub.handle({"type": "chat:resync", "chatId": chat_id, "snapshot": True})
    )
    assert not [r for r in caplog.records if SECRET in r.getMessage()]
    assert (tmp_path / "signed-in").read_text() == "signed in by terminal\n"


async def test_a_load_waits_for_the_sign_in_then_replays(hub: Hub, tmp_path: Path) -> None:
    keyed = login_env(tmp_path, ACP_DEMO_API_KEY="k")  # signed in by its key
    first = await hub.open_chat("demo", env=keyed, cwd=str(tmp_path))
    rec = Recorder(hub.subscribe(first))
    session_id = (await rec.kind("agent_status", status="ready"))["sessionId"]
    hub.chats[first].session.prompt("remember me")
    await rec.kind("turn_ended")
    await hub.close_chat(first)

    # Without the key, session/load is refused until the user signs in; then it replays.
    again = await hub.open_chat(
        "demo", env=login_env(tmp_path), cwd=str(tmp_path), load_session_id=session_id
    )
    rec2 = Recorder(hub.subscribe(again))
    await rec2.kind("auth", state="required")
    assert rec2.of("update") == []
    await auth(hub, again, op="start", methodId="demo-agent")
    ready = await rec2.kind("agent_status", status="ready")
    assert ready["sessionId"] == session_id
    assert "remember me" in json.dumps(rec2.of("update"))


async def test_a_stopped_terminal_sign_in_offers_the_methods_again(
    hub: Hub, tmp_path: Path
) -> None:
    chat_id, rec = await open_login_chat(hub, tmp_path)
    await rec.kind("auth", state="required")
    assert (await auth(hub, chat_id, op="stop"))["error"] == "INVALID"  # nothing runs
    await auth(hub, chat_id, op="start", methodId="demo-terminal")
    running = await rec.kind("auth", state="signing_in")
    await rec.until(lambda e: e["kind"] == "update" and "Password:" in json.dumps(e))
    busy = await auth(hub, chat_id, op="start", methodId="demo-agent")
    assert busy["error"] == "INVALID" and "running already" in busy["detail"]
    assert (await auth(hub, chat_id, op="stop"))["accepted"]
    stopped = await rec.until(
        lambda e: e["kind"] == "auth" and e["state"] == "required" and e["seq"] > running["seq"]
    )
    assert "ended with signal" in stopped["detail"]
    assert hub.chats[chat_id].session.status == "starting"  # still waiting for a sign-in
    assert not (tmp_path / "signed-in").exists()


async def test_env_var_method_says_what_to_set_and_where(hub: Hub, tmp_path: Path) -> None:
    chat_id, rec = await open_login_chat(hub, tmp_path)
    await rec.kind("auth", state="required")
    refused = await auth(hub, chat_id, op="start", methodId="demo-key")
    assert refused["error"] == "INVALID"
    assert "ACP_DEMO_API_KEY" in refused["detail"] and "Chat(env=" in refused["detail"]
    assert "Jupyter server's environment" in refused["detail"]
    assert hub.chats[chat_id].session.sign_in.state == "required"  # nothing ran, no retry
    unknown = await auth(hub, chat_id, op="start", methodId="nope")
    assert unknown["error"] == "INVALID" and "no sign-in method 'nope'" in unknown["detail"]

    # Set where the agent starts, the key signs it in: no sign-in is asked for.
    keyed = await hub.open_chat(
        "demo", env=login_env(tmp_path, ACP_DEMO_API_KEY="k"), cwd=str(tmp_path)
    )
    rec2 = Recorder(hub.subscribe(keyed))
    await hub.chats[keyed].start_task
    assert hub.chats[keyed].session.status == "ready"
    assert rec2.of("auth") == []


async def test_logout_asks_for_a_sign_in_again(hub: Hub, tmp_path: Path) -> None:
    chat_id, rec = await open_login_chat(hub, tmp_path)
    conn = hub.chats[chat_id].session.conn
    sent: list[dict[str, Any]] = []
    write = conn._write

    def spy(data: bytes) -> None:
        sent.append(json.loads(data))
        write(data)

    conn._write = spy  # type: ignore[method-assign]
    await rec.kind("auth", state="required")
    await auth(hub, chat_id, op="start", methodId="demo-agent")
    ready = await rec.kind("agent_status", status="ready")
    assert ready["agentCapabilities"]["auth"] == {"logout": {}}
    assert (await auth(hub, chat_id, op="logout"))["accepted"]
    signed_out = await rec.kind("auth", state="signed_out")
    assert not (tmp_path / "signed-in").exists()
    # The agent refuses the next turn: the turn says so, and the card shows again.
    await hub.handle({"type": "chat:prompt", "chatId": chat_id, "text": "hello", "id": 2})
    ended = await rec.kind("turn_ended")
    assert ended["error"] == "Authentication required"
    required = await rec.until(
        lambda e: e["kind"] == "auth" and e["state"] == "required" and e["seq"] > signed_out["seq"]
    )
    assert (await auth(hub, chat_id, op="start", methodId="demo-agent"))["accepted"]
    await rec.until(
        lambda e: e["kind"] == "auth" and e["state"] == "signed_in" and e["seq"] > required["seq"]
    )
    await hub.handle({"type": "chat:prompt", "chatId": chat_id, "text": "again", "id": 3})
    second = await rec.until(lambda e: e["kind"] == "turn_ended" and e["turn"] == 2)
    assert second["stopReason"] == "end_turn" and "again" in rec.text()
    # What went to the agent is ACP's (the Python SDK's schema models).
    models = {"authenticate": schema.AuthenticateRequest, "logout": schema.LogoutRequest}
    checked = [f for f in sent if f.get("method") in models]
    assert [f["method"] for f in checked] == ["authenticate", "logout", "authenticate"]
    for frame in checked:
        models[frame["method"]].model_validate(frame["params"])


async def test_only_the_owner_may_sign_in(hub: Hub, tmp_path: Path) -> None:
    chat_id = await hub.open_chat("demo", env=login_env(tmp_path), cwd=str(tmp_path), owner="alice")
    rec = Recorder(hub.subscribe(chat_id))
    await rec.kind("auth", state="required")
    request = {"type": "chat:auth", "chatId": chat_id, "op": "start", "methodId": "demo-agent"}
    assert (await hub.handle(request, user="mallory"))["error"] == "FORBIDDEN"
    assert (await hub.handle(request, user="alice"))["accepted"]


async def test_python_api_signs_in_through_the_terminal_method(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    chat = Chat("demo", env=login_env(tmp_path), cwd=str(tmp_path), transport="local")
    try:
        assert await asyncio.wait_for(chat.ready(), 30) == "auth_required"
        assert [m["id"] for m in chat.auth_methods] == ["demo-agent", "demo-terminal", "demo-key"]
        assert chat.auth_state == "required"
        with pytest.raises(AuthRequired) as raised:
            await chat.ask("hello")
        said = str(raised.value)
        assert "chat.authenticate('demo-agent')" in said and "ACP_DEMO_API_KEY" in said
        assert "chat.auth_input" in said and "--login" in said
        with pytest.raises(InvalidRequest, match="ACP_DEMO_API_KEY"):
            chat.authenticate("demo-key")
        chat.authenticate("demo-terminal")
        assert chat.auth_state == "signing_in"
        async with asyncio.timeout(30):
            while "Password:" not in json.dumps(chat.state["toolCalls"]):
                await asyncio.sleep(0.05)
        chat.auth_input(SECRET)
        assert await asyncio.wait_for(chat.ready(), 30) == "ready"
        turn = await chat.ask("hello there")
        assert turn.ok and "hello there" in turn.text
        chat.logout()
        async with asyncio.timeout(30):
            while chat.auth_state != "signed_out":
                await asyncio.sleep(0.05)
        state = json.dumps(chat.state)
        saved = json.dumps(chat._repr_mimebundle_()[0][SAVED_MIME])
        html = chat._repr_mimebundle_()[0]["text/html"]
        for where in (state, saved, html):
            assert SECRET not in where
        assert "Signed in." in state
        assert "auth" not in json.loads(saved)["snapshot"]  # the live agent's, not saved
        assert not [r for r in caplog.records if SECRET in r.getMessage()]
    finally:
        chat.close()
