"""A scriptable mock of the Anthropic Messages API for driving the real Claude Code CLI.

The server runs its own asyncio loop (tornado) on a background thread, so it keeps
answering while a test blocks its own loop or thread. Each request's reply is chosen
from THAT request's own messages by the first matching rule (in the order added), never
from a counter: the CLI sends side requests concurrently with the conversation.

Usage::

    with MockAnthropic() as mock:           # or the ``mock_api`` fixture
        mock.on_user("Pick", ask_user_question(Question("Which color?", "Color", ["Red", "Blue"])))
        mock.on_tool_result("AskUserQuestion", text("Thanks"))
        mock.on_user("fail", ApiError(400, "prompt is too long"))
        mock.on(lambda r: "x" in r.prompt_text, lambda r: text(r.prompt_text.upper()))
        ...  # run the wrapper with claude_wrapper.wrapper_env(home, mock.url)
        [result] = mock.tool_results("AskUserQuestion")
        assert '="Red"' in result.text and mock.unmatched == []

Observed here with claude-agent-acp 0.101.0 (Claude Code CLI 2.1.318, model
``claude-opus-5-5`` by default):

- Only ``POST /v1/messages?beta=true``, always ``stream: true``; headers carry
  ``x-api-key: dummy``, ``anthropic-version`` and an ``anthropic-beta`` list.
- Conversation requests: ``system`` is a list of text blocks, ``tools`` the built-in set
  (Agent, AskUserQuestion, Bash, Edit, Read, Skill, ToolSearch, Write, ... plus a
  ``DeferredToolPlaceholder``; no TodoWrite), ``thinking: {type: adaptive}``. The first
  prompt's user message starts with a ``<system-reminder>`` text block, and is followed by
  a ``role: "system"`` message (the environment block, which also lists the deferred
  tools). Hence ``new_messages``/``prompt_text`` rather than "the last message".
- After a failed turn (API error) the CLI merges the failed prompt into the next one:
  ``[{"text": "boom\\n"}, {"text": "again"}]``; ``prompt_text`` is the last block.
- Side requests (``MessagesRequest.kind``), answered with defaults unless a rule of that
  kind claims them; prompt rules never see them although they quote the conversation:
  * ``title``: once per session, right after the first request (sometimes during the
    second turn); no tools, ``output_config.format`` ``json_schema`` ``{title}``. Its
    answer surfaces as ``session_info_update {title}``.
  * ``suggestion``: after every turn but the first, a next-prompt prediction whose last
    user message starts with ``[SUGGESTION MODE:``. ``claude_wrapper.wrapper_env`` turns it off
    (``CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION=false``).
- Deferred tools (Task* with ``CLAUDE_CODE_ENABLE_TODO_TOOLS=1``, Web*, NotebookEdit, MCP
  tools ``mcp__<server>__<tool>``) are named in that system message only, one per line
  after "... to load tool schemas before calling them:" (``deferred_tools``); calling one
  unloaded fails validation. The model loads them with ``tool_search("TaskCreate", ...)``
  (input ``{"query": "select:A,B", "max_results": 5}``); the tool_result content is
  ``[{"type": "tool_reference", "tool_name": "TaskCreate"}, ...]`` and from the next
  request on they are in ``tools`` with ``defer_loading: true``.
- A tool result is a user message of ``tool_result`` blocks; ``tool_results`` resolves
  each one's tool name from the ``tool_use`` blocks in the same request.
- Errors: 400 -> the CLI tries 3-4 times, then 3-4 more times with ToolSearch disabled
  (all deferred tools declared in full, plus a system message saying so), then the turn
  fails; all within ~0.2 s. 5xx/529 with ``x-should-retry: false``: no retry. The
  message reaches ACP as ``agent_message_chunk`` "API Error: <status> <message>" and a
  -32603 error on ``session/prompt``. The next turn is normal again.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Union

import tornado.httpserver
import tornado.iostream
import tornado.netutil
import tornado.web

from .mock_model import Script

# ---------------------------------------------------------------- reply building blocks


@dataclass(frozen=True)
class Text:
    """A text block, streamed one word per ``text_delta``."""

    text: str


@dataclass(frozen=True)
class Thinking:
    """A thinking block (``thinking_delta`` words, then a ``signature_delta``)."""

    thinking: str
    signature: str = "mock-signature"


@dataclass(frozen=True)
class ToolUse:
    """A tool_use block; its input is streamed as ``input_json_delta`` pieces.

    Without an ``id`` each response gets a fresh one, so a rule that fires twice (a
    retried request, a repeated prompt) never repeats a tool_use id in the conversation.
    """

    name: str
    input: dict[str, Any]
    id: str = ""


Block = Union[Text, Thinking, ToolUse]

# How the CLI's next-prompt prediction side request begins.
SUGGESTION_MARK = "[SUGGESTION MODE:"
# What precedes the list of deferred tools (one name a line) in the environment message.
DEFERRED_MARK = "to load tool schemas before calling them:\n"


@dataclass(frozen=True)
class Reply:
    """One assistant message. ``stop_reason`` defaults to tool_use when a tool is called."""

    blocks: Sequence[Block]
    stop_reason: str | None = None
    # Seconds to wait between streamed events (for tests that act mid-stream).
    delay: float = 0.0

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.blocks) else "end_turn"


@dataclass(frozen=True)
class ApiError:
    """An HTTP error answer in the API's error format (e.g. 400 invalid_request_error)."""

    status: int
    message: str
    type: str = "invalid_request_error"
    # Sent as x-should-retry, which the client SDK obeys; true means retries with backoff.
    should_retry: bool = False


