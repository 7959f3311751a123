"""One chat: an ACP session with one agent, mapped onto our stream events.

``ChatSession`` is the seed's ``DaemonSession``: it starts the agent, runs turns, and
carries out what its ledger (ledger.py) decides of every permission and question the
agent is waiting on: the event to show, the one answer to the agent and the one
``*_resolved`` event of each.

One deadline per pending request, owned here: armed when the ledger registers it,
cancelled in ``_carry_out`` (where every settled request ends). No second timer backs
it up: the hub and this session share one process and one loop, and the one party
that can fail on its own, the agent process, settles everything when it exits.

The review of a notebook edit (``review_edit``, the chat's notebook tools ask it) is a
permission request of the chat's own, in the same ledger: its card, deadline, resync
and "who answered" are a permission's, and its answer resolves a future here instead
of going to the agent. An Allow of the agent's own permission request for an edit tool
call (the bridge attached the previewed edit) approves that edit: it is not asked twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..agent import jsonrpc
from ..agent.auth_methods import AUTH_REQUIRED
from ..agent.background_output import BackgroundOutput
from ..agent.catalogue import AgentSpec
from ..agent.chunk_lines import session_update
from ..agent.connection import AgentConnection
from ..agent.handshake import agent_env, initialize_params
from ..agent.jsonrpc import Notification, Request, RpcError
from ..agent.mcp_servers import notebook_entry, notebook_tools_meta
from ..agent.resume import (
    cannot_continue,
    continue_method,
    forked_session,
    not_offered,
    offers_session,
)
from ..agent.terminals import METHODS as TERMINAL_METHODS
from ..agent.terminals import ClientTerminals
from ..wire.attachment_blocks import AttachmentError, adapt
from ..wire.attachment_blocks import summary as attachment_summary
from ..wire.bounded_json import bound
from ..wire.chunks import ChunkBatch, update_chunk_key, with_text
from ..wire.contracts import (
    MAX_ID,
    MAX_QUEUE,
    MAX_TOOL_CALL_ID,
    AccessEvent,
    CellEdit,
    Edit,
    EditPolicyEvent,
    ElicitationRequestEvent,
    PermissionRequestEvent,
    PermissionResolvedEvent,
    QueuedPrompt,
    QueueEvent,
    RequestEvent,
    ResolvedEvent,
    StreamEvent,
    TurnEndedEvent,
    TurnStartedEvent,
    is_request,
)
from ..wire.review import Review
from ..wire.text_files import FileRefused
from . import file_requests
from .edit_review import EditReviews, allows, card, edited_paths
from .elicitation import UrlRefused, take_elicitation_view, take_url_request
from .history import History
from .ledger import MAX_OPEN_REQUESTS, Ledger, NotFound, Refused, Reply, Settled
from .ports import NotebookEndpoint, TextFiles
from .sign_in import SignIn

log = logging.getLogger(__name__)

MAX_OPTIONS = 16
# Running tool calls a turn remembers (the newest names a question's tool call): an
# agent that starts calls and never ends them must not grow the server without end.
MAX_RUNNING_TOOLS = 1000
MAX_OPTION_TEXT = 256
MAX_STOP_REASON = 64


# How long the edit an agent's permission request would make may take to preview; a
# slower or failing preview leaves the card without its diff.
PREVIEW_TIMEOUT = 2.0
_CANCELLED = {"outcome": {"outcome": "cancelled"}}


# What an agent has to answer a mode or config change: less than the clients wait for
# an ack (Python 30 s, the widget 45 s), so they hear why; an agent that never answered
# left the request waiting for good.
SETTING_TIMEOUT = 20.0
# What closing a chat waits for the agent's session/close: a slow agent must not hold it.
CLOSE_TIMEOUT = 2.0
# A session title kept for the chat lists (the folds keep the whole update).
MAX_TITLE = 256


@dataclass(frozen=True)
class SessionConfig:
    answer_timeout: float = 60.0  # an unanswered request is cancelled; shown as a countdown
    start_timeout: float = 180.0  # npx may download the agent on first use
    cancel_grace: float = 10.0  # a turn the agent does not end after session/cancel is given up
    history_events: int = 5000
    history_bytes: int = 8 * 1024 * 1024
    max_line: int = jsonrpc.MAX_LINE  # an agent line longer than this is skipped
    # What all agents' unfinished lines may hold together; None: this process's budget.
    line_budget: jsonrpc.LineBudget | None = None


class Busy(RuntimeError):
    pass


class NotOffered(ValueError):
    """The agent does not advertise what was asked of it (an unstable ACP method)."""


class NotQueued(ValueError):
    """A queue change names a turn that is not queued (it may have started already)."""


@dataclass
class Queued:
    """A prompt waiting for the running turn; ``turn`` is the number it runs as."""

    turn: int
    text: str
    by: str | None
    attachments: list[dict[str, Any]]  # wire Attachment dicts, bounded

    def shown(self) -> QueuedPrompt:
        shown: QueuedPrompt = {"turn": self.turn, "prompt": self.text}
        if self.by:
            shown["by"] = self.by
        if self.attachments:
            shown["attachments"] = [attachment_summary(a) for a in self.attachments]
        return shown


class AgentExited(RuntimeError):
    """The agent is gone; ``reason`` is why (the exited event's detail)."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class Deadline:
    """The timer of one open request's deadline (the ledger holds the request)."""

    timer: asyncio.TimerHandle


def _now_ms() -> float:
    return round(time.time() * 1000, 1)


class ChatSession:
    def __init__(
        self,
        chat_id: str,
        spec: AgentSpec,
        *,
        cwd: str,
        mcp_servers: Sequence[Mapping[str, Any]] = (),
        config: SessionConfig = SessionConfig(),
        sink: Callable[[StreamEvent], None] = lambda event: None,
        load_session_id: str | None = None,
        notebook: NotebookEndpoint | None = None,
        files: TextFiles | None = None,
    ) -> None:
        self.chat_id = chat_id
        # An earlier ACP session to continue (session/load or session/resume) instead of
        # session/new; a load's replayed updates become the chat's history.
        self.load_session_id = load_session_id
        # The chat's own `notebook` MCP server (notebook tools); None when they are off.
        self.notebook = notebook
        if notebook is not None:
            notebook.review = self.review_edit
        # The files the agent reads and writes through us (fs/*); None: not offered.
        self.files = files
        # The agent's fs/* and terminal/* requests, each answered by a task of its own.
        self._served: set[asyncio.Task[None]] = set()
        self.spec = spec
        self.cwd = cwd
        self.mcp_servers = [dict(s) for s in mcp_servers]
        self.config = config
        self.sink = sink
        self.history = History(config.history_events, config.history_bytes)
        self.ledger = Ledger(config.answer_timeout)
        # The timer of each request the ledger holds open, by requestId.
        self.pending: dict[str, Deadline] = {}
        self.status: Literal["starting", "ready", "exited"] = "starting"
        self.session_id: str | None = None
        # The session's title as the agent names it (session_info_update), cut short.
        self.title: str | None = None
        # The initialize result's agentCapabilities (what a prompt may carry).
        self.capabilities: dict[str, Any] = {}
        self.turn = 0
        self.turn_active = False
        # Prompts sent during a turn, in the order they go out as turns end.
        self.queue: list[Queued] = []
        # Queued prompts sent into the running turn (steering): it ends when they have.
        self._steered: list[tuple[int, asyncio.Task[Any]]] = []
        self.last_seq = 0  # of the last event emitted
        # Text chunks of one message that arrived together and are not emitted yet.
        self._chunks = ChunkBatch()
        # Tool calls of this turn still pending/in_progress, oldest first (a dict as an
        # ordered set): the likely source of a question that names no tool call.
        self._running_tools: dict[str, None] = {}
        # URL questions by the agent's elicitationId, oldest first: open, or accepted and
        # waiting for the agent's elicitation/complete (at most MAX_OPEN_REQUESTS).
        self._url_questions: dict[str, str] = {}
        self._turn_task: asyncio.Task[None] | None = None
        self._give_up: asyncio.TimerHandle | None = None  # armed by the turn's first cancel
        self._given_up = False
        self.exit_detail: str | None = None  # why the agent is gone (or, as a start failed, goes)
        self._started = asyncio.Event()  # the handshake is over, however it ended
        self._cancel_queued = asyncio.Event()  # chat:cancel before the handshake was over
        # How the agent's notebook edits are reviewed: the setting, this turn's choices.
        self.edits = EditReviews()
        # Each review waiting on its card, by the local rpc id of its request.
        self._reviews: dict[str, asyncio.Future[PermissionResolvedEvent]] = {}
        self._review_ids = 0
        # Agent permission requests whose edit is being previewed, not registered yet.
        self._previews: dict[jsonrpc.Id, asyncio.Task[None]] = {}
        self.conn = AgentConnection(
            spec.argv,
            env=agent_env(spec),
            cwd=cwd,
            on_request=self._on_request,
            on_notification=self._on_notification,
            on_exit=self._on_exit,
            on_notice=self._agent_error,
            on_chunk=self._on_chunk,
            max_line=config.max_line,
            line_budget=config.line_budget,
        )
        # The client terminals the agent runs (terminal/*), shown on their tool calls.
        self.terminals = ClientTerminals(cwd, agent_env(spec), self._show_update)
        # Claude's backgrounded commands, whose output its wrapper does not stream over v1.
        self.background_output = BackgroundOutput(self._show_update)
        # The agent's sign-in methods, when it asks for a sign-in (sign_in.py).
        self.sign_in = SignIn(
            emit=self._emit,
            show_update=self._show_update,
            terminals=self.terminals,
            request=self.conn.request,
            env=agent_env(spec),
            timeout=config.start_timeout,
        )

    # ------------------------------------------------------------ events

    def _show_update(self, update: dict[str, Any]) -> None:
        """A session update of the client's own (a terminal's output on its tool call)."""
        self._emit({"kind": "update", "update": update})

    def _emit(self, event: StreamEvent) -> None:
        if self._chunks:
            self._flush_chunks()  # they came first
        self.last_seq += 1
        event["seq"] = self.last_seq
        event["ts"] = _now_ms()
        self.history.append(event)
        self.sink(event)

    def resync(self) -> list[StreamEvent]:
        """The bounded history, then every pending request (never cancels anything)."""
        events = self.history.events()
        shown = {e["requestId"] for e in events if is_request(e)}
        # A pending card whose event has left the bounded history is re-sent after it.
        return events + [e for e in self.ledger.events() if e["requestId"] not in shown]

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start the agent and open a session; failures end in ``agent_status exited``."""
        try:
            await self._start()
        finally:
            self._started.set()

    async def _start(self) -> None:
        self._emit({"kind": "agent_status", "status": "starting", "agent": self.spec.name})
        try:
            await self.conn.start()
        except OSError as exc:
            # No process: the connection will never call _on_exit, so it is called here.
            self.exit_detail = f"could not start {self.spec.argv[0]!r}: {exc.strerror or exc}"
            self._on_exit(None)
            return
        try:
            init = await asyncio.wait_for(self._initialize(), self.config.start_timeout)
            new = await self._open(init)
        except (RpcError, asyncio.TimeoutError) as exc:
            detail = (
                f"the agent did not start within {self.config.start_timeout:g} s"
                if isinstance(exc, asyncio.TimeoutError)
                else f"the agent refused to start: {exc.describe()}"
            )
            if isinstance(exc, RpcError) and exc.code == AUTH_REQUIRED:
                detail += (
                    " (it needs a sign-in and offers no method this client can run: sign in"
                    " where the agent runs, or give it its key with Chat(env={...}))"
                )
            log.info("chat %s: %s", self.chat_id, detail)
            self.exit_detail = detail  # what _on_exit reports once we have ended the agent
            await self.conn.close()
            return
        if new is None:  # the agent exited while the chat waited for a sign-in
            return
        self.status = "ready"
        caps = init.get("agentCapabilities")
        self.capabilities = caps if isinstance(caps, dict) else {}
        self._emit(
            {
                "kind": "agent_status",
                "status": "ready",
                "agent": self.spec.name,
                "agentInfo": bound(init.get("agentInfo")),
                "agentCapabilities": bound(caps),
                "sessionId": self.session_id,
                "modes": bound(new.get("modes")),
                "configOptions": bound(new.get("configOptions")),
            }
        )

    async def _initialize(self) -> dict[str, Any]:
        init = await self.conn.request("initialize", initialize_params(fs=self.files is not None))
        init = init if isinstance(init, dict) else {}
        # Not in ACP v1 and harmless; older wrappers waited for it.
        self.conn.notify("initialized", {})
        self.sign_in.learn(init, self.spec.argv)
        return init

    async def _open(self, init: dict[str, Any]) -> dict[str, Any] | None:
        """The session, once the agent opens it: a refusal for want of a sign-in shows the
        agent's methods, and waits for one to work (None: the agent exited meanwhile)."""
        while True:
            try:
                return await asyncio.wait_for(self._open_session(init), self.config.start_timeout)
            except RpcError as exc:
                if exc.code != AUTH_REQUIRED or not self.sign_in.refused(exc.message):
                    raise
            waits = [asyncio.ensure_future(e.wait()) for e in (self.sign_in.done, self.conn.exited)]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in waits:
                    waiting.cancel()
            if self.conn.exited.is_set():
                return None

    async def _open_session(self, init: dict[str, Any]) -> dict[str, Any]:
        """``session/new`` (or load, or resume) and the mode the spec asks for."""
        servers = list(self.mcp_servers)
        capabilities = init.get("agentCapabilities")
        params: dict[str, Any] = {"cwd": self.cwd, "mcpServers": servers}
        if self.notebook is not None:
            servers.append(notebook_entry(self.notebook.url, self.notebook.secret, capabilities))
            params["_meta"] = notebook_tools_meta()
        if self.load_session_id is None:
            new = await self.conn.request("session/new", params)
        else:
            # session/load or session/resume: session/new's result, for the id we asked for.
            method = continue_method(capabilities)
            if method is None:
                raise RpcError(jsonrpc.INVALID_REQUEST, cannot_continue(self.spec.name))
            result = await self.conn.request(method, {"sessionId": self.load_session_id, **params})
            new = result if isinstance(result, dict) else {}
            new["sessionId"] = self.load_session_id
        if not isinstance(new, dict) or not isinstance(new.get("sessionId"), str):
            raise RpcError(jsonrpc.INVALID_PARAMS, "session/new returned no sessionId")
        if len(new["sessionId"]) > MAX_ID:
            # It goes into every prompt, every resync and the saved notebook.
            raise RpcError(
                jsonrpc.INVALID_PARAMS,
                f"session/new returned a sessionId of {len(new['sessionId']):,} characters"
                f" (the limit is {MAX_ID})",
            )
        self.session_id = new["sessionId"]
        if self.spec.mode and _offers_mode(new.get("modes"), self.spec.mode):
            await self.conn.request(
                "session/set_mode", {"sessionId": self.session_id, "modeId": self.spec.mode}
            )
            _show_mode(new, self.spec.mode)
        return new

    async def close(self) -> None:
        """Tear down: every pending request answered, timers cleared, process group ended."""
        self._end_previews()
        self._end_served()
        self._carry_out(*self.ledger.settle_all(by="teardown"))
        if self.notebook is not None:
            self.notebook.close()
        self.sign_in.end()
        await self.terminals.close()
        await self.background_output.close()
        if self.session_id is not None:
            await self._close_session(self.session_id)
        await self.conn.close()
        if self._turn_task is not None:
            self._turn_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._turn_task

    async def _close_session(self, session_id: str) -> None:
        """``session/close`` where the agent advertises it, within ``CLOSE_TIMEOUT``."""
        if not offers_session(self.capabilities, "close"):
            return
        request = self.conn.request("session/close", {"sessionId": session_id})
        with contextlib.suppress(RpcError, asyncio.TimeoutError):
            await asyncio.wait_for(request, CLOSE_TIMEOUT)

    async def fork(self) -> str:
        """``session/fork`` of this chat's session: the new session's id, to load in a chat
        of its own (the fork the agent opened here is closed again)."""
        if not offers_session(self.capabilities, "fork"):
            raise NotOffered(not_offered(self.spec.name, "fork"))
        if self.session_id is None:
            raise Busy("the agent has not opened its session yet")
        params = {"sessionId": self.session_id, "cwd": self.cwd, "mcpServers": []}
        forked = forked_session(await self._setting("session/fork", params))
        if forked is None:
            raise RpcError(jsonrpc.INVALID_PARAMS, "session/fork returned no valid sessionId")
        await self._close_session(forked)
        return forked

    # ------------------------------------------------------------ turns

    def prompt(
        self,
        text: str,
        by: str | None = None,
        attachments: Sequence[Mapping[str, Any]] = (),
    ) -> int:
        """Start a turn; returns its number. The turn runs until the agent answers.

        A prompt sent during a turn is queued (``queue`` events): it runs as that number
        once the turns before it have ended. One sent while the agent is still starting
        waits for the handshake.
        ``attachments`` are wire ``Attachment`` dicts, already bounded (contracts.py).
        """
        if self.status == "exited":
            raise AgentExited("the agent has exited", self.exit_detail)
        if self.turn_active and len(self.queue) >= MAX_QUEUE:
            raise Busy(f"{MAX_QUEUE} prompts are queued already; wait for a turn to end")
        self.turn += 1
        queued = Queued(self.turn, text, by, [dict(a) for a in attachments])
        if self.turn_active:  # it goes out when the turns before it have ended
            self.queue.append(queued)
            self._emit_queue()
        else:
            self._start_turn(queued)
        return self.turn

    @property
    def _replaying(self) -> bool:
        """A chat loading a session, whose agent replays the conversation."""
        return self.load_session_id is not None and not self._started.is_set()

    def _start_turn(self, queued: Queued) -> None:
        text, by, attachments = queued.text, queued.by, queued.attachments
        self.turn_active = True
        event: TurnStartedEvent = {"kind": "turn_started", "turn": queued.turn, "prompt": text}
        if by:
            event["by"] = by
        if attachments:
            event["attachments"] = [attachment_summary(a) for a in attachments]
        # A chat loading a session shows the replayed conversation first: a prompt sent
        # before the replay is over starts its turn after it.
        later = self._replaying
        if not later:
            self._emit(event)
        blocks = [dict(a["block"]) for a in attachments]
        self._turn_task = asyncio.create_task(
            self._run_turn(queued.turn, text, blocks, event if later else None)
        )

    # ------------------------------------------------------------ the queue

    def _emit_queue(
        self,
        removed: Sequence[Queued] = (),
        reason: Literal["removed", "cancelled", "exited"] | None = None,
        steered: int | None = None,
        by: str | None = None,
    ) -> None:
        event: QueueEvent = {"kind": "queue", "prompts": [q.shown() for q in self.queue]}
        if removed:
            event["removed"] = [q.turn for q in removed]
            event["reason"] = reason
        if steered is not None:
            event["steered"] = steered
        if by:
            event["by"] = by
        self._emit(event)

    def _queued(self, turn: int) -> Queued:
        found = next((q for q in self.queue if q.turn == turn), None)
        if found is None:
            raise NotQueued(f"turn {turn} is not queued (it may have started)")
        return found

    @property
    def can_steer(self) -> bool:
        """The agent takes a prompt during a turn into it (claude's prompt queueing)."""
        meta = self.capabilities.get("_meta")
        claude = meta.get("claudeCode") if isinstance(meta, dict) else None
        return isinstance(claude, dict) and claude.get("promptQueueing") is True

    def change_queue(
        self,
        op: Literal["edit", "remove", "move", "steer"],
        turn: int,
        text: str | None = None,
        index: int | None = None,
        by: str | None = None,
    ) -> None:
        """Edit, remove, move or steer (send into the running turn) one queued prompt."""
        queued = self._queued(turn)
        if op == "edit" and text is not None:
            queued.text = text
        elif op == "remove":
            self.queue.remove(queued)
            self._emit_queue([queued], "removed", by=by)
            return
        elif op == "move" and index is not None:
            self.queue.remove(queued)
            self.queue.insert(min(index, len(self.queue)), queued)
        elif op == "steer":
            if not self.can_steer:
                raise NotQueued(f"{self.spec.name} does not take prompts during a turn")
            if self.status != "ready" or not self.turn_active:
                raise NotQueued("no turn is running to steer")
            self.queue.remove(queued)
            self._emit_queue(steered=turn, by=by)
            self._steered.append((turn, asyncio.create_task(self._steer(queued))))
            return
        self._emit_queue(by=by)

    async def _steer(self, queued: Queued) -> Any:
        """Send a queued prompt into the running turn; the agent answers it when its
        turn is over (the running turn waits for that)."""
        prompt = [
            *adapt(
                [dict(a["block"]) for a in queued.attachments], self.capabilities, self.spec.name
            ),
            {"type": "text", "text": queued.text},
        ]
        return await self.conn.request(
            "session/prompt", {"sessionId": self.session_id, "prompt": prompt}
        )

    def _drop_queue(self, reason: Literal["cancelled", "exited"]) -> None:
        """A cancel or the agent's exit ends the queue too, and says so."""
        if self.queue:
            dropped, self.queue = self.queue, []
            self._emit_queue(dropped, reason)

    def _next_turn(self) -> None:
        """A turn ended: the next queued prompt goes out at once."""
        # Not once the agent is gone (its exit, reported next, empties the queue).
        gone = self.status == "exited" or self.conn.exited.is_set()
        if self.queue and not gone and not self.turn_active:
            queued = self.queue.pop(0)
            self._emit_queue()
            self._start_turn(queued)

    async def _run_turn(
        self,
        turn: int,
        text: str,
        blocks: Sequence[dict[str, Any]] = (),
        started: TurnStartedEvent | None = None,
    ) -> None:
        ended: TurnEndedEvent = {"kind": "turn_ended", "turn": turn}
        try:
            waited = await self._wait_started()
            if started is not None:
                self._emit(started)
                started = None
            if not waited:
                ended["stopReason"] = "cancelled"
                return
            if self.status != "ready":
                raise RpcError(jsonrpc.INTERNAL_ERROR, "the agent did not start")
            # Checked again now that the agent's capabilities are surely known.
            prompt = [
                *adapt(blocks, self.capabilities, self.spec.name),
                {"type": "text", "text": text},
            ]
            result = await self.conn.request(
                "session/prompt", {"sessionId": self.session_id, "prompt": prompt}
            )
            reason = result.get("stopReason") if isinstance(result, dict) else None
            # ACP's reasons are short words; a longer one is cut (the header shows it, the
            # saved notebook keeps it).
            ended["stopReason"] = (
                reason[:MAX_STOP_REASON] if isinstance(reason, str) else "end_turn"
            )
            # Prompts steered into this turn: it is over once the agent has answered them.
            while waiting := [t for _, t in self._steered if not t.done()]:
                await asyncio.wait(waiting)
            for _, task in self._steered:
                task.result()  # an agent's refusal of one is the turn's error
        except RpcError as exc:
            ended["error"] = exc.describe()[:2048]
            if exc.code == AUTH_REQUIRED:  # the sign-in card shows (claude asks here)
                self.sign_in.refused(exc.message)
        except AttachmentError as exc:
            ended["error"] = str(exc)
        except asyncio.CancelledError:
            ended["stopReason"] = "cancelled"
            if self._given_up:
                ended["error"] = (
                    f"the agent did not end the turn within {self.config.cancel_grace:g} s "
                    f"of the cancel; {self.conn.activity()}"
                )
            raise
        finally:
            if started is not None:  # ended before the handshake was: still one start, one end
                self._emit(started)
            if self._give_up is not None:
                self._give_up.cancel()
            self._give_up, self._given_up = None, False
            self.turn_active = False
            self._running_tools.clear()
            self.edits.end_turn()
            steered, self._steered = self._steered, []
            for _, task in steered:
                task.cancel()  # the turn ended without them (a cancel, an error)
            self._emit(ended)
            for number, _ in steered:  # they were part of it, and end with it
                self._emit({**ended, "turn": number})
            self._next_turn()

    async def _wait_started(self) -> bool:
        """Wait for the handshake; False when the turn was cancelled first."""
        if self._started.is_set():
            return True
        waits = [asyncio.ensure_future(e.wait()) for e in (self._started, self._cancel_queued)]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for waiting in waits:
            waiting.cancel()
        if self._cancel_queued.is_set():
            self._cancel_queued.clear()
            return False
        return True

    def cancel(self) -> None:
        """``session/cancel``: every pending request of the turn is cancelled too, and
        the queued prompts are removed (the queue event says so)."""
        self._drop_queue("cancelled")
        if self.status != "ready":
            if self.status == "starting" and self.turn_active:
                self._cancel_queued.set()  # a prompt still waiting for the handshake
            return
        if self.notebook is not None:
            self.notebook.cancel_runs()  # a run_code of this turn is interrupted
        self.terminals.kill_all()
        # session/cancel first, so the agent reads the cancelled answers as part of it.
        # Once per turn: a burst of Stop clicks is one cancel to the agent.
        if self.turn_active and self._give_up is None:
            self.conn.notify("session/cancel", {"sessionId": self.session_id})
            self._give_up = asyncio.get_running_loop().call_later(
                self.config.cancel_grace, self._give_up_turn
            )
        self._end_previews()
        self._carry_out(*self.ledger.settle_all())

    def _give_up_turn(self) -> None:
        """The agent ignored session/cancel (it is stuck): stop waiting, so the chat goes on."""
        if self._turn_task is not None and not self._turn_task.done():
            self._given_up = True
            self._turn_task.cancel()

    async def _setting(self, method: str, params: dict[str, Any]) -> Any:
        """A set_mode, set_config or fork request, answered within ``SETTING_TIMEOUT``."""
        try:
            return await asyncio.wait_for(self.conn.request(method, params), SETTING_TIMEOUT)
        except asyncio.TimeoutError:
            raise Busy(f"the agent did not answer {method} within {SETTING_TIMEOUT:g} s") from None

    async def set_mode(self, mode_id: str) -> None:
        await self._setting("session/set_mode", {"sessionId": self.session_id, "modeId": mode_id})
        # Agents report the change with current_mode_update; not all do, so say it ourselves.
        update = {"sessionUpdate": "current_mode_update", "currentModeId": mode_id}
        self._emit({"kind": "update", "update": update})

    async def set_config(self, config_id: str, value: str | bool) -> None:
        params: dict[str, Any] = {
            "sessionId": self.session_id,
            "configId": config_id,
            "value": value,
        }
        if isinstance(value, bool):
            params["type"] = "boolean"
        result = await self._setting("session/set_config_option", params)
        options = result.get("configOptions") if isinstance(result, dict) else None
        if isinstance(options, list):
            update = {"sessionUpdate": "config_option_update", "configOptions": bound(options)}
            self._emit({"kind": "update", "update": update})

    # ------------------------------------------------------------ answers

    def respond_permission(
        self, request_id: str, option_id: str | None, by: str | None = None
    ) -> None:
        """Select ``option_id``, or cancel when it is None."""
        event = self.ledger.get(request_id)
        settled = self.ledger.answer_permission(request_id, option_id, by)
        if event is not None and event["kind"] == "permission_request":
            edit = event.get("edit")
            if edit is not None and not settled.reply.local and allows(event, option_id):
                # The agent's own request for an edit tool call: its tool is not asked again.
                self.edits.approve(edit, by)
            if not settled.reply.local and allows(event, option_id):
                # A file it changes is not asked again when written through us (fs/*).
                self.edits.allow_paths(edited_paths(event["toolCall"]))
        self._carry_out(settled)
        if settled.reply.local and option_id == "accept_turn":
            # "All in this turn": the other edits waiting for their review too.
            others = self.ledger.local_ids()
            self._carry_out(*(self.ledger.answer_permission(o, option_id, by) for o in others))

    def respond_elicitation(
        self, request_id: str, action: str, values: Mapping[str, Any] | None, by: str | None = None
    ) -> None:
        self._carry_out(self.ledger.answer_elicitation(request_id, action, values, by))

    def _time_out(self, request_id: str) -> None:
        """The deadline passed: cancel to the agent, outcome timeout."""
        self._carry_out(self.ledger.settle(request_id, "timeout"))

    def _carry_out(self, *settled: Settled) -> None:
        """Where a settled request ends: its timer cancelled, its reply, its ``*_resolved``."""
        for one in settled:
            self.pending.pop(one.event["requestId"]).timer.cancel()
            if one.reply.local:
                self._end_review(one.reply.rpc_id, one.event)
            else:
                self._reply(one.reply)
            self._emit(one.event)
            if one.event["kind"] == "elicitation_resolved" and one.event["outcome"] != "accepted":
                # Only an accepted URL question waits for the agent's elicitation/complete.
                self._url_questions = {
                    e: r for e, r in self._url_questions.items() if r != one.event["requestId"]
                }

    def _reply(self, reply: Reply) -> None:
        if reply.error is not None:
            self.conn.respond_error(reply.rpc_id, *reply.error)
        elif not self.conn.exited.is_set():
            self.conn.respond(reply.rpc_id, reply.result)

    # ------------------------------------------------------------ notebook edits

    @property
    def accept_edits(self) -> bool:
        return self.edits.accept_edits

    def set_accept_edits(self, value: bool, by: str | None = None) -> None:
        """The chat's "accept edits" setting; every client hears of it (``edit_policy``)."""
        self.edits.accept_edits = value
        event: EditPolicyEvent = {"kind": "edit_policy", "acceptEdits": value}
        if by:
            event["by"] = by
        self._emit(event)

    def set_access(
        self,
        owner: str | None,
        owner_name: str | None,
        share: Literal["anyone"] | None,
        by: str | None = None,
    ) -> None:
        """Who may act on the chat (the hub's owner gate); every client hears of it."""
        event: AccessEvent = {
            "kind": "access",
            "owner": owner,
            "ownerName": owner_name,
            "share": share,
        }
        if by:
            event["by"] = by
        self._emit(event)

    async def review_edit(self, edit: Edit) -> Review:
        """The review of one edit (a notebook cell's, a file's), as the chat's edit tools
        and the agent's file writes wait for it.

        In order: an edit the person already allowed through the agent's own permission
        request; the "accept edits" setting; "Accept all in this turn" chosen earlier in
        the turn; else a card (a permission request of the chat's own) and its answer.
        """
        if self.status == "exited":
            return Review(False, "the chat ended")
        decided = self.edits.decide(edit)
        if self.edits.notice is not None:
            self._agent_error(self.edits.notice)
        if decided is not None:
            return decided
        self._review_ids += 1
        rpc_id = f"edit-{self._review_ids}"
        event = card(edit, next(reversed(self._running_tools), None))
        answered = self._reviews[rpc_id] = asyncio.get_running_loop().create_future()
        refused = self._register(rpc_id, event, local=True)
        if refused is not None:
            del self._reviews[rpc_id]
            return Review(False, f"refused: {refused}")
        request_id = event["requestId"]
        try:
            resolved = await answered
        except asyncio.CancelledError:
            # The tool call was abandoned: its card ends with it.
            if request_id in self.ledger:
                self._carry_out(self.ledger.settle(request_id, "cancelled", "agent"))
            raise
        # Read again: the agent may have exited while the card waited.
        ended = cast(str, self.status) == "exited"
        return self.edits.outcome(resolved, self.ledger.answer_timeout, ended)

    def _end_review(self, rpc_id: jsonrpc.Id, event: ResolvedEvent) -> None:
        """A review's card settled: its answer goes to the edit tool waiting on it."""
        answered = self._reviews.pop(str(rpc_id), None)
        if answered is not None and not answered.done() and event["kind"] == "permission_resolved":
            answered.set_result(event)

    # ------------------------------------------------------------ from the agent

    def _on_request(self, req: Request) -> None:
        if req.method == "session/request_permission":
            self._permission_request(req)
        elif req.method == "elicitation/create":
            self._elicitation_request(req)
        elif req.method in file_requests.METHODS and self.files is not None:
            self._serve(req, self._file_request(req, self.files))
        elif req.method in TERMINAL_METHODS:
            self._serve(req, self._terminal_request(req))
        else:
            # fs/* of a chat without file access: not advertised to its agent.
            self.conn.respond_error(
                req.id, jsonrpc.METHOD_NOT_FOUND, f"method not found: {req.method[:200]}"
            )

    def _serve(self, req: Request, answer: Coroutine[Any, Any, None]) -> None:
        """Answer ``req`` in a task of its own: at most MAX_OPEN_REQUESTS at once (a
        ``terminal/wait_for_exit`` may wait for ever), cancelled when the chat ends."""
        if len(self._served) >= MAX_OPEN_REQUESTS:
            answer.close()
            detail = f"{MAX_OPEN_REQUESTS} requests of this agent are open already"
            self.conn.respond_error(req.id, jsonrpc.INTERNAL_ERROR, detail)
            return
        task = asyncio.create_task(answer)
        self._served.add(task)
        task.add_done_callback(self._served.discard)

    def _end_served(self) -> None:
        for task in list(self._served):
            task.cancel()

    async def _file_request(self, req: Request, files: TextFiles) -> None:
        """Answer one ``fs/*`` request: its result, or an error saying why not."""
        params = req.params if isinstance(req.params, dict) else {}
        try:
            if req.method == file_requests.READ:
                result = await file_requests.read_text_file(files, params)
            else:
                result = await file_requests.write_text_file(
                    files, params, self.review_edit, self.edits.allowed_path
                )
        except FileRefused as exc:
            self.conn.respond_error(req.id, jsonrpc.INVALID_PARAMS, str(exc))
            return
        except asyncio.CancelledError:
            self.conn.respond_error(req.id, jsonrpc.REQUEST_CANCELLED, "the chat ended")
            raise
        except Exception as exc:  # the server's own (a contents manager, a page): still answered
            log.warning("chat %s: %s failed", self.chat_id, req.method, exc_info=True)
            detail = f"{req.method} failed: {str(exc)[:500] or type(exc).__name__}"
            self.conn.respond_error(req.id, jsonrpc.INTERNAL_ERROR, detail)
            return
        self._reply(Reply(req.id, result))

    async def _terminal_request(self, req: Request) -> None:
        try:
            result = await self.terminals.handle(req.method, req.params)
        except RpcError as exc:
            self.conn.respond_error(req.id, exc.code, exc.message)
        except asyncio.CancelledError:
            self.conn.respond_error(req.id, jsonrpc.REQUEST_CANCELLED, "the chat ended")
            raise
        else:
            self.conn.respond(req.id, result)

    def _register(self, rpc_id: jsonrpc.Id, event: RequestEvent, local: bool = False) -> str | None:
        """Open a request (``local``: the chat's own); None, or why it was refused (an
        agent's request is refused by a reply here)."""
        now = _now_ms()
        try:
            event, deadline = self.ledger.register(rpc_id, event, now, local=local)
        except Refused as refused:
            if not local:
                self._reply(refused.reply)
            if refused.notice is not None:
                self._agent_error(refused.notice)
            return refused.reply.error[1] if refused.reply.error else "refused"
        request_id = event["requestId"]
        delay = (deadline - now) / 1000
        timer = asyncio.get_running_loop().call_later(delay, self._time_out, request_id)
        self.pending[request_id] = Deadline(timer)
        self._emit(event)
        return None

    def _permission_request(self, req: Request) -> None:
        params = req.params if isinstance(req.params, dict) else {}
        options = []
        offered = params.get("options")
        for option in offered if isinstance(offered, list) else ():
            if isinstance(option, dict) and isinstance(option.get("optionId"), str):
                options.append(
                    {
                        "optionId": option["optionId"][:MAX_OPTION_TEXT],
                        "name": str(option.get("name") or option["optionId"])[:MAX_OPTION_TEXT],
                        "kind": str(option.get("kind") or "")[:32],
                    }
                )
            if len(options) == MAX_OPTIONS:
                break
        tool_call = params.get("toolCall")
        event: PermissionRequestEvent = {
            "kind": "permission_request",
            "toolCall": bound(tool_call) if isinstance(tool_call, dict) else {},
            "options": options,
        }
        if req.id in self._previews:  # the ledger cannot see it yet
            self.conn.respond_error(req.id, jsonrpc.INVALID_REQUEST, "duplicate request id")
            return
        if self.notebook is None or len(self._previews) >= MAX_OPEN_REQUESTS:
            # No edit to show (or too many waiting for theirs): the card as it is.
            self._register(req.id, event)
            return
        # Its card waits for the edit's diff (bounded); every way out of the wait ends it.
        self._previews[req.id] = asyncio.create_task(self._previewed(req.id, event))

    async def _previewed(self, rpc_id: jsonrpc.Id, event: PermissionRequestEvent) -> None:
        """Attach the edit the tool call would make, then open the request; unless the
        wait was ended (a cancel, the agent gone, a withdrawal), which answered it."""
        assert self.notebook is not None
        edit: CellEdit | None = None
        try:
            edit = await asyncio.wait_for(self.notebook.preview(event["toolCall"]), PREVIEW_TIMEOUT)
        except asyncio.CancelledError:
            if rpc_id in self._previews:  # not ended by us: the task itself was cancelled
                raise
            return
        except Exception:  # a slow or failing preview: the card without its diff
            log.debug("chat %s: no preview for a permission request", self.chat_id, exc_info=True)
        if self._previews.pop(rpc_id, None) is None:
            return
        if isinstance(edit, dict):
            event["edit"] = edit
        self._register(rpc_id, event)

    def _end_previews(self, rpc_id: jsonrpc.Id | None = None) -> None:
        """End requests waiting for their preview: all of them, cancelled (a cancel, the
        agent gone), or the one the agent withdrew (``rpc_id``)."""
        ids = list(self._previews) if rpc_id is None else [rpc_id]
        for one in ids:
            task = self._previews.pop(one, None)
            if task is None:
                continue
            task.cancel()
            if rpc_id is not None:
                self.conn.respond_error(one, jsonrpc.REQUEST_CANCELLED, "request cancelled")
            else:
                self._reply(Reply(one, _CANCELLED))

    def _elicitation_request(self, req: Request) -> None:
        params = req.params if isinstance(req.params, dict) else {}
        mode = params.get("mode", "form")
        if mode == "url":
            self._url_request(req, params)
            return
        if mode != "form":
            self.conn.respond_error(
                req.id, jsonrpc.INVALID_PARAMS, "only form and url elicitation are supported"
            )
            return
        view = take_elicitation_view(params)
        event: ElicitationRequestEvent = {
            "kind": "elicitation_request",
            "message": view.message,
            "fields": view.fields,
        }
        if view.title is not None:
            event["title"] = view.title
        self._ask(req, event, view.tool_call_id)

    def _url_request(self, req: Request, params: dict[str, Any]) -> None:
        """A URL question: a card with the link and its host, or, for a link we do not
        show, an error to the agent and a note in the chat."""
        try:
            asked = take_url_request(params)
        except UrlRefused as refused:
            self.conn.respond_error(
                req.id, jsonrpc.INVALID_PARAMS, f"URL elicitation refused: {refused}"
            )
            self._agent_error(f"The agent asked to open a link that is not shown: {refused}")
            return
        event: ElicitationRequestEvent = {
            "kind": "elicitation_request",
            "message": asked.message,
            "fields": [],
            "url": asked.url,
            "host": asked.host,
        }
        if self._ask(req, event, asked.tool_call_id) is not None:
            return
        self._url_questions.pop(asked.elicitation_id, None)  # a reused id: the newest wins
        self._url_questions[asked.elicitation_id] = event["requestId"]
        if len(self._url_questions) > MAX_OPEN_REQUESTS:
            del self._url_questions[next(iter(self._url_questions))]

    def _ask(
        self, req: Request, event: ElicitationRequestEvent, tool_call_id: str | None
    ) -> str | None:
        """Open a question (see _register)."""
        # An MCP server's question, forwarded by claude's wrapper, names no tool call
        # (reference §12); the MCP tool that asks is the newest one still running.
        tool_call_id = tool_call_id or next(reversed(self._running_tools), None)
        if tool_call_id is not None:
            event["toolCallId"] = tool_call_id
        return self._register(req.id, event)

    def _url_completed(self, params: object) -> None:
        """The agent's ``elicitation/complete``: its URL question settles as completed.
        Unknown ids, and questions declined or cancelled, are ignored (as ACP says)."""
        elicitation_id = params.get("elicitationId") if isinstance(params, dict) else None
        if not isinstance(elicitation_id, str):
            return
        request_id = self._url_questions.pop(elicitation_id, None)
        if request_id is None:
            return
        if self.ledger.get(request_id) is not None:
            # Done before anyone answered: no one consented, so the agent is told cancel.
            self._carry_out(self.ledger.settle(request_id, "completed", "agent"))
        else:
            self._emit(
                {
                    "kind": "elicitation_resolved",
                    "requestId": request_id,
                    "outcome": "completed",
                    "by": "agent",
                }
            )

    def _on_notification(self, note: Notification) -> None:
        update = session_update(note)
        if update is not None and isinstance(update.get("sessionUpdate"), str):
            key = update_chunk_key(update)
            if key is not None:
                self._on_chunk(key, update, update["content"]["text"])
                return
            self._track_tool(update)
            if update["sessionUpdate"] == "session_info_update" and "title" in update:
                title = update["title"]  # an explicit null clears it, as the folds do
                self.title = title[:MAX_TITLE] if isinstance(title, str) and title else None
            self._emit({"kind": "update", "update": bound(update)})
            self.terminals.watch(update)
            if not self._replaying:  # a replayed command's file is of a process gone
                self.background_output.watch(update)
        elif note.method == "elicitation/complete":
            self._url_completed(note.params)
        elif note.method == "$/cancel_request":
            params = note.params if isinstance(note.params, dict) else {}
            rpc_id = params.get("requestId")
            if jsonrpc.valid_id(rpc_id) and rpc_id in self._previews:
                self._end_previews(rpc_id)
                return
            try:
                withdrawn = self.ledger.withdraw(rpc_id)
            except NotFound:
                return  # not a request still open: nothing to withdraw
            self._carry_out(withdrawn)

    def _on_chunk(self, key: tuple[str, object], update: dict[str, Any], text: str) -> None:
        """A text chunk: ``update`` with ``text`` (a line read by its template, chunk_lines.py,
        gives the template's update, which holds another text)."""
        if self._chunks.merge(key, text):  # the next chunk of a run: a list append
            return
        self._flush_chunks()  # the run before came first
        if self._chunks.start(key, update, text):
            # The first of consecutive text chunks read in one go: they become one event
            # once the reader yields to the loop (wire/chunks.py, ChunkBatch).
            asyncio.get_running_loop().call_soon(self._flush_chunks)
        else:  # too long to merge
            self._emit({"kind": "update", "update": bound(with_text(update, text))})

    def _flush_chunks(self) -> None:
        update = self._chunks.take()
        if update is not None:
            self._emit({"kind": "update", "update": update})

    def _track_tool(self, update: dict[str, Any]) -> None:
        kind = update["sessionUpdate"]
        tool_call_id = update.get("toolCallId")
        if kind not in ("tool_call", "tool_call_update") or not isinstance(tool_call_id, str):
            return
        if len(tool_call_id) > MAX_TOOL_CALL_ID:
            return  # could not be sent as an elicitation's toolCallId anyway
        # A tool_call without a status is pending (ACP's default); an update without one
        # leaves it as it was.
        status = update.get("status", "pending" if kind == "tool_call" else None)
        if status in ("pending", "in_progress"):
            self._running_tools.setdefault(tool_call_id, None)
            if len(self._running_tools) > MAX_RUNNING_TOOLS:
                del self._running_tools[next(iter(self._running_tools))]  # the oldest
        elif status is not None:
            self._running_tools.pop(tool_call_id, None)

    def _agent_error(self, message: str) -> None:
        """Something the agent did wrong that the chat survives (a line it skipped)."""
        self._emit({"kind": "agent_error", "message": message})

    def _on_exit(self, code: int | None) -> None:
        """Once per chat: the connection calls it once, and only for a process it started."""
        self._end_previews()
        self._end_served()
        self._carry_out(*self.ledger.settle_all())
        # Accepted URL questions wait for a completion the agent can no longer send.
        for request_id in self._url_questions.values():
            self._emit(
                {"kind": "elicitation_resolved", "requestId": request_id, "outcome": "cancelled"}
            )
        self._url_questions.clear()
        self.terminals.kill_all()  # nobody is left to read them
        self.sign_in.end()
        self.status = "exited"
        self._drop_queue("exited")
        self.exit_detail = self.exit_detail or (
            "the agent stopped" if code == 0 else f"the agent exited with code {code}"
        )
        self._emit(
            {
                "kind": "agent_status",
                "status": "exited",
                "agent": self.spec.name,
                "detail": self.exit_detail,
                "exitCode": code,
                "stderrTail": self.conn.stderr_tail,
            }
        )


def _offers_mode(modes: Any, mode_id: str) -> bool:
    """Whether to ask for ``mode_id``: the agent lists it, or lists no modes (let it say no)."""
    available = modes.get("availableModes") if isinstance(modes, dict) else None
    if not isinstance(available, list):
        return True
    # A list, not a set: an agent's id may be any JSON value, an unhashable one too.
    ids = [m.get("id") for m in available if isinstance(m, dict)]
    return not ids or mode_id in ids


def _show_mode(new: dict[str, Any], mode_id: str) -> None:
    """Make session/new's result say the mode we set, in ``modes`` and the mode option."""
    if isinstance(new.get("modes"), dict):
        new["modes"] = {**new["modes"], "currentModeId": mode_id}
    options = new.get("configOptions")
    if isinstance(options, list):
        new["configOptions"] = [
            {**o, "currentValue": mode_id}
            if isinstance(o, dict) and "mode" in (o.get("category"), o.get("id"))
            else o
            for o in options
        ]
