"""Our outgoing frames validate against the ACP schema models of the Python SDK."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from acp import schema
from pydantic import BaseModel, TypeAdapter

from acp_notebook.bridge.hub import Hub
from acp_notebook.bridge.ports import NotebookEndpoint
from acp_notebook.wire.contracts import CellEdit
from acp_notebook.wire.review import EditReview
from tests.support.hub_chats import open_demo

REQUESTS: dict[str, Any] = {
    "initialize": schema.InitializeRequest,
    "session/new": schema.NewSessionRequest,
    "session/prompt": schema.PromptRequest,
    "session/set_mode": schema.SetSessionModeRequest,
    "session/set_config_option": TypeAdapter(
        schema.SetSessionConfigOptionSelectRequest | schema.SetSessionConfigOptionBooleanRequest
    ),
    "session/cancel": schema.CancelNotification,
}


def _validate(model: Any, value: Any) -> None:
    if isinstance(model, TypeAdapter):
        model.validate_python(value)
    else:
        assert issubclass(model, BaseModel)
        model.model_validate(value)


async def test_outgoing_frames_match_the_acp_schema(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub)
    conn = hub.chats[chat_id].session.conn
    frames: list[dict[str, Any]] = []
    write = conn._write

    def spy(data: bytes) -> None:
        frames.append(json.loads(data))
        write(data)

    conn._write = spy  # type: ignore[method-assign]

    async def turn(text: str, answer: Any = None) -> None:
        ack = await hub.handle({"type": "chat:prompt", "chatId": chat_id, "text": text})
        number = ack["turn"]
        if answer is not None:
            req = await rec.until(
                lambda e: e["kind"].endswith("_request") and e["requestId"] not in answered
            )
            answered.add(req["requestId"])
            assert (await hub.handle({"chatId": chat_id, "requestId": req["requestId"], **answer}))[
                "accepted"
            ]
        await rec.kind("turn_ended", turn=number)

    answered: set[str] = set()
    await turn("hello")
    await turn("permission", {"type": "chat:permission.respond", "optionId": "allow-once"})
    await turn("permission", {"type": "chat:permission.respond", "cancel": True})
    await turn(
        "ask-user",
        {
            "type": "chat:elicitation.respond",
            "action": "accept",
            "values": {"question_0": "red", "count": 3, "confirm": True, "note": "n"},
        },
    )
    await turn("ask-user", {"type": "chat:elicitation.respond", "action": "decline"})
    await turn("ask-user", {"type": "chat:elicitation.respond", "action": "cancel"})
    multi = {"question_0": "Red", "question_1": ["Cheese", "Olives"], "question_1_custom": "x"}
    await turn(
        "ask-claude-multi",
        {"type": "chat:elicitation.respond", "action": "accept", "values": multi},
    )
    assert (await hub.handle({"type": "chat:set_mode", "chatId": chat_id, "modeId": "plan"}))[
        "accepted"
    ]
    assert (
        await hub.handle(
            {"type": "chat:set_config", "chatId": chat_id, "configId": "mode", "value": "default"}
        )
    )["accepted"]
    ack = await hub.handle({"type": "chat:prompt", "chatId": chat_id, "text": "slow"})
    assert (await hub.handle({"type": "chat:cancel", "chatId": chat_id}))["accepted"]
    await rec.kind("turn_ended", turn=ack["turn"])

    seen: set[str] = set()
    responses = 0
    for frame in frames:
        assert frame["jsonrpc"] == "2.0"
        if "method" in frame:
            seen.add(frame["method"])
            if frame["method"] in REQUESTS:
                _validate(REQUESTS[frame["method"]], frame["params"])
        elif "result" in frame:
            responses += 1
            result = frame["result"]
            if "outcome" in result:
                schema.RequestPermissionResponse.model_validate(result)
            else:
                TypeAdapter(schema.CreateElicitationResponse).validate_python(result)
    assert {
        "session/prompt",
        "session/set_mode",
        "session/set_config_option",
        "session/cancel",
    } <= seen
    assert responses == 6  # two permission answers, four elicitation answers


class UnusedTools:
    """A chat's notebook endpoint that nobody calls: enough for session/new to offer it."""

    url = "http://127.0.0.1:9/mcp"
    secret = "unused"
    review: EditReview | None = None

    def cancel_runs(self) -> None:
        pass

    def close(self) -> None:
        pass

    async def preview(self, tool_call: Mapping[str, Any]) -> CellEdit | None:
        return None


async def unused_tools() -> NotebookEndpoint:
    return UnusedTools()


@pytest.mark.parametrize("tools", [False, True], ids=["no-notebook-tools", "notebook-tools"])
async def test_handshake_frames_match_the_acp_schema(tools: bool) -> None:
    from acp_notebook.agent.connection import AgentConnection

    hub = Hub(notebook_tools=unused_tools if tools else None)
    frames: list[dict[str, Any]] = []
    original = AgentConnection._write

    def spy(self: AgentConnection, data: bytes) -> None:
        frames.append(json.loads(data))
        original(self, data)

    AgentConnection._write = spy  # type: ignore[method-assign]
    try:
        await open_demo(hub)
    finally:
        AgentConnection._write = original  # type: ignore[method-assign]
        await hub.close()
    methods = [f["method"] for f in frames]
    assert methods[:3] == ["initialize", "initialized", "session/new"]
    init = schema.InitializeRequest.model_validate(frames[0]["params"])
    assert init.protocol_version == 1
    assert init.client_capabilities.elicitation is not None
    assert init.client_capabilities.elicitation.form is not None
    # URL mode too: each mode is advertised by its own non-null key.
    assert init.client_capabilities.elicitation.url is not None
    assert frames[0]["params"]["clientCapabilities"]["terminal"] is True
    new = frames[2]["params"]
    schema.NewSessionRequest.model_validate(new)
    assert [server["name"] for server in new["mcpServers"]] == (["notebook"] if tools else [])
    # With our notebook tools claude withholds its own notebook editor; other agents
    # (the demo here) ignore claude's _meta and start as before.
    withheld = {"claudeCode": {"options": {"disallowedTools": ["NotebookEdit"]}}}
    assert new.get("_meta") == (withheld if tools else None)