Answer = Union[Reply, ApiError]


def text(s: str) -> Reply:
    return Reply([Text(s)])


def tool_use(name: str, input: dict[str, Any], *, preamble: str | None = None) -> Reply:
    blocks: list[Block] = [Text(preamble)] if preamble else []
    return Reply([*blocks, ToolUse(name, input)])


@dataclass(frozen=True)
class Question:
    """One AskUserQuestion question; options are labels or (label, description) pairs."""

    question: str
    header: str
    options: Sequence[str | tuple[str, str]]
    multi_select: bool = False

    def to_input(self) -> dict[str, Any]:
        opts = [o if isinstance(o, tuple) else (o, f"Pick {o}") for o in self.options]
        return {
            "question": self.question,
            "header": self.header,
            "options": [{"label": label, "description": desc} for label, desc in opts],
            "multiSelect": self.multi_select,
        }


def ask_user_question(*questions: Question) -> Reply:
    return tool_use("AskUserQuestion", {"questions": [q.to_input() for q in questions]})


def tool_search(*tool_names: str) -> Reply:
    """Load deferred tools (Task*, mcp__server__tool) the way the model does."""
    return tool_use("ToolSearch", {"query": "select:" + ",".join(tool_names), "max_results": 5})


def task_create(subject: str, description: str = "") -> Reply:
    """TaskCreate (deferred: load it with ``tool_search`` first); the CLI numbers tasks 1, 2, ..."""
    return tool_use("TaskCreate", {"subject": subject, "description": description or subject})


def task_update(task_id: str, status: str) -> Reply:
    """TaskUpdate (deferred); status pending|in_progress|completed|deleted."""
    return tool_use("TaskUpdate", {"taskId": task_id, "status": status})


# ---------------------------------------------------------------- received requests


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    tool_name: str | None
    text: str
    is_error: bool


def _block_text(content: Any) -> str:
    """Flatten a message or tool_result content (string or list of blocks) into text."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if isinstance(block, dict):
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                parts.append(_block_text(block.get("content")))
            elif block.get("type") == "tool_reference":
                parts.append(str(block.get("tool_name", "")))
    return "\n".join(parts)


@dataclass(frozen=True)
class MessagesRequest:
    """One POST /v1/messages as received."""

    path: str
    query: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def tool_names(self) -> list[str]:
        return [str(t.get("name")) for t in self.body.get("tools") or []]

    @property
    def deferred_tools(self) -> list[str]:
        """The deferred tools this request names (the model loads them with ToolSearch)."""
        for message in self.messages:
            text = _block_text(message.get("content"))
            if DEFERRED_MARK in text:
                listing = text.split(DEFERRED_MARK, 1)[1].split("\n\n", 1)[0]
                return [name for name in listing.splitlines() if name]
        return []

    @property
    def new_messages(self) -> list[dict[str, Any]]:
        """The messages after the last assistant message: what this request adds.

        Not just the last message: the CLI appends a ``role: "system"`` message (the
        environment block) after the first prompt.
        """
        msgs = self.messages
        last_assistant = max(
            (i for i, m in enumerate(msgs) if m.get("role") == "assistant"), default=-1
        )
        return msgs[last_assistant + 1 :]

    @property
    def tool_results(self) -> list[ToolResult]:
        """The tool results this request returns, tool names resolved from its own messages."""
        names = {
            b.get("id"): b.get("name")
            for m in self.messages
            if m.get("role") == "assistant" and isinstance(m.get("content"), list)
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_use"
        }
        return [
            ToolResult(
                tool_use_id=str(b.get("tool_use_id")),
                tool_name=names.get(b.get("tool_use_id")),
                text=_block_text(b.get("content")),
                is_error=bool(b.get("is_error", False)),
            )
            for m in self.new_messages
            if m.get("role") == "user" and isinstance(m.get("content"), list)
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]

    @property
    def prompt_texts(self) -> list[str]:
        """The user's text blocks this request adds, ``<system-reminder>`` blocks left out."""
        texts: list[str] = []
        for m in self.new_messages:
            if m.get("role") != "user":
                continue
            content = m.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for b in blocks or []:
                if isinstance(b, dict) and b.get("type") == "text":
                    t = str(b.get("text", ""))
                    if not t.startswith("<system-reminder>"):
                        texts.append(t)
        return texts

    @property
    def prompt_text(self) -> str:
        """The newest prompt: the last of ``prompt_texts`` ('' when returning tool results).

        Only the last block, because after a failed turn (API error) the CLI merges the
        failed prompt into the next one: ``[{"text": "boom\\n"}, {"text": "again"}]``.
        """
        texts = self.prompt_texts
        return texts[-1] if texts and not self.tool_results else ""

    @property
    def kind(self) -> str:
        """``title``, ``suggestion`` (side requests) or ``main`` (the conversation)."""
        fmt = (self.body.get("output_config") or {}).get("format") or {}
        if not self.body.get("tools") and fmt.get("type") == "json_schema":
            return "title"
        if any(t.startswith(SUGGESTION_MARK) for t in self.prompt_texts[-1:]):
            return "suggestion"
        return "main"


