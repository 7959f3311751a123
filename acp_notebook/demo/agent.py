"""The bundled demo ACP agent: a real agent process with scripted, deterministic turns.

Run it with ``python -m acp_notebook.demo.agent``. It speaks JSON-RPC 2.0 as one JSON object
per line on stdin/stdout and logs to stderr. A keyword in the prompt picks the behaviour (see
``BEHAVIOURS``); anything else gets a short Markdown greeting. ``ACP_DEMO_DELAY`` (seconds,
default 0.02) paces the chunked replies so a person can watch them stream. It accepts
images and embedded resources (not with ``ACP_DEMO_TEXT_ONLY=1``) and lists what it
received before its reply. With ``ACP_DEMO_COMMANDS=1`` it offers some behaviours as slash
commands; it takes a prompt sent during a turn into that turn (prompt queueing, as claude's
wrapper advertises it).

Sessions are kept on disk (``demo_store``), so another agent process can list them
(``session/list``) and load one (``session/load`` replays its conversation first); it
closes (``session/close``), deletes (``session/delete``) and forks (``session/fork``) them.
With ``ACP_DEMO_LOGIN=<file>`` it needs a sign-in first (``login.py``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import sys
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..agent import jsonrpc
from ..agent.jsonrpc import Notification, Request, Response, RpcError
from ..wire.attachment_blocks import resource_name
from . import login as demo_login
from . import store as demo_store
from .store import Record

if TYPE_CHECKING:  # the MCP client loads only when a turn uses the notebook tools
    import mcp_types
    from mcp import Client

Json = dict[str, Any]

PROTOCOL_VERSION = 1
CONTEXT_SIZE = 200_000
STREAM_BATCH = 4096
# What a stored session keeps of one streamed answer (the benchmarks stream megabytes).
MAX_STORED_STREAM = 65536
# ACP_DEMO_LIST_PAGE: sessions per session/list page (tests page with a few).
LIST_PAGE = int(os.environ.get("ACP_DEMO_LIST_PAGE") or 100)
MODES = (("default", "Default"), ("acceptEdits", "Accept edits"), ("plan", "Plan"))
PERMISSION_OPTIONS = [
    {"optionId": "allow-once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]
TEXT_ONLY = os.environ.get("ACP_DEMO_TEXT_ONLY") == "1"
STDIO_MCP = os.environ.get("ACP_DEMO_STDIO_MCP") == "1"
# ACP_DEMO_COMMANDS=1: offer slash commands after session/new (off, the events of a new
# session stay as tests pin them).
COMMANDS_OFFERED = os.environ.get("ACP_DEMO_COMMANDS") == "1"
# What the login mode (ACP_DEMO_LOGIN) answers with auth_required until signed in.
NEEDS_SIGN_IN = frozenset({"session/new", "session/load", "session/resume", "session/prompt"})
# Names every keyword (a test checks it), so a newcomer can find each of them.
GREETING = (
    "Hello from the **demo agent**. You said: {prompt}\n\n"
    "I am scripted: a keyword in your prompt picks what I do.\n\n"
    "- `ask-user`: a question form; `ask-claude`, `ask-claude-multi`: Claude's choice questions\n"
    "- `permission`: I ask before I run `ls`\n"
    "- `plan`: a three-step plan; `think`: a thought, then an answer\n"
    "- `agentic`: I read a file, run the tests, edit a file and answer with code "
    "(its **Insert cell below** puts the code into your notebook)\n"
    "- `tool`: a file edit shown as a diff; `terminal 5`: a command's live output\n"
    "- `slow 30`: a 30-second answer, to try **Stop**; `stream 2000`: a long answer, fast\n"
    "- `notebook`: I read your variables and ask to run code; `edit`: I add and run a cell\n"
    "- `read-file NAME`, `edit-file NAME`: a file as your editor has it, and an edit to review\n"
    "- `url-login`: a sign-in page to open\n\n"
    "For tests: `history 100`, `fs`, `ask-url`, `ask-withdraw`."
)


def log(message: str) -> None:
    print(f"demo agent: {message}", file=sys.stderr, flush=True)


def compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def prompt_text(blocks: list[Any]) -> str:
    return "\n".join(
        block["text"]
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def received(blocks: list[Any]) -> str:
    """What the prompt carried besides text, one line per block, each by its name (the
    demo's echo of attachments, so tests and people can see what reached the agent)."""
    lines = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "image":
            try:
                data = base64.b64decode(str(block.get("data")), validate=True)
            except ValueError:
                data = b""
            what = str(block.get("mimeType")).removeprefix("image/").upper()
            if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
                width, height = (int.from_bytes(data[at : at + 4], "big") for at in (16, 20))
                what = f"PNG {width}×{height}"
            lines.append(f"- image: {len(data):,} bytes, {what}")
        elif kind == "resource":
            resource = block.get("resource") or {}
            text = str(resource.get("text", ""))
            first = text.splitlines()[0] if text else "empty"
            name = resource_name(str(resource.get("uri")))
            lines.append(f"- {name}: {first} ({len(text):,} characters)")
        elif kind == "resource_link":
            name = block.get("name") or resource_name(str(block.get("uri")))
            size = block.get("size")
            lines.append(
                f"- {name}: a link" + (f" ({size:,} bytes)" if isinstance(size, int) else "")
            )
    return "Received:\n" + "\n".join(lines) if lines else ""


def session_state(mode: str) -> Json:
    """What session/new, session/load and session/resume say of a session's mode."""
    available = [{"id": mode_id, "name": name} for mode_id, name in MODES]
    modes = {"currentModeId": mode, "availableModes": available}
    return {"modes": modes, "configOptions": config_options(mode)}


def config_options(mode: str) -> list[Json]:
    return [
        {
            "id": "mode",
            "name": "Mode",
            "category": "mode",
            "type": "select",
            "currentValue": mode,
            "options": [{"value": mode_id, "name": name} for mode_id, name in MODES],
        }
    ]


def custom_answer_field(question_id: str) -> Json:
    return {
        "type": "string",
        "title": "Other",
        "description": "Type your own answer, or add a note…",
        "_meta": {
            "_askUserQuestionCustomAnswer": {"questionId": question_id, "isCustomAnswer": True}
        },
    }


def text_content(text: str) -> Json:
    """A tool call's content block of plain text."""
    return {"type": "content", "content": {"type": "text", "text": text}}


def choices(*options: tuple[str, str]) -> list[Json]:
    return [{"const": label, "title": label, "description": text} for label, text in options]


ASK_USER_SCHEMA: Json = {
    "type": "object",
    "required": ["question_0"],
    "properties": {
        "question_0": {
            "type": "string",
            "title": "Pick a color",
            "description": "Your favourite",
            "oneOf": [
                {"const": "red", "title": "Red", "description": "Warm"},
                {"const": "green", "title": "Green", "description": "Calm"},
                {"const": "blue", "title": "Blue", "description": "Cool"},
            ],
        },
        "note": {"type": "string", "title": "A note", "description": "Anything to add?"},
        "confirm": {"type": "boolean", "title": "Confirm", "default": False},
        "count": {
            "type": "integer",
            "title": "How many",
            "minimum": 1,
            "maximum": 10,
            "default": 3,
        },
    },
}
COLOR: Json = {
    "type": "string",
    "title": "Color",
    "oneOf": choices(("Red", "Choose the color red"), ("Blue", "Choose the color blue")),
}
CLAUDE_SINGLE_QUESTION = "Which color do you prefer?"
CLAUDE_SINGLE_SCHEMA: Json = {
    "type": "object",
    "properties": {
        "question_0": COLOR,
        "question_0_custom": custom_answer_field("question_0"),
    },
}
CLAUDE_MULTI_SCHEMA: Json = {
    "type": "object",
    "properties": {
        "question_0": {**COLOR, "description": CLAUDE_SINGLE_QUESTION},
        "question_0_custom": custom_answer_field("question_0"),
        "question_1": {
            "type": "array",
            "title": "Toppings",
            "description": "Which toppings do you want?",
            "items": {
                "anyOf": choices(
                    ("Cheese", "Melted on top"),
                    ("Olives", "Black olives"),
                    ("Mushrooms", "Sliced mushrooms"),
                )
            },
        },
        "question_1_custom": custom_answer_field("question_1"),
    },
}
# The slash commands the demo offers (available_commands_update); each is a behaviour.
COMMANDS: list[Json] = [
    {"name": "slow", "description": "A five-second answer, to queue prompts behind"},
    {"name": "plan", "description": "Show a plan"},
    {
        "name": "stream",
        "description": "Stream a long answer",
        "input": {"hint": "how many chunks (default 1000)"},
    },
    {"name": "think", "description": "Think, then answer"},
]
WITHDRAW_SCHEMA: Json = {
    "type": "object",
    "properties": {"answer": {"type": "string", "title": "Answer", "enum": ["yes", "no"]}},
}


@dataclass
class Session:
    record: Record
    turn: asyncio.Task[str] | None = None
    # Prompts sent during the running turn (prompt queueing): it reads them as it goes.
    steers: list[str] = field(default_factory=list)
    # The session's MCP servers; in memory only (a server's secret never goes to disk).
    mcp_servers: list[Json] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.record.session_id


class DemoAgent:
    """One connection: dispatches inbound lines and sends requests of its own to the client."""

    def __init__(self, out_fd: int, delay: float) -> None:
        self.inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.delay = delay
        self.form_advertised = False
        self.turns = 0
        self._out_fd = out_fd
        self._closed = False
        self._next_request_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._sessions: dict[str, Session] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        # ACP_DEMO_LOGIN: the login mode (login.py); None: no sign-in is needed.
        path = demo_login.LOGIN_FILE
        self.login = demo_login.Login(path) if path else None
        self._requests: dict[str, Callable[[Json], Awaitable[Json]]] = {
            "authenticate": self._authenticate,
            "logout": self._logout,
            "initialize": self._initialize,
            "session/new": self._new_session,
            "session/load": self._load_session,
            "session/resume": self._resume_session,
            "session/list": self._list_sessions,
            "session/close": self._close_session,
            "session/delete": self._delete_session,
            "session/fork": self._fork_session,
            "session/set_mode": self._set_mode,
            "session/set_config_option": self._set_config_option,
            "session/prompt": self._prompt,
        }

    # -- output ---------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        # Unbuffered and blocking on purpose: a slow client applies back-pressure, and
        # stdin keeps draining on its own thread, so the two pipes cannot deadlock.
        if self._closed:
            return
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._out_fd, view) :]
        except BrokenPipeError:
            log("the client stopped reading stdout; shutting down")
            self._closed = True
            self.inbox.put_nowait(None)

    def notify(self, method: str, params: Json) -> None:
        self.write(jsonrpc.encode_notification(method, params))

    async def request(self, method: str, params: Json) -> Any:
        """Send a request to the client and wait for its result (raises RpcError on error)."""
        request_id = self._next_request_id
        self._next_request_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.write(jsonrpc.encode_request(request_id, method, params))
        try:
            return await future
        except asyncio.CancelledError:
            # Withdraw it like the TS-SDK agents do; a late answer then finds nothing pending.
            self.notify("$/cancel_request", {"requestId": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)

    # -- input ----------------------------------------------------------------------------

    def feed(self, line: bytes) -> None:
        message = jsonrpc.parse(line)
        if isinstance(message, Request):
            task = asyncio.ensure_future(self._serve(message.id, message.method, message.params))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif isinstance(message, Notification):
            # After the requests before it have started: a session/cancel right behind its
            # session/prompt (in the same read) then finds the turn it cancels.
            asyncio.get_running_loop().call_soon(self._notification, message.method, message.params)
        elif isinstance(message, Response):
            self._response(message)
        elif message is not None:
            log(f"skipping a line that is not JSON-RPC ({message.reason}): {message.line!r}")

    def _response(self, message: Response) -> None:
        future = self._pending.get(message.id) if isinstance(message.id, int) else None
        if future is None or future.done():
            log(f"ignoring a response to request {message.id!r} (withdrawn or unknown)")
        elif message.error is not None:
            future.set_exception(RpcError.from_error(message.error))
        else:
            future.set_result(message.result)

    def _notification(self, method: str, params: Any) -> None:
        if method == "session/cancel" and isinstance(params, dict):
            session = self._find_session(params)
            if session is not None and session.turn is not None:
                session.turn.cancel()
        # Anything else (`initialized`, `$/cancel_request`, `_…` extensions) needs no action.

    async def _serve(self, request_id: jsonrpc.Id, method: str, params: Any) -> None:
        handler = self._requests.get(method)
        try:
            if handler is None:
                raise RpcError(-32601, f"Method not found: {method}")
            if method in NEEDS_SIGN_IN and self.login is not None and not self.login.signed_in:
                raise RpcError(demo_login.AUTH_REQUIRED, "Authentication required")
            if params is None:
                params = {}
            if not isinstance(params, dict):
                raise RpcError(-32602, "params must be an object")
            result = await handler(params)
        except RpcError as error:
            self.write(jsonrpc.encode_error(request_id, error.code, error.message))
        except Exception as error:
            log(f"{method} failed: {error!r}")
            self.write(jsonrpc.encode_error(request_id, -32603, f"Internal error: {error}"))
        else:
            self.write(jsonrpc.encode_result(request_id, result))

    # -- methods --------------------------------------------------------------------------

    async def _initialize(self, params: Json) -> Json:
        capabilities = params.get("clientCapabilities")
        elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
        self.form_advertised = isinstance(elicitation, dict) and elicitation.get("form") is not None
        auth = capabilities.get("auth") if isinstance(capabilities, dict) else None
        terminal = isinstance(auth, dict) and auth.get("terminal") is True
        result: Json = {
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": True,
                # ACP_DEMO_TEXT_ONLY=1: an agent that takes text only (tests its refusals).
                "promptCapabilities": {
                    "image": not TEXT_ONLY,
                    "audio": False,
                    "embeddedContext": not TEXT_ONLY,
                },
                "sessionCapabilities": {
                    "list": {},
                    "resume": {},
                    "close": {},
                    "delete": {},
                    "fork": {},
                },
                # ACP_DEMO_STDIO_MCP=1: an agent without HTTP MCP (gets the stdio proxy).
                "mcpCapabilities": {"http": not STDIO_MCP, "sse": False},
                # Like claude's wrapper: a prompt during a turn steers it.
                "_meta": {"claudeCode": {"promptQueueing": True}},
            },
            "agentInfo": {"name": "acp-notebook-demo", "title": "Demo agent", "version": "0.1.0"},
            "authMethods": [],
        }
        if self.login is not None:
            # A terminal method only for a client that runs them, as ACP asks.
            methods = demo_login.AUTH_METHODS
            result["authMethods"] = [m for m in methods if terminal or m.get("type") != "terminal"]
            result["agentCapabilities"]["auth"] = {"logout": {}}
        return result

    async def _authenticate(self, params: Json) -> Json:
        method = params.get("methodId")
        if self.login is None or method != "demo-agent":
            raise RpcError(-32602, f"no sign-in method {method!r} to authenticate with")
        self.login.sign_in("agent")
        return {}

    async def _logout(self, params: Json) -> Json:
        if self.login is None:
            raise RpcError(-32601, "Method not found: logout")
        self.login.sign_out()
        return {}

    async def _new_session(self, params: Json) -> Json:
        cwd = params.get("cwd")
        if not isinstance(cwd, str) or not cwd:
            raise RpcError(-32602, "session/new needs cwd (an absolute path)")
        session = self._register(Record(f"demo-{uuid.uuid4().hex}", cwd), params)
        demo_store.save(session.record)
        if COMMANDS_OFFERED:  # after the answer, as agents do
            update = {"sessionUpdate": "available_commands_update", "availableCommands": COMMANDS}
            params = {"sessionId": session.id, "update": update}
            asyncio.get_running_loop().call_soon(self.notify, "session/update", params)
        return {"sessionId": session.id, **session_state(session.record.mode)}

    def _stored(self, params: Json) -> Session:
        session_id, cwd = params.get("sessionId"), params.get("cwd")
        if not isinstance(cwd, str) or not cwd:
            raise RpcError(-32602, "needs cwd (an absolute path)")
        record = demo_store.load(session_id) if isinstance(session_id, str) else None
        if record is None:
            raise RpcError(-32002, f"no stored session {session_id!r}")
        record.cwd = cwd
        return self._register(record, params)

    def _register(self, record: Record, params: Json) -> Session:
        servers = params.get("mcpServers")
        servers = [s for s in servers if isinstance(s, dict)] if isinstance(servers, list) else []
        session = Session(record, mcp_servers=servers)
        self._sessions[session.id] = session
        return session

    async def _load_session(self, params: Json) -> Json:
        session = self._stored(params)
        # The whole conversation first, as ACP asks: the client rebuilds its history from it.
        for update in session.record.updates:
            self.notify("session/update", {"sessionId": session.id, "update": update})
        return session_state(session.record.mode)

    async def _resume_session(self, params: Json) -> Json:
        return session_state(self._stored(params).record.mode)

    async def _list_sessions(self, params: Json) -> Json:
        cwd, cursor = params.get("cwd"), params.get("cursor")
        start = int(cursor) if isinstance(cursor, str) and cursor.isdigit() else 0
        records = demo_store.listing(cwd if isinstance(cwd, str) else None)
        result: Json = {"sessions": [r.info() for r in records[start : start + LIST_PAGE]]}
        if start + LIST_PAGE < len(records):
            result["nextCursor"] = str(start + LIST_PAGE)
        return result

    async def _close_session(self, params: Json) -> Json:
        session = self._session(params)
        if session.turn is not None:
            session.turn.cancel()
        del self._sessions[session.id]
        return {}

    async def _delete_session(self, params: Json) -> Json:
        session_id = params.get("sessionId")
        if not isinstance(session_id, str) or not demo_store.delete(session_id):
            raise RpcError(-32002, f"no stored session {session_id!r}")
        self._sessions.pop(session_id, None)
        return {}

    async def _fork_session(self, params: Json) -> Json:
        # The conversation under a new id, open in this process like a new session.
        live = self._find_session(params)
        session_id, cwd = params.get("sessionId"), params.get("cwd")
        source = (
            live.record
            if live
            else demo_store.load(session_id)
            if isinstance(session_id, str)
            else None
        )
        if source is None or not isinstance(cwd, str) or not cwd:
            raise RpcError(-32002, f"no stored session {session_id!r} (or no cwd)")
        record = Record(f"demo-{uuid.uuid4().hex}", cwd, source.title, source.mode)
        record.updates = list(source.updates)
        session = self._register(record, params)
        demo_store.save(record)
        return {"sessionId": session.id, **session_state(record.mode)}

    def _find_session(self, params: Json) -> Session | None:
        session_id = params.get("sessionId")
        return self._sessions.get(session_id) if isinstance(session_id, str) else None

    def _session(self, params: Json) -> Session:
        session = self._find_session(params)
        if session is None:
            raise RpcError(-32602, f"unknown session: {params.get('sessionId')!r}")
        return session

    def _change_mode(self, session: Session, mode: Any) -> None:
        if mode not in {mode_id for mode_id, _ in MODES}:
            raise RpcError(-32602, f"unknown mode: {mode!r}")
        session.record.mode = mode
        for update in (
            {"sessionUpdate": "current_mode_update", "currentModeId": mode},
            {"sessionUpdate": "config_option_update", "configOptions": config_options(mode)},
        ):
            self.notify("session/update", {"sessionId": session.id, "update": update})

    async def _set_mode(self, params: Json) -> Json:
        self._change_mode(self._session(params), params.get("modeId"))
        return {}

    async def _set_config_option(self, params: Json) -> Json:
        session = self._session(params)
        if params.get("configId") != "mode":
            raise RpcError(-32602, f"unknown config option: {params.get('configId')!r}")
        self._change_mode(session, params.get("value"))
        return {"configOptions": config_options(session.record.mode)}

    async def _prompt(self, params: Json) -> Json:
        session = self._session(params)
        blocks = params.get("prompt")
        if not isinstance(blocks, list):
            raise RpcError(-32602, "session/prompt needs prompt (a list of content blocks)")
        if session.turn is not None:
            # Steering: the running turn reads it; this prompt is answered when it ends.
            session.steers.append(prompt_text(blocks))
            await asyncio.wait([session.turn])
            return {"stopReason": "end_turn"}
        self.turns += 1
        text = prompt_text(blocks)
        titled = not session.record.title
        if titled:
            session.record.title = demo_store.title_of(text)
        session.record.add(
            {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}}
        )
        turn = Turn(self, session, self.turns, text, prompt_text(blocks[-1:]), received(blocks))
        task = asyncio.ensure_future(turn.run())
        session.turn = task
        try:
            stop_reason = await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise  # the agent itself is shutting down
            stop_reason = "cancelled"
        finally:
            session.turn = None
            session.steers.clear()  # any the turn did not read are answered with it
            if titled:  # after the first turn, as claude's wrapper names a session
                turn.update({"sessionUpdate": "session_info_update", "title": session.record.title})
            turn.usage()
            demo_store.save(session.record)
        return {"stopReason": stop_reason}


