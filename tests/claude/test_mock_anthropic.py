"""The mock Messages API on its own: wire format, routing of side requests, inspection."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.mock_anthropic import (
    SUGGESTION_MARK,
    ApiError,
    MockAnthropic,
    Reply,
    Text,
    Thinking,
    ToolUse,
    text,
)


@pytest.fixture
def mock() -> Iterator[MockAnthropic]:
    with MockAnthropic() as m:
        yield m


def post(
    mock: MockAnthropic, body: dict[str, Any], path: str = "/v1/messages?beta=true"
) -> tuple[int, dict[str, str], str]:
    req = urllib.request.Request(
        mock.url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-api-key": "dummy"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return (
                resp.status,
                {k.lower(): v for k, v in resp.headers.items()},
                resp.read().decode(),
            )
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode()


def sse(raw: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.split("\n"))
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def user(*texts: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}


TOOLS = [{"name": "AskUserQuestion", "input_schema": {"type": "object"}}]


def test_stream_carries_every_block_in_the_real_event_order(mock: MockAnthropic) -> None:
    call = ToolUse("AskUserQuestion", {"questions": [{"question": 'Q "x"?'}]})
    mock.on_user("go", Reply([Thinking("hmm, let me see"), Text("Hello there world"), call]))

    status, headers, raw = post(mock, {"stream": True, "tools": TOOLS, "messages": [user("go")]})

    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    events = sse(raw)
    names = [e for e, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 3
    deltas: dict[int, list[dict[str, Any]]] = {}
    for name, data in events:
        if name == "content_block_delta":
            deltas.setdefault(data["index"], []).append(data["delta"])
    assert (
        "".join(d["thinking"] for d in deltas[0] if d["type"] == "thinking_delta")
        == "hmm, let me see"
    )
    assert deltas[0][-1]["type"] == "signature_delta"
    assert len(deltas[1]) == 3 and "".join(d["text"] for d in deltas[1]) == "Hello there world"
    assert json.loads("".join(d["partial_json"] for d in deltas[2])) == call.input
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert starts[2] == {
        "type": "tool_use",
        "id": starts[2]["id"],
        "name": "AskUserQuestion",
        "input": {},
    }
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    # The same rule firing again gets a fresh tool_use id.
    again = sse(post(mock, {"stream": True, "tools": TOOLS, "messages": [user("go")]})[2])
    ids = {d["content_block"].get("id") for n, d in [*events, *again] if n == "content_block_start"}
    assert len(ids - {None}) == 2 and all(i.startswith("toolu_mock_") for i in ids - {None})


def test_delay_paces_the_stream(mock: MockAnthropic) -> None:
    mock.on_user("slow", Reply([Text("a b")], delay=0.05))
    started = time.monotonic()
    post(mock, {"stream": True, "tools": TOOLS, "messages": [user("slow")]})
    assert time.monotonic() - started >= 0.05 * 8  # 8 events: start, ping, 4 block, 2 end


def test_non_stream_reply_is_one_message(mock: MockAnthropic) -> None:
    mock.on_user("hi", text("Hello"))
    status, _, raw = post(mock, {"tools": TOOLS, "messages": [user("hi")]})
    msg = json.loads(raw)
    assert status == 200
    assert msg["content"] == [{"type": "text", "text": "Hello"}]
    assert msg["stop_reason"] == "end_turn"


def test_api_error_and_unknown_path(mock: MockAnthropic) -> None:
    mock.on_user("boom", ApiError(400, "prompt is too long"))
    status, headers, raw = post(mock, {"stream": True, "tools": TOOLS, "messages": [user("boom")]})
    assert status == 400
    assert headers["x-should-retry"] == "false"
    assert json.loads(raw)["error"] == {
        "type": "invalid_request_error",
        "message": "prompt is too long",
    }

    status, _, raw = post(mock, {}, path="/v1/complete")
    assert status == 404
    assert json.loads(raw)["error"]["type"] == "not_found_error"
    assert mock.other_requests == [("POST", "/v1/complete")]


def test_side_requests_never_hit_prompt_rules(mock: MockAnthropic) -> None:
    mock.on_user("write", text("main answer"))
    title = {
        "stream": False,
        "messages": [user("<session>\nwrite\n</session>")],
        "output_config": {"format": {"type": "json_schema", "schema": {}}},
    }
    suggestion = {
        "tools": TOOLS,
        "messages": [
            user("write"),
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": f"{SUGGESTION_MARK} what would they write next?]"},
        ],
    }

    assert json.loads(json.loads(post(mock, title)[2])["content"][0]["text"]) == {
        "title": "Mock chat"
    }
    assert json.loads(post(mock, suggestion)[2])["content"] == [{"type": "text", "text": ""}]
    assert [r.kind for r in mock.requests] == ["title", "suggestion"]
    assert mock.main_requests == [] and mock.unmatched == []


def test_prompt_and_tool_results_come_from_the_request_itself(mock: MockAnthropic) -> None:
    mock.on_tool_result("AskUserQuestion", text("thanks"), contains="Red")
    conversation = [
        user("<system-reminder>\nstuff\n</system-reminder>", "first"),
        {"role": "system", "content": "# Environment"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "AskUserQuestion", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": 'answered ="Red"'}],
        },
    ]
    post(mock, {"tools": TOOLS, "messages": conversation[:2]})
    post(mock, {"tools": TOOLS, "messages": conversation})
    # After a failed turn the CLI merges the failed prompt into the next one.
    post(mock, {"tools": TOOLS, "messages": [user("boom\n", "again")]})

    first, answer, merged = mock.requests
    assert first.prompt_text == "first" and first.tool_results == []
    assert answer.prompt_text == ""
    assert [(t.tool_name, t.text) for t in answer.tool_results] == [
        ("AskUserQuestion", 'answered ="Red"')
    ]
    assert merged.prompt_text == "again"
    assert mock.unmatched == [first, merged]
    assert mock.wait_for(lambda r: r.prompt_text == "again", timeout=1) is merged
    with pytest.raises(TimeoutError):
        mock.wait_for(lambda r: r.prompt_text == "never", timeout=0.05)