Matcher = Callable[[MessagesRequest], bool]
Responder = Union[Answer, Callable[[MessagesRequest], Answer]]


def _with_fresh_ids(reply: Reply) -> Reply:
    blocks = [
        replace(b, id=f"toolu_mock_{uuid.uuid4().hex[:20]}")
        if isinstance(b, ToolUse) and not b.id
        else b
        for b in reply.blocks
    ]
    return replace(reply, blocks=blocks)


# Side requests get a harmless answer unless a rule claims them.
_SIDE_DEFAULTS: dict[str, Answer] = {
    "title": text(json.dumps({"title": "Mock chat"})),
    "suggestion": text(""),  # an empty suggestion: the CLI shows none
}


# ---------------------------------------------------------------- the server


class MockAnthropic(Script[MessagesRequest, Answer]):
    """The mock server. Start with ``with MockAnthropic() as m`` or ``start()``/``stop()``.

    ``requests`` holds every /v1/messages request, side requests included. Rules apply
    to one kind of request (``on(..., kind=...)``), so a prompt-substring rule never
    answers the side requests, which quote the whole conversation.
    """

    def __init__(self, model: str = "claude-mock") -> None:
        super().__init__(text("(mock: no rule matched this request)"))
        self.model = model
        self._other: list[tuple[str, str]] = []
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self.port = 0

    # ---- scripting

    def on_user(self, contains: str, answer: Responder) -> None:
        """Answer when the newest user prompt contains ``contains``."""
        self.on(lambda r: contains in r.prompt_text, answer)

    def on_tool_result(self, tool_name: str, answer: Responder, contains: str = "") -> None:
        """Answer when the request returns a result of ``tool_name`` whose text has ``contains``."""
        self.on(
            lambda r: any(t.tool_name == tool_name and contains in t.text for t in r.tool_results),
            answer,
        )

    def _choose(self, req: MessagesRequest) -> Answer:
        answer = self._answer(req, req.kind, _SIDE_DEFAULTS.get(req.kind))
        return _with_fresh_ids(answer) if isinstance(answer, Reply) else answer

    # ---- inspection (thread-safe snapshots)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def main_requests(self) -> list[MessagesRequest]:
        return [r for r in self.requests if r.kind == "main"]

    @property
    def other_requests(self) -> list[tuple[str, str]]:
        """(method, uri) of every request to another path (answered 404)."""
        with self._lock:
            return list(self._other)

    def tool_results(self, tool_name: str) -> list[ToolResult]:
        """Results of ``tool_name`` returned to the model, in order (one per request)."""
        return [t for r in self.main_requests for t in r.tool_results if t.tool_name == tool_name]

    def _record_other(self, method: str, uri: str) -> None:
        with self._lock:
            self._other.append((method, uri))

    # ---- lifecycle

    def start(self) -> MockAnthropic:
        ready = threading.Event()
        errors: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._run, args=(ready, errors), name="mock-anthropic", daemon=True
        )
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("mock Anthropic server did not start")
        if errors:
            raise errors[0]
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop_event is not None:
            self._loop.call_soon_threadsafe(self._stop_event.set)
        if self._thread is not None:
            self._thread.join(10)
        self._thread = None

    def __enter__(self) -> MockAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self, ready: threading.Event, errors: list[BaseException]) -> None:
        try:
            asyncio.run(self._serve(ready))
        except BaseException as e:  # surfaced to start() when startup fails
            errors.append(e)
            ready.set()

    async def _serve(self, ready: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        app = tornado.web.Application(
            [(r"/v1/messages", _MessagesHandler, {"mock": self})],
            default_handler_class=_NotFoundHandler,
            default_handler_args={"mock": self},
        )
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        server = tornado.httpserver.HTTPServer(app)
        server.add_sockets(sockets)
        self.port = sockets[0].getsockname()[1]
        ready.set()
        await self._stop_event.wait()
        server.stop()
        await server.close_all_connections()


# ---------------------------------------------------------------- wire format


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def _words(s: str) -> list[str]:
    """Split keeping separators, so the deltas concatenate back to ``s``."""
    pieces: list[str] = []
    for i, word in enumerate(s.split(" ")):
        pieces.append(word if i == 0 else " " + word)
    return [p for p in pieces if p] or [s]


def _json_pieces(value: dict[str, Any]) -> list[str]:
    raw = json.dumps(value)
    step = max(1, len(raw) // 3)
    return [raw[i : i + step] for i in range(0, len(raw), step)]


def _usage(req: MessagesRequest, reply: Reply) -> dict[str, int]:
    return {
        "input_tokens": max(1, len(json.dumps(req.messages)) // 4),
        "output_tokens": max(1, sum(len(str(b)) for b in reply.blocks) // 4),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _message(req: MessagesRequest, reply: Reply, model: str, *, final: bool) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if final:
        for b in reply.blocks:
            if isinstance(b, Text):
                content.append({"type": "text", "text": b.text})
            elif isinstance(b, Thinking):
                content.append(
                    {"type": "thinking", "thinking": b.thinking, "signature": b.signature}
                )
            else:
                content.append({"type": "tool_use", "id": b.id, "name": b.name, "input": b.input})
    usage = _usage(req, reply)
    if not final:
        usage["output_tokens"] = 1
    return {
        "id": f"msg_mock_{uuid.uuid4().hex[:20]}",
        "type": "message",
        "role": "assistant",
        "model": req.body.get("model") or model,
        "content": content,
        "stop_reason": reply.effective_stop_reason if final else None,
        "stop_sequence": None,
        "usage": usage,
    }


def sse_events(req: MessagesRequest, reply: Reply, model: str = "claude-mock") -> Iterator[str]:
    """The streamed form of ``reply``, event by event, as the real API sends it."""
    yield _sse(
        "message_start",
        {"type": "message_start", "message": _message(req, reply, model, final=False)},
    )
    yield _sse("ping", {"type": "ping"})
    for index, b in enumerate(reply.blocks):
        start: dict[str, Any]
        deltas: list[dict[str, Any]]
        if isinstance(b, Text):
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": w} for w in _words(b.text)]
        elif isinstance(b, Thinking):
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": w} for w in _words(b.thinking)]
            deltas.append({"type": "signature_delta", "signature": b.signature})
        else:
            start = {"type": "tool_use", "id": b.id, "name": b.name, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p} for p in _json_pieces(b.input)
            ]
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        for d in deltas:
            yield _sse(
                "content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}
            )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.effective_stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": _usage(req, reply)["output_tokens"]},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


def _error_body(status_type: str, message: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": status_type, "message": message},
        "request_id": f"req_mock_{uuid.uuid4().hex[:20]}",
    }


class _MessagesHandler(tornado.web.RequestHandler):
    def initialize(self, mock: MockAnthropic) -> None:
        self.mock = mock

    async def post(self) -> None:
        try:
            body = json.loads(self.request.body or b"{}")
        except ValueError:
            self._error(ApiError(400, "request body is not JSON"))
            return
        req = MessagesRequest(
            path=self.request.path,
            query=self.request.query,
            headers=dict(self.request.headers),
            body=body,
            received_at=time.time(),
        )
        self.mock._record(req)
        answer = self.mock._choose(req)
        if isinstance(answer, ApiError):
            self._error(answer)
            return
        self.set_header("request-id", f"req_mock_{uuid.uuid4().hex[:20]}")
        if not body.get("stream"):
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps(_message(req, answer, self.mock.model, final=True)))
            return
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        try:
            for chunk in sse_events(req, answer, self.mock.model):
                self.write(chunk)
                await self.flush()
                if answer.delay:
                    await asyncio.sleep(answer.delay)
        except tornado.iostream.StreamClosedError:
            return  # the client went away (e.g. a cancelled turn)
        self.finish()

    def _error(self, err: ApiError) -> None:
        self.set_status(err.status)
        self.set_header("Content-Type", "application/json")
        self.set_header("x-should-retry", "true" if err.should_retry else "false")
        self.finish(json.dumps(_error_body(err.type, err.message)))


class _NotFoundHandler(tornado.web.RequestHandler):
    def initialize(self, mock: MockAnthropic) -> None:
        self.mock = mock

    def prepare(self) -> None:
        self.mock._record_other(self.request.method or "", self.request.uri or "")
        self.set_status(404)
        self.set_header("Content-Type", "application/json")
        msg = f"mock: no route for {self.request.method} {self.request.path}"
        self.finish(json.dumps(_error_body("not_found_error", msg)))