@dataclass(eq=False)
class Turn:
    """One session/prompt: the helpers the scripted behaviours are written with."""

    agent: DemoAgent
    session: Session
    number: int
    text: str
    # What the person typed (the last text block): the behaviour's keywords.
    typed: str
    # Attachments the agent says it received, before the behaviour's answer.
    received: str
    tool_call_id: str = field(init=False)
    tool_open: bool = False
    _messages: int = 0

    def __post_init__(self) -> None:
        self.tool_call_id = f"call-{self.number}"

    async def run(self) -> str:
        if self.received:
            await self.say(self.received)
        # Keywords come from what the person typed (the last text block), never from an
        # attachment sent as text (a DataFrame's notebook:// URI would say "notebook").
        tried = (*BEHAVIOURS, DEFAULT)
        behaviour, match = next((b, m) for p, b in tried if (m := p.search(self.typed)))
        await behaviour(self, match)
        return "end_turn"

    def path(self, name: str) -> str:
        return os.path.join(self.session.record.cwd, name)

    def message_id(self) -> str:
        self._messages += 1
        return f"msg-{self.number}-{self._messages}"

    def update(self, update: Json) -> None:
        self.session.record.add(update)
        self.agent.notify("session/update", {"sessionId": self.session.id, "update": update})

    async def pace(self) -> None:
        await asyncio.sleep(self.agent.delay)

    async def chunks(
        self, pieces: Iterable[str], kind: str = "agent_message_chunk", delay: float | None = None
    ) -> None:
        message_id = self.message_id()
        for piece in pieces:
            content = {"type": "text", "text": piece}
            self.update({"sessionUpdate": kind, "messageId": message_id, "content": content})
            await asyncio.sleep(self.agent.delay if delay is None else delay)
            while self.session.steers:  # a prompt steered into this turn
                steer = self.session.steers.pop(0)
                content = {"type": "text", "text": f"(steered: {steer}) "}
                self.update({"sessionUpdate": kind, "messageId": message_id, "content": content})

    async def say(self, text: str) -> None:
        # Word by word, in pieces that concatenate back to exactly ``text``.
        await self.chunks(piece for piece in re.findall(r"\S*\s*", text) if piece)

    def tool_call(self, title: str, kind: str, **fields: Any) -> Json:
        """Open a tool call; what a permission request says of it."""
        self.tool_open = True
        call = {"toolCallId": self.tool_call_id, "title": title, "kind": kind}
        self.update({"sessionUpdate": "tool_call", **call, "status": "pending", **fields})
        return {**call, **fields}

    def edit(self, title: str, path: str, old: str, new: str, **fields: Any) -> None:
        """A tool call that changes ``path`` from ``old`` to ``new`` (its diff)."""
        diff = {"type": "diff", "path": path, "oldText": old, "newText": new}
        self.tool_call(
            title, "edit", locations=[{"path": path, "line": 1}], content=[diff], **fields
        )

    def tool_status(self, status: str, **fields: Any) -> None:
        self.tool_open = status not in ("completed", "failed")
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": self.tool_call_id,
                "status": status,
                **fields,
            }
        )

    async def ask(self, method: str, params: Json) -> Any:
        """Ask the client; a session/cancel while waiting fails the open tool call."""
        if params.get("mode") == "form" and not self.agent.form_advertised:
            log("the client did not advertise elicitation.form; asking anyway to test its refusal")
        try:
            return await self.agent.request(method, params)
        except asyncio.CancelledError:
            if self.tool_open:
                self.tool_status("failed")
            raise

    async def permission(self, title: str, kind: str, raw_input: Json) -> str | None:
        """Open a tool call and ask to run it: the option chosen, or None when cancelled."""
        call = self.tool_call(title, kind, rawInput=raw_input)
        params = {"sessionId": self.session.id, "toolCall": call, "options": PERMISSION_OPTIONS}
        result = await self.ask("session/request_permission", params)
        outcome = result.get("outcome") if isinstance(result, dict) else None
        if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
            return None
        return str(outcome["optionId"]) if outcome.get("optionId") else None

    async def elicit(self, params: Json) -> str:
        """Send elicitation/create; the answer as compact JSON, or ``error <code>``."""
        try:
            result = await self.ask("elicitation/create", {"sessionId": self.session.id, **params})
        except RpcError as error:
            return f"error {error.code}"
        return compact(result)

    def usage(self) -> None:
        self.update(
            {
                "sessionUpdate": "usage_update",
                "used": 1000 * self.number + 500,
                "size": CONTEXT_SIZE,
                # No cost: the demo is free, and a made-up bill would teach the wrong thing.
            }
        )


