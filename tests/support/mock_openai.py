"""A scriptable mock of OpenAI-style model APIs, for driving the real Codex and opencode.

Two wires, one script: ``POST /v1/responses`` (the Responses API; Codex) and
``POST /v1/chat/completions`` (Chat Completions; opencode's ``@ai-sdk/openai-compatible``
provider). Both stream server-sent events. Rules see a ``ModelRequest`` and are tried in
the order added; the first match answers.

Observed here with @agentclientprotocol/codex-acp 2.6.0 (Codex CLI 0.166.0), pointed at
the mock by a ``model_providers`` entry (``wire_api = "responses"``) in
``$CODEX_HOME/config.toml`` plus ``MODEL_PROVIDER``:

- ``input`` is the whole conversation as Responses items (``message`` with
  ``input_text`` parts, ``function_call``, ``function_call_output``); the newest item is
  what the request adds. Tools are functions: ``exec_command`` (``cmd``,
  ``sandbox_permissions``, ``justification``), ``request_user_input`` (plan mode only).
- The stream needs ``response.created``, the output items (``response.output_item.done``)
  and ``response.completed`` with the response id; text deltas are optional.

and with opencode-ai 1.18.33 (a ``provider`` entry with ``npm:
"@ai-sdk/openai-compatible"`` and ``options.baseURL`` in its config):

- ``messages`` in Chat Completions form; a tool result is a ``role: "tool"`` message
  with ``tool_call_id``. Tools include ``bash`` (``command``, ``description``).

Both CLIs also send a title side request per session (no tools; the first prompt
quoted in its last message): it gets a fixed title and rules never see it.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .mock_model import Script

Json = dict[str, Any]

RESPONSES = "/v1/responses"
CHAT = "/v1/chat/completions"


@dataclass(frozen=True)
class Reply:
    """One model turn: some text, or one function (tool) call."""

    text: str = ""
    call: tuple[str, Json, str] | None = None  # (name, arguments, call id)


def text(s: str) -> Reply:
    return Reply(text=s)


def function_call(name: str, arguments: Json, call_id: str) -> Reply:
    return Reply(call=(name, arguments, call_id))


TITLE = text(json.dumps({"title": "Mock chat"}))


@dataclass(frozen=True)
class ModelRequest:
    """One request as received; ``prompt`` and ``output`` read what it adds."""

    path: str
    body: Json

    @property
    def _last(self) -> Json:
        items = self.body.get("input" if self.path == RESPONSES else "messages") or [{}]
        last: Json = items[-1]
        return last

    @property
    def prompt(self) -> str:
        """The user's prompt when this request carries a new one, else ''."""
        last = self._last
        if last.get("role") != "user":
            return ""
        content = last.get("content")
        if isinstance(content, str):
            return content
        return "".join(
            str(p.get("text", "")) for p in content or [] if p.get("type") in ("input_text", "text")
        )

    @property
    def output(self) -> tuple[str, str] | None:
        """(call id, output) of the tool result this request returns, if that is what it adds."""
        last = self._last
        if last.get("type") == "function_call_output":
            return str(last.get("call_id")), str(last.get("output"))
        if last.get("role") == "tool":
            content = last.get("content")
            return str(last.get("tool_call_id")), (
                content if isinstance(content, str) else json.dumps(content)
            )
        return None


def _responses_events(reply: Reply) -> Iterator[Json]:
    response_id = f"resp_{uuid.uuid4().hex[:12]}"
    if reply.call is not None:
        name, arguments, call_id = reply.call
        item: Json = {
            "type": "function_call",
            "id": f"fc_{uuid.uuid4().hex[:12]}",
            "call_id": call_id,
            "name": name,
            "arguments": json.dumps(arguments),
        }
    else:
        part = {"type": "output_text", "text": reply.text, "annotations": []}
        item = {
            "type": "message",
            "role": "assistant",
            "id": f"msg_{uuid.uuid4().hex[:12]}",
            "content": [part],
        }
    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    yield {"type": "response.created", "response": {"id": response_id}}
    yield {"type": "response.output_item.done", "output_index": 0, "item": item}
    yield {"type": "response.completed", "response": {"id": response_id, "usage": usage}}


def _chat_events(reply: Reply) -> Iterator[Json]:
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion.chunk"}
    delta: Json = {"role": "assistant"}
    if reply.call is not None:
        name, arguments, call_id = reply.call
        function = {"name": name, "arguments": json.dumps(arguments)}
        delta["tool_calls"] = [
            {"index": 0, "id": call_id, "type": "function", "function": function}
        ]
        finish = "tool_calls"
    else:
        delta["content"] = reply.text
        finish = "stop"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}


def _sse(path: str, reply: Reply) -> Iterator[bytes]:
    if path == RESPONSES:
        for event in _responses_events(reply):
            yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
    else:
        for chunk in _chat_events(reply):
            yield f"data: {json.dumps(chunk)}\n\n".encode()
        yield b"data: [DONE]\n\n"


class MockOpenAI(Script[ModelRequest, Reply]):
    """Start with ``with MockOpenAI() as mock``; ``mock.base_url`` goes into the config.

    ``requests`` holds the conversation's requests (side requests left out).
    """

    def __init__(self) -> None:
        super().__init__(text("(mock: no rule matched this request)"))
        self._server: ThreadingHTTPServer | None = None

    def on_prompt(self, contains: str, reply: Reply) -> None:
        self.on(lambda r: contains in r.prompt, reply)

    def on_output(self, call_id: str, reply: Reply) -> None:
        self.on(lambda r: r.output is not None and r.output[0] == call_id, reply)

    def outputs(self, call_id: str) -> list[str]:
        """The outputs of ``call_id`` returned to the model, one per request that added it."""
        return [
            r.output[1] for r in self.requests if r.output is not None and r.output[0] == call_id
        ]

    def _reply(self, request: ModelRequest) -> Reply:
        if not request.body.get("tools"):
            return TITLE
        self._record(request)
        return self._answer(request)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> MockOpenAI:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?", 1)[0].rstrip("/")
                if path not in (RESPONSES, CHAT):
                    self.send_error(404)
                    return
                reply = mock._reply(ModelRequest(path, body))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in _sse(path, reply):
                    self.wfile.write(chunk)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, name="mock-openai", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
