"""Local and server mode run one request path: the same bad request raises the same
exception, with the same code, detail, reason and agent data, in both.

Each mode runs the same cell in a real kernel of a real Jupyter server: local mode
with the hub in the kernel (``transport="local"``), server mode through the
extension. Both hubs allow only the demo agent.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from acp_notebook.server.app import AcpNotebookApp
from acp_notebook.wire.contracts import ErrorCode
from tests.support.agents import REFUSING_AGENT

REFUSING = str(REFUSING_AGENT)
CODES = set(ErrorCode.__args__)  # type: ignore[attr-defined]

PRELUDE = {
    "local": (
        "from acp_notebook.kernel import local_transport as client\n"
        "from acp_notebook.bridge.hub import ChatCount, HubConfig\n"
        "config = HubConfig(allowed_agents=frozenset({'demo'}), chats=ChatCount(3))\n"
        "client._local = client.LocalClient(config)\n"
    ),
    "server": "",
}

CELL = """
import json, sys
from acp_notebook import Chat, ChatError
T = {mode!r}
seen = {{}}

def expect(code, act):
    try:
        act()
    except ChatError as exc:
        seen[code] = {{
            "code": exc.code, "class": type(exc).__name__, "detail": exc.detail,
            "reason": exc.reason, "data": exc.data, "message": str(exc),
            "ValueError": isinstance(exc, ValueError),
            "PermissionError": isinstance(exc, PermissionError),
        }}
    else:
        seen[code] = None

chat = Chat("demo", env={{"ACP_DEMO_DELAY": "0"}}, transport=T)
assert chat.mode == T, chat.mode
expect("INVALID", lambda: Chat("demo", cwd="/" + "x" * 5000, transport=T))
expect("FORBIDDEN", lambda: Chat("codex", transport=T))
expect("ELICITATION_NOT_FOUND", lambda: chat.decline("nope"))
expect("PERMISSION_NOT_FOUND", lambda: chat.allow("nope", "allow-once"))
await chat.ready()
number = chat.send_prompt("slow")
# A prompt during a turn is queued, as its turn number says; past the queue's bound: BUSY.
from acp_notebook.wire.contracts import MAX_QUEUE
queued = [chat.send_prompt("again") for _ in range(MAX_QUEUE)]
assert queued == list(range(number + 1, number + 1 + MAX_QUEUE)), queued
expect("BUSY", lambda: chat.send_prompt("again"))
chat.cancel()
chat.wait(number, 20)
agent = [sys.executable, {agent!r}]
refused = Chat(command=agent, env={{"REFUSE_NEW": "1"}}, transport=T)
assert await refused.ready() == "exited"
expect("AGENT_EXITED", lambda: refused.send_prompt("hello"))
refusing = Chat(command=agent, transport=T)
assert await refusing.ready() == "ready"
expect("INVALID data", lambda: refusing.set_mode("plan"))
expect("TOO_MANY_CHATS", lambda: Chat("demo", transport=T))  # the fourth
chat.close()
expect("CHAT_NOT_FOUND", lambda: chat.cancel())
print("errors:" + json.dumps(seen), flush=True)
"""

STOPPED = {
    "local": "client.local_client().shutdown()\n",
    "server": "",
}
INTERNAL = 'expect("INTERNAL", lambda: Chat("demo", transport=T))\nprint("internal:" + json.dumps(seen["INTERNAL"]), flush=True)\n'


@pytest.mark.acp_config(AcpNotebookApp={"allowed_agents": ["demo"], "max_chats": 3})
async def test_every_error_code_is_the_same_exception_in_both_modes(
    start_kernel: Any, cells: Any, extension: AcpNotebookApp
) -> None:
    seen: dict[str, dict[str, Any]] = {}
    kernels: dict[str, Any] = {}
    for mode in ("local", "server"):
        kernels[mode] = await cells(await start_kernel())
        out = await kernels[mode].run(
            PRELUDE[mode] + CELL.format(mode=mode, agent=REFUSING), timeout=90
        )
        seen[mode] = json.loads(out.split("errors:", 1)[1])
    # Both hubs stop: the kernel's own (local), the server's (it is shutting down).
    await extension.hubs.close()
    for mode in ("local", "server"):
        out = await kernels[mode].run(STOPPED[mode] + INTERNAL)
        seen[mode]["INTERNAL"] = json.loads(out.split("internal:", 1)[1])

    local, server = seen["local"], seen["server"]
    assert {case.split()[0] for case in local} == CODES, "a case per error code"
    for case, got in local.items():
        assert got is not None, f"{case}: no exception in local mode"
        assert got["code"] == case.split()[0], got
        assert got["detail"], got
        compared = ("code", "class", "ValueError", "PermissionError", "reason", "data")
        if case != "INTERNAL":  # why the hub stopped is worded by who stopped it
            compared += ("detail", "message")
        assert {k: server[case][k] for k in compared} == {k: got[k] for k in compared}, case

    assert local["INVALID"]["class"] == "InvalidRequest" and local["INVALID"]["ValueError"]
    assert "cwd" in local["INVALID"]["detail"]
    assert "max_chats" in local["TOO_MANY_CHATS"]["detail"]
    assert local["FORBIDDEN"]["class"] == "ChatForbidden"
    assert local["FORBIDDEN"]["PermissionError"] and "codex" in local["FORBIDDEN"]["detail"]
    # Why the agent is gone, with the agent's own report (issue 11, item 7).
    exited = local["AGENT_EXITED"]
    assert exited["reason"].startswith("the agent refused to start: Invalid params")
    assert (
        "must be a directory you own" in exited["reason"] and exited["reason"] in exited["message"]
    )
    refused = local["INVALID data"]
    assert refused["detail"] == "the agent refused: Invalid params"
    assert json.loads(refused["data"])["issues"][0]["path"] == ["cwd"]
    assert sys.executable  # the agent runs with the test's interpreter
