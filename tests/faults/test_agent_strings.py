"""An agent's session id and stop reason of a megabyte (issue 12: every hostile input
bounded).

The id goes into every request of the chat, into each resync and into the saved
notebook at every turn end; the server's API takes ids up to ``MAX_ID`` characters.
A longer one ends the start with a clear error, and the agent is ended. A stop reason
(ACP's are short words) shows in the header and is saved: a long one is cut.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import pytest

from acp_notebook.bridge.chat_session import MAX_STOP_REASON
from acp_notebook.wire.contracts import MAX_ID
from tests.support.agents.fault_agent import SESSION_ID
from tests.support.fault_chats import FaultChat
from tests.support.processes import all_gone


@pytest.mark.fault("the agent answers session/new with a 1 MB session id")
async def test_a_session_id_over_the_limit_ends_the_start(
    fault_chat: Callable[..., Awaitable[FaultChat]],
) -> None:
    fc = await fault_chat("long_id", "session_new")
    pid = fc.session.conn.pid
    assert pid is not None
    exited = (await fc.everyone("agent_status", status="exited"))[0]
    assert exited["detail"] == (
        "the agent refused to start: session/new returned a sessionId of 1,048,576"
        f" characters (the limit is {MAX_ID})"
    )
    assert fc.session.session_id is None
    assert "ready" not in [e.get("status") for e in fc.rec.events]
    await all_gone([pid], pid)


@pytest.mark.fault("the agent ends a turn with a 1 MB stop reason")
async def test_a_long_stop_reason_is_cut(fault_chat: Callable[..., Awaitable[FaultChat]]) -> None:
    fc = await fault_chat()
    await fc.prompt(f"stop reason {1 << 20}")
    ended = (await fc.everyone("turn_ended", turn=1))[0]
    assert ended["stopReason"] == "x" * MAX_STOP_REASON
    await fc.prompt("still there?")
    assert (await fc.everyone("turn_ended", turn=2))[0]["stopReason"] == "end_turn"


def raw_update(update: str) -> str:
    """A session/update line with ``update`` as written, in JSON the agent got wrong."""
    return (
        '{"jsonrpc":"2.0","method":"session/update",'
        f'"params":{{"sessionId":"{SESSION_ID}","update":{update}}}}}'
    )


@pytest.mark.fault("the agent sends NaN, Infinity, 1e999 and lone surrogates in its updates")
async def test_numbers_and_surrogates_that_json_cannot_carry(
    fault_chat: Callable[..., Awaitable[FaultChat]],
) -> None:
    fc = await fault_chat()
    tool = (
        r'{"sessionUpdate":"tool_call","toolCallId":"t1","title":"x\udfff",'
        '"rawInput":{"a":NaN,"b":1e999,"c":-Infinity,"d":0.5}}'
    )
    # The chunks after the first are read by the first's template (chunk_lines), not whole.
    chunks = [
        raw_update(
            '{"sessionUpdate":"agent_message_chunk","messageId":"m",'
            f'"content":{{"type":"text","text":"{text}"}}}}'
        )
        for text in ("a", r"\ud800b", r"c\udfff", r"\ud83d\ude00")
    ]
    await fc.prompt("raw " + "\n".join([raw_update(tool), *chunks]))
    await fc.everyone("turn_ended", turn=1)
    for event in fc.rec.events:
        # What the browser's JSON.parse reads (no NaN), and a kernel's comm can encode
        # (UTF-8: a lone surrogate made the local-mode chat's turn never end).
        json.dumps(event, allow_nan=False, ensure_ascii=False).encode()
    (call,) = [e["update"] for e in fc.rec.of("update") if "toolCallId" in e["update"]]
    assert call["title"] == "x\ufffd"
    assert call["rawInput"] == {"a": None, "b": None, "c": None, "d": 0.5}
    assert fc.rec.text() == "a\ufffdbc\ufffd\U0001f600"
    await fc.prompt("still there?")
    assert (await fc.everyone("turn_ended", turn=2))[0]["stopReason"] == "end_turn"