Behaviour = Callable[[Turn, "re.Match[str]"], Awaitable[None]]
# Tried in the order they are defined: the first whose keyword the prompt holds runs.
BEHAVIOURS: list[tuple[re.Pattern[str], Behaviour]] = []
COUNT = r"(?:\s+(\d+))?"  # "stream 500": how much
MAX_SLOW_SECONDS = 600


def behaviour(pattern: str = "") -> Callable[[Behaviour], Behaviour]:
    """Adds a behaviour, its keyword ``pattern`` by default its name ("ask_url": "ask-url")."""

    def add(function: Behaviour) -> Behaviour:
        name = pattern or function.__name__.replace("_", "-")
        # Hyphens count as part of a word: `ask-user` does not match in `ask-user-withdraw`.
        BEHAVIOURS.append((re.compile(rf"(?<![\w-])(?:{name})(?![\w-])", re.IGNORECASE), function))
        return function

    return add


@behaviour(rf"stream{COUNT}")
async def stream(turn: Turn, match: re.Match[str]) -> None:
    count = int(match.group(1) or 1000)
    # Benchmarks send 200,000+ chunks: every line is one preformatted string, written in batches.
    message_id = turn.message_id()
    head = (
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'
        f'{json.dumps(turn.session.id)},"update":{{"sessionUpdate":"agent_message_chunk",'
        f'"messageId":{json.dumps(message_id)},"content":{{"type":"text","text":"'
    )
    tail = ' "}}}}\n'
    for start in range(0, count, STREAM_BATCH):
        batch = "".join(
            [f"{head}{i}{tail}" for i in range(start, min(count, start + STREAM_BATCH))]
        )
        turn.agent.write(batch.encode())
        await asyncio.sleep(0)  # let session/cancel and responses in between batches
    # Stored as one chunk, its start only.
    text = "".join(f"{i} " for i in range(min(count, MAX_STORED_STREAM // 8)))
    content = {"type": "text", "text": text[:MAX_STORED_STREAM]}
    update = {"sessionUpdate": "agent_message_chunk", "messageId": message_id, "content": content}
    turn.session.record.add(update)


@behaviour(rf"history{COUNT}")
async def history(turn: Turn, match: re.Match[str]) -> None:
    """About N events that stay separate in the history: in groups of 25, a tool call with
    23 progress updates and its completion, then a one-chunk message of its own."""
    count = int(match.group(1) or 1000)
    for group in range(max(1, count // 25)):
        turn.tool_call_id = f"call-{turn.number}-{group}"
        turn.tool_call(f"Step {group}", "execute", rawInput={"command": f"step {group}"})
        for tick in range(23):
            turn.tool_status("in_progress", content=[text_content(f"{tick} of 23")])
        turn.tool_status("completed")
        await turn.chunks([f"step {group} done"])


@behaviour(rf"agentic{COUNT}")
async def agentic(turn: Turn, match: re.Match[str]) -> None:
    """A turn like a coding agent's: a thought, a read, a command, an edit, an answer."""
    lines = int(match.group(1) or 20)
    await turn.chunks(["Reading the file first. ", "Then the edit."], "agent_thought_chunk")
    path = turn.path(f"module_{turn.number}.py")
    turn.tool_call(f"Read module_{turn.number}.py", "read", locations=[{"path": path}])
    turn.tool_status("completed", content=[text_content(f"def f{turn.number}():\n    pass\n")])
    turn.tool_call_id = f"call-{turn.number}-run"
    turn.tool_call("Run `pytest -q`", "execute", rawInput={"command": "pytest -q"})
    turn.tool_status("completed", rawOutput={"stdout": "3 passed in 0.01s", "exit_code": 0})
    turn.tool_call_id = f"call-{turn.number}-edit"
    old = "".join(f"value_{i} = {i}\n" for i in range(lines))
    new = "".join(f"value_{i} = {i * 2 if i % 3 == 0 else i}\n" for i in range(lines))
    turn.edit(f"Edit module_{turn.number}.py", path, old, new)
    turn.tool_status("completed")
    await turn.say(
        f"Turn {turn.number}: doubled every third value in `module_{turn.number}.py`.\n\n"
        "```python\nvalue_0 = 0\nvalue_3 = 6\n```\n\n- tests pass\n- nothing else changed"
    )


@behaviour(rf"slow{COUNT}")
async def slow(turn: Turn, match: re.Match[str]) -> None:
    """Ten ticks a second for N seconds (5 by default, at most 600): long enough to press
    Stop, or to queue prompts behind."""
    seconds = min(int(match.group(1) or 5), MAX_SLOW_SECONDS)
    await turn.chunks((f"tick {i} " for i in range(10 * seconds)), delay=0.1)


@behaviour()
async def think(turn: Turn, _match: re.Match[str]) -> None:
    thoughts = ["Let me think. ", "Weighing the options. ", "Decided."]
    await turn.chunks(thoughts, "agent_thought_chunk")
    await turn.say("Done thinking: the answer is **42**.")


@behaviour()
async def tool(turn: Turn, _match: re.Match[str]) -> None:
    path = turn.path("notes.txt")
    old, new = "old line\n", "new line\n"
    raw_input = {"file_path": path, "old_string": old, "new_string": new}
    turn.edit("Edit notes.txt", path, old, new, rawInput=raw_input)
    await turn.pace()
    turn.tool_status("in_progress")
    await turn.pace()
    turn.tool_status("completed", rawOutput={"ok": True})
    await turn.say("edited notes.txt")


# The command `terminal N` runs: N green lines, one every 0.2 s (N = 0: until it is
# killed); `terminal N fast` prints them at once (the benchmark's 100,000 lines).
COUNTER = """import sys, time
n, pause = int(sys.argv[1]), float(sys.argv[2])
i = 0
while n == 0 or i < n:
    print(f"\\x1b[32mline {i}\\x1b[0m", flush=pause > 0)
    i += 1
    time.sleep(pause)
"""


@behaviour(rf"terminal{COUNT}(\s+fast)?")
async def terminal(turn: Turn, match: re.Match[str]) -> None:
    """A command in a client terminal (terminal/create), which the client shows in the
    tool call that embeds it while it runs; then its output, exit and release."""
    ids = {"sessionId": turn.session.id}
    args = ["-c", COUNTER, match.group(1) or "5", "0" if match.group(2) else "0.2"]
    created = await turn.ask(
        "terminal/create", {**ids, "command": sys.executable, "args": args, "outputByteLimit": 4096}
    )
    ids["terminalId"] = created["terminalId"]
    shown = [{"type": "terminal", "terminalId": created["terminalId"]}]
    turn.tool_call("Count lines", "execute", content=shown, rawInput={"command": "count"})
    turn.tool_status("in_progress")
    exit_status = await turn.ask("terminal/wait_for_exit", ids)
    output = await turn.ask("terminal/output", ids)
    await turn.ask("terminal/release", ids)
    turn.tool_status("completed" if exit_status.get("exitCode") == 0 else "failed")
    lines = len(output["output"].splitlines())
    await turn.say(f"the command printed {lines} lines and exited: {compact(exit_status)}")


@behaviour()
async def plan(turn: Turn, _match: re.Match[str]) -> None:
    steps = [
        ("Read the notebook", "high"),
        ("Write the answer", "medium"),
        ("Check the result", "low"),
    ]
    # State k: the first k//2 steps are done and, for odd k, the next one is in progress.
    for k in range(2 * len(steps) + 1):
        entries = []
        for i, (content, priority) in enumerate(steps):
            done, active = i < k // 2, i == k // 2 and k % 2 == 1
            status = "completed" if done else "in_progress" if active else "pending"
            entries.append({"content": content, "priority": priority, "status": status})
        turn.update({"sessionUpdate": "plan", "entries": entries})
        await turn.pace()
    await turn.say("plan done")


@behaviour()
async def permission(turn: Turn, _match: re.Match[str]) -> None:
    try:
        chosen = await turn.permission("Run `ls`", "execute", {"command": "ls"})
    except RpcError as failure:
        turn.tool_status("failed")
        await turn.say(f"permission: error {failure.code}")
        return
    if chosen is not None and chosen.startswith("allow"):
        turn.tool_status("completed", content=[text_content("notes.txt\n")])
    else:
        turn.tool_status("failed")
    await turn.say(f"permission: {chosen or 'cancelled'}")


def _shown_value(value: Any, prop: Json) -> str:
    """A field's answer as its form shows it: the title of a choice, yes or no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_shown_value(v, prop.get("items") or {}) for v in value) or "none"
    choices = prop.get("oneOf") or prop.get("anyOf") or []
    titled = {c.get("const"): c.get("title") for c in choices if isinstance(c, dict)}
    return str(titled.get(value) or value)


def answer_words(answer: str, schema: Json | None = None) -> str:
    """The demo's reply to an answer (``Turn.elicit``'s compact JSON, or ``error <code>``):
    what the person chose in the form's words, then the answer as the agent received it."""
    if answer.startswith("error "):
        return f"The question failed ({answer})."
    result = json.loads(answer)
    action = result.get("action") if isinstance(result, dict) else None
    content = result.get("content") if isinstance(result, dict) else None
    props = (schema or {}).get("properties") or {}
    order = {name: n for n, name in enumerate(props)}  # the form's order (the JSON's is sorted)
    if action == "accept" and isinstance(content, dict) and content:
        parts = [
            f"{(props.get(name) or {}).get('title') or name}: "
            f"{_shown_value(value, props.get(name) or {})}"
            for name, value in sorted(content.items(), key=lambda kv: order.get(kv[0], len(order)))
        ]
        said = "You answered. " + "; ".join(parts) + "."
    else:
        said = {
            "accept": "You accepted.",
            "decline": "You declined the question.",
            "cancel": "The question was cancelled.",
        }.get(str(action), "The question ended.")
    return f"{said}\n\nWhat the agent received: `{answer}`"


async def form(turn: Turn, message: str, schema: Json, withdraw: float | None = None) -> None:
    """Ask a form and say the answer; unanswered after ``withdraw`` seconds, withdraw it."""
    params = {"mode": "form", "message": message, "requestedSchema": schema}
    try:
        answer = await asyncio.wait_for(turn.elicit(params), withdraw)
    except asyncio.TimeoutError:
        # wait_for cancelled the request, which sent $/cancel_request for it.
        await turn.say("question withdrawn")
        return
    await turn.say(answer_words(answer, schema))


@behaviour("ask-user-withdraw|ask-withdraw")
async def ask_withdraw(turn: Turn, _match: re.Match[str]) -> None:
    await form(turn, "Still there?", WITHDRAW_SCHEMA, withdraw=0.3)


def ask_user_question_input(message: str, schema: Json) -> list[Json]:
    """The AskUserQuestion tool input the form was made from (the tool call's rawInput)."""
    questions = []
    for name, prop in schema["properties"].items():
        if name.endswith("_custom"):
            continue
        multi = prop["type"] == "array"
        options = prop["items"]["anyOf"] if multi else prop["oneOf"]
        questions.append(
            {
                "question": prop.get("description", message),
                "header": prop["title"],
                "multiSelect": multi,
                "options": [
                    {"label": o["const"], "description": o["description"]} for o in options
                ],
            }
        )
    return questions


@behaviour("ask-claude|ask-claude-multi")
async def ask_claude(turn: Turn, match: re.Match[str]) -> None:
    """The claude wrapper's AskUserQuestion shape: a tool call, then a form bound to it."""
    title = message = CLAUDE_SINGLE_QUESTION
    schema = CLAUDE_SINGLE_SCHEMA
    if match.group(0).lower().endswith("multi"):
        title, message = "Asking for your input", "Please answer the following questions."
        schema = CLAUDE_MULTI_SCHEMA
    turn.tool_call(title, "other", rawInput={"questions": ask_user_question_input(message, schema)})
    params = {
        "sessionId": turn.session.id,
        "mode": "form",
        "toolCallId": turn.tool_call_id,
        "message": message,
        "requestedSchema": schema,
    }
    try:
        result = await turn.ask("elicitation/create", params)
    except RpcError as failure:
        turn.tool_status("failed")
        await turn.say(answer_words(f"error {failure.code}"))
        return
    await turn.say(answer_words(compact(result), schema))
    answered = isinstance(result, dict) and result.get("action") in ("accept", "decline")
    turn.tool_status("completed" if answered else "failed")


@behaviour()
async def ask_url(turn: Turn, _match: re.Match[str]) -> None:
    """A URL question the client must refuse: its link carries credentials."""
    params = {
        "mode": "url",
        "message": "Sign in to the demo service.",
        "url": "https://demo:secret@example.invalid/auth",
        "elicitationId": "e1",
    }
    await turn.say(f"url elicitation: {await turn.elicit(params)}")


@behaviour(r"url-login(?:\s+(https?://\S+))?")
async def url_login(turn: Turn, match: re.Match[str]) -> None:
    """A sign-in page to open ("url-login http://127.0.0.1:8000/login", by default a
    port nothing listens on); once accepted, the agent says the sign-in is complete."""
    elicitation_id = f"login-{turn.session.id}-{turn.number}"
    params = {
        "mode": "url",
        "message": "Sign in to the demo service.",
        "url": match.group(1) or "http://127.0.0.1:9/login",
        "elicitationId": elicitation_id,
    }
    answer = await turn.elicit(params)
    if answer == compact({"action": "accept"}):
        turn.agent.notify("elicitation/complete", {"elicitationId": elicitation_id})
    await turn.say(answer_words(answer))


@behaviour()
async def ask_user(turn: Turn, _match: re.Match[str]) -> None:
    await form(turn, "The demo agent has a few questions.", ASK_USER_SCHEMA)


@behaviour()
async def fs(turn: Turn, _match: re.Match[str]) -> None:
    params = {"sessionId": turn.session.id, "path": turn.path("x")}
    try:
        await turn.ask("fs/read_text_file", params)
    except RpcError as failure:
        await turn.say(f"fs: error {failure.code}")
        return
    await turn.say("fs: ok")


@behaviour(r"read-file\s+(\S+)")
async def read_file(turn: Turn, match: re.Match[str]) -> None:
    """Reads a file through the client (``fs/read_text_file``: what the person has open, a
    notebook open in a page as that page holds it) and shows its text."""
    path = turn.path(match.group(1))
    try:
        read = await turn.ask("fs/read_text_file", {"sessionId": turn.session.id, "path": path})
    except RpcError as failure:
        await turn.say(f"read-file: error {failure.code}: {failure.message}")
        return
    text = str(read.get("content", "")) if isinstance(read, dict) else ""
    await turn.say(f"read-file: {os.path.basename(path)}:\n\n```\n{text}```\n")


# What the `edit-file` behaviour appends to the file it edits through the client.
FILE_LINE = "Edited by the demo agent.\n"


@behaviour(r"edit-file(-same)?(?:\s+(\S+))?")
async def edit_file(turn: Turn, match: re.Match[str]) -> None:
    """Reads a file through the client (``fs/read_text_file``: what the person has open),
    then writes it back with a line added (``fs/write_text_file``, reviewed by the
    person); ``edit-file-same`` writes back what it read, as opencode does after writing a file
    itself. The file is ``notes.md`` in the session's directory unless named."""
    path = turn.path(match.group(2) or "notes.md")
    params = {"sessionId": turn.session.id, "path": path}
    try:
        read = await turn.ask("fs/read_text_file", params)
        old = str(read.get("content", "")) if isinstance(read, dict) else ""
    except RpcError as failure:
        if match.group(1) or "no such file" not in failure.message:
            await turn.say(f"edit-file: error {failure.code}: {failure.message}")
            return
        old = ""  # a new file
    new = old if match.group(1) else old + FILE_LINE
    await turn.say(f"edit-file: read {len(old.splitlines())} lines of {os.path.basename(path)}.")
    turn.edit(f"Write {os.path.basename(path)}", path, old, new)
    try:
        await turn.ask("fs/write_text_file", {**params, "content": new})
    except RpcError as failure:
        turn.tool_status("failed")
        await turn.say(f"edit-file: error {failure.code}: {failure.message}")
        return
    turn.tool_status("completed")
    await turn.say("edit-file: written.")


async def default_reply(turn: Turn, _match: re.Match[str]) -> None:
    await turn.chunks(["Thinking about it."], "agent_thought_chunk")
    await turn.say(GREETING.format(prompt=turn.text))


# The notebook tools' calls are titled as claude titles them.
NOTEBOOK_TOOL = "mcp__notebook__{}"
NO_NOTEBOOK_TOOLS = "This chat has no notebook tools (it was opened with notebook_tools=False)."


def notebook_server(turn: Turn) -> Json | None:
    """The chat's `notebook` MCP server, as session/new gave it."""
    return next((s for s in turn.session.mcp_servers if s.get("name") == "notebook"), None)


async def answer(
    turn: Turn, client: Client, name: str, arguments: Json
) -> mcp_types.CallToolResult:
    """Calls a notebook tool and ends the turn's open tool call with its answer."""
    from . import notebook_client as nb

    result = await client.call_tool(name, arguments)
    status = "failed" if result.is_error else "completed"
    turn.tool_status(status, content=nb.as_acp_content(result))
    return result


async def use_tool(
    turn: Turn, client: Client, name: str, arguments: Json, step: str
) -> mcp_types.CallToolResult:
    """A notebook tool the agent calls without asking: a tool call, then its answer."""
    turn.tool_call_id = f"call-{turn.number}-{step}"
    turn.tool_call(NOTEBOOK_TOOL.format(name), "other", rawInput=arguments)
    return await answer(turn, client, name, arguments)


async def asked_tool(
    turn: Turn, client: Client, name: str, arguments: Json, step: str
) -> mcp_types.CallToolResult | None:
    """A notebook tool that runs code: asked for first; None when the person declined."""
    turn.tool_call_id = f"call-{turn.number}-{step}"
    chosen = await turn.permission(NOTEBOOK_TOOL.format(name), "other", arguments)
    if not str(chosen).startswith("allow"):
        turn.tool_status("failed")
        return None
    turn.tool_status("in_progress")
    return await answer(turn, client, name, arguments)


def last_line(result: mcp_types.CallToolResult) -> str:
    from . import notebook_client as nb

    lines = nb.text_of(result).strip().splitlines()
    return lines[-1] if lines else "(no output)"


@behaviour()
async def notebook(turn: Turn, _match: re.Match[str]) -> None:
    """Lists the notebook's variables, inspects one and runs a line (after asking), through
    the chat's `notebook` MCP server, as a real agent would."""
    entry = notebook_server(turn)
    if entry is None:
        await turn.say(NO_NOTEBOOK_TOOLS)
        return
    from . import notebook_client as nb

    async with nb.connect(entry) as client:
        listing = await use_tool(turn, client, "list_variables", {}, "vars")
        variable = nb.pick_variable(nb.text_of(listing))
        if variable is not None:
            await use_tool(turn, client, "inspect_variable", {"name": variable[0]}, "inspect")
        code = nb.line_for(variable)
        ran = await asked_tool(turn, client, "run_code", {"code": code}, "run")
    if ran is None:
        await turn.say(f"I did not run `{code}`: you declined.")
        return
    count = sum(1 for line in nb.text_of(listing).splitlines() if ": " in line)
    about = f"`{variable[0]}` ({variable[1]})" if variable else "nothing (no variables yet)"
    await turn.say(
        f"Your notebook has {count} variables. I inspected {about} and ran `{code}`: "
        f"{last_line(ran)}"
    )


# The cell the `edit` keyword adds, and the change it then makes to its last line.
EDIT_SOURCE = (
    'temperatures = {"Oslo": 3, "Lima": 19, "Cairo": 28}\n'
    "warmest = max(temperatures, key=temperatures.get)\n"
    'print("warmest:", warmest)'
)
EDIT_OLD = 'print("warmest:", warmest)'
EDIT_NEW = 'print(f"warmest: {warmest} at {temperatures[warmest]} C")'
EDIT_RUN_TIMEOUT = 30


@behaviour()
async def edit(turn: Turn, _match: re.Match[str]) -> None:
    """Adds a code cell to the open notebook, changes its last line (an old -> new
    replacement) and runs it, through the `notebook` server's edit tools. The agent does
    not ask before an edit (the tool has it reviewed); it asks before the run, as for
    `run_code`. Stops at the first tool that refuses, saying what it answered."""
    entry = notebook_server(turn)
    if entry is None:
        await turn.say(NO_NOTEBOOK_TOOLS)
        return
    from . import notebook_client as nb

    async with nb.connect(entry) as client:
        source = {"source": EDIT_SOURCE, "cell_type": "code"}
        inserted = await use_tool(turn, client, "insert_cell", source, "insert")
        cell = None if inserted.is_error else nb.cell_of(nb.text_of(inserted))
        if cell is None:
            await turn.say(f"I could not add the cell: {nb.text_of(inserted)}")
            return
        change = {**cell, "old": EDIT_OLD, "new": EDIT_NEW}
        edited = await use_tool(turn, client, "edit_cell", change, "edit")
        if edited.is_error:
            await turn.say(f"I added a cell but could not change it: {nb.text_of(edited)}")
            return
        run = {**cell, "timeout": EDIT_RUN_TIMEOUT}
        ran = await asked_tool(turn, client, "run_cell", run, "run")
    if ran is None:
        await turn.say("I added a cell and changed its last line; I did not run it: you declined.")
        return
    # A run the kernel cannot take now ("Not run: ...") is an answer, not a tool error.
    refused = ran.is_error or nb.text_of(ran).startswith("Not run")
    outcome = "could not run it" if refused else "ran it"
    await turn.say(f"I added a cell, changed its last line and {outcome}: {last_line(ran)}")


# The default, tried after every behaviour (also those added by importers, as tests do):
# it matches anything, so every prompt finds a behaviour.
DEFAULT: tuple[re.Pattern[str], Behaviour] = (re.compile(""), default_reply)


def _pump_stdin(loop: asyncio.AbstractEventLoop, inbox: asyncio.Queue[bytes | None]) -> None:
    # A thread works for every kind of stdin (pipe, file, terminal) and keeps draining it
    # while a large write to stdout blocks the event loop.
    for line in sys.stdin.buffer:
        loop.call_soon_threadsafe(inbox.put_nowait, line)
    loop.call_soon_threadsafe(inbox.put_nowait, None)


async def serve(delay: float) -> None:
    """Serve one connection on stdin/stdout until stdin reaches EOF."""
    agent = DemoAgent(sys.stdout.fileno(), delay)
    loop = asyncio.get_running_loop()
    threading.Thread(target=_pump_stdin, args=(loop, agent.inbox), daemon=True).start()
    while (line := await agent.inbox.get()) is not None:
        agent.feed(line)


def main() -> None:
    if sys.argv[1:] == [demo_login.LOGIN_FLAG]:  # the login mode's terminal method
        sys.exit(demo_login.main())
    delay = float(os.environ.get("ACP_DEMO_DELAY", "0.02"))
    asyncio.run(serve(delay))


if __name__ == "__main__":
    main()
