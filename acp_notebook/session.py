"""One chat: an ACP session with one agent, mapped onto our stream events.

``ChatSession`` is the seed's ``DaemonSession``: it starts the agent, runs turns,
keeps every permission and question the agent is waiting on (``requestId`` ->
JSON-RPC id + backstop timer) and makes sure each ends exactly once, with one
answer to the agent and one ``*_resolved`` event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from . import __version__, jsonrpc
from .agents import AgentSpec
from .connection import AgentConnection
from .contracts import MAX_TOOL_CALL_ID
from .elicitation import AnswerError, take_elicitation_view, validate_answer
from .events import Event, bound, chunk_key
from .history import History
from .jsonrpc import Notification, Request, RpcError

log = logging.getLogger(__name__)

MAX_OPTIONS = 16
MAX_OPTION_TEXT = 256


@dataclass(frozen=True)
class SessionConfig:
    answer_timeout: float = 60.0  # the hub's watchdog; shown to people as a countdown
    backstop_grace: float = 15.0  # the session cancels on its own this long after that
    start_timeout: float = 180.0  # npx may download the agent on first use
    history_events: int = 5000
    history_bytes: int = 8 * 1024 * 1024


class NotFound(LookupError):
    """No pending request with that id (unknown, or already settled)."""


class Busy(RuntimeError):
    pass


class AgentExited(RuntimeError):
    pass


@dataclass
class Pending:
    kind: Literal["permission", "elicitation"]
    rpc_id: jsonrpc.Id
    event: Event
    timer: asyncio.TimerHandle | None = None
    fields: list[dict[str, Any]] = field(default_factory=list)
    option_ids: frozenset[str] = frozenset()


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
        sink: Callable[[Event], None] = lambda event: None,
    ) -> None:
        self.chat_id = chat_id
        self.spec = spec
        self.cwd = cwd
        self.mcp_servers = [dict(s) for s in mcp_servers]
        self.config = config
        self.sink = sink
        self.history = History(config.history_events, config.history_bytes)
        self.pending: dict[str, Pending] = {}
        self.status: Literal["starting", "ready", "exited"] = "starting"
        self.session_id: str | None = None
        self.turn = 0
        self.turn_active = False
        self._seq = 0
        self._by_rpc_id: dict[jsonrpc.Id, str] = {}
        # Tool calls of this turn still pending/in_progress, oldest first (a dict as an
        # ordered set): the likely source of a question that names no tool call.
        self._running_tools: dict[str, None] = {}
        self._turn_task: asyncio.Task[None] | None = None
        self._end_reason: str | None = None
        self.conn = AgentConnection(
            spec.argv,
            env={**os.environ, **spec.env},
            cwd=cwd,
            on_request=self._on_request,
            on_notification=self._on_notification,
            on_exit=self._on_exit,
        )

    # ------------------------------------------------------------ events

    def _emit(self, event: Event) -> None:
        self._seq += 1
        event["seq"] = self._seq
        event["ts"] = _now_ms()
        self.history.append(event)
        self.sink(event)

    def resync(self) -> list[Event]:
        """The bounded history, then every pending request (never cancels anything)."""
        events = self.history.events()
        shown = {e.get("requestId") for e in events if e["kind"].endswith("_request")}
        # A pending card whose event has left the bounded history is re-sent after it.
        return events + [p.event for rid, p in self.pending.items() if rid not in shown]

    @property
    def last_seq(self) -> int:
        return self._seq

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start the agent and open a session; failures end in ``agent_status exited``."""
        self._emit({"kind": "agent_status", "status": "starting", "agent": self.spec.name})
        try:
            await self.conn.start()
        except OSError as exc:
            self._exited(None, f"could not start {self.spec.argv[0]!r}: {exc.strerror or exc}")
            return
        try:
            init, new = await asyncio.wait_for(self._handshake(), self.config.start_timeout)
        except (RpcError, asyncio.TimeoutError) as exc:
            detail = (
                f"the agent did not start within {self.config.start_timeout:g} s"
                if isinstance(exc, asyncio.TimeoutError)
                else f"the agent refused to start: {exc.message}"
            )
            log.info("chat %s: %s", self.chat_id, detail)
            self._end_reason = detail  # what _on_exit reports once we have ended the agent
            await self.conn.close()
            return
        self.status = "ready"
        self._emit(
            {
                "kind": "agent_status",
                "status": "ready",
                "agent": self.spec.name,
                "agentInfo": bound(init.get("agentInfo")) if isinstance(init, dict) else None,
                "modes": bound(new.get("modes")),
                "configOptions": bound(new.get("configOptions")),
            }
        )

    async def _handshake(self) -> tuple[Any, dict[str, Any]]:
        init = await self.conn.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": False, "writeTextFile": False},
                    "terminal": False,
                    "elicitation": {"form": {}},
                },
                "clientInfo": {
                    "name": "acp_notebook",
                    "title": "Jupyter ACP",
                    "version": __version__,
                },
            },
        )
        # Not in ACP v1 and harmless; older wrappers waited for it.
        self.conn.notify("initialized", {})
        new = await self.conn.request(
            "session/new", {"cwd": self.cwd, "mcpServers": self.mcp_servers}
        )
        if not isinstance(new, dict) or not isinstance(new.get("sessionId"), str):
            raise RpcError(jsonrpc.INVALID_PARAMS, "session/new returned no sessionId")
        self.session_id = new["sessionId"]
        if self.spec.mode:
            modes = new.get("modes")
            available = (
                {
                    m.get("id")
                    for m in (modes or {}).get("availableModes", [])
                    if isinstance(m, dict)
                }
                if isinstance(modes, dict)
                else set()
            )
            if self.spec.mode in available or not available:
                await self.conn.request(
                    "session/set_mode", {"sessionId": self.session_id, "modeId": self.spec.mode}
                )
                if isinstance(modes, dict):
                    new["modes"] = {**modes, "currentModeId": self.spec.mode}
        return init, new

    async def close(self) -> None:
        """Tear down: every pending request answered, timers cleared, process group ended."""
        for request_id in list(self.pending):
            self._settle(request_id, "cancelled", by="teardown")
        await self.conn.close()
        if self._turn_task is not None:
            self._turn_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._turn_task

    # ------------------------------------------------------------ turns

    def prompt(self, text: str, by: str | None = None) -> int:
        """Start a turn; returns its number. The turn runs until the agent answers."""
        if self.status != "ready":
            raise AgentExited(f"the agent is {self.status}")
        if self.turn_active:
            raise Busy("a turn is already running; cancel it or wait for it to end")
        self.turn += 1
        self.turn_active = True
        event: Event = {"kind": "turn_started", "turn": self.turn, "prompt": text}
        if by:
            event["by"] = by
        self._emit(event)
        self._turn_task = asyncio.create_task(self._run_turn(self.turn, text))
        return self.turn

    async def _run_turn(self, turn: int, text: str) -> None:
        ended: Event = {"kind": "turn_ended", "turn": turn}
        try:
            result = await self.conn.request(
                "session/prompt",
                {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]},
            )
            reason = result.get("stopReason") if isinstance(result, dict) else None
            ended["stopReason"] = reason if isinstance(reason, str) else "end_turn"
        except RpcError as exc:
            ended["error"] = exc.message[:2048]
        finally:
            self.turn_active = False
            self._running_tools.clear()
            self._emit(ended)

    def cancel(self) -> None:
        """``session/cancel``: every pending request of the turn is cancelled too."""
        if self.status != "ready":
            return
        # session/cancel first, so the agent reads the cancelled answers as part of it.
        if self.turn_active:
            self.conn.notify("session/cancel", {"sessionId": self.session_id})
        for request_id in list(self.pending):
            self._settle(request_id, "cancelled", by=None)

    async def set_mode(self, mode_id: str) -> None:
        await self.conn.request(
            "session/set_mode", {"sessionId": self.session_id, "modeId": mode_id}
        )
        # Agents report the change with current_mode_update; not all do, so say it ourselves.
        self._emit(
            {
                "kind": "update",
                "update": {"sessionUpdate": "current_mode_update", "currentModeId": mode_id},
            }
        )

    async def set_config(self, config_id: str, value: str | bool) -> None:
        params: dict[str, Any] = {
            "sessionId": self.session_id,
            "configId": config_id,
            "value": value,
        }
        if isinstance(value, bool):
            params["type"] = "boolean"
        result = await self.conn.request("session/set_config_option", params)
        options = result.get("configOptions") if isinstance(result, dict) else None
        if isinstance(options, list):
            self._emit(
                {
                    "kind": "update",
                    "update": {
                        "sessionUpdate": "config_option_update",
                        "configOptions": bound(options),
                    },
                }
            )

    # ------------------------------------------------------------ answers

    def respond_permission(
        self, request_id: str, option_id: str | None, by: str | None = None
    ) -> None:
        """Select ``option_id``, or cancel when it is None."""
        pending = self._pending(request_id, "permission")
        if option_id is not None and option_id not in pending.option_ids:
            raise AnswerError(f"unknown option {option_id!r}")
        self._settle(
            request_id, "selected" if option_id is not None else "cancelled", by, option_id
        )

    def respond_elicitation(
        self, request_id: str, action: str, values: Mapping[str, Any] | None, by: str | None = None
    ) -> None:
        pending = self._pending(request_id, "elicitation")
        result = validate_answer(pending.fields, action, values)
        outcome = {"accept": "accepted", "decline": "declined", "cancel": "cancelled"}[action]
        self._settle(request_id, outcome, by, result=result)

    def expire(self, request_id: str) -> bool:
        """The watchdog (or the backstop) ran out: cancel to the agent, outcome ``timeout``."""
        if request_id not in self.pending:
            return False
        self._settle(request_id, "timeout", by=None)
        return True

    def _pending(self, request_id: str, kind: str) -> Pending:
        pending = self.pending.get(request_id)
        if pending is None or pending.kind != kind:
            raise NotFound(request_id)
        return pending

    def _settle(
        self,
        request_id: str,
        outcome: str,
        by: str | None,
        option_id: str | None = None,
        result: dict[str, Any] | None = None,
        withdrawn: bool = False,
    ) -> None:
        """The one place a pending request ends: one answer, one ``*_resolved``."""
        pending = self.pending.pop(request_id)
        self._by_rpc_id.pop(pending.rpc_id, None)
        if pending.timer is not None:
            pending.timer.cancel()
        if withdrawn:
            self.conn.respond_error(pending.rpc_id, jsonrpc.REQUEST_CANCELLED, "request cancelled")
        elif not self.conn.exited.is_set():
            if pending.kind == "permission":
                answer: dict[str, Any] = (
                    {"outcome": {"outcome": "selected", "optionId": option_id}}
                    if outcome == "selected"
                    else {"outcome": {"outcome": "cancelled"}}
                )
            else:
                answer = result if result is not None else {"action": "cancel"}
            self.conn.respond(pending.rpc_id, answer)
        event: Event = {
            "kind": f"{pending.kind}_resolved",
            "requestId": request_id,
            "outcome": outcome,
        }
        if option_id is not None:
            event["optionId"] = option_id
        if by:
            event["by"] = by
        self._emit(event)

    # ------------------------------------------------------------ from the agent

    def _on_request(self, req: Request) -> None:
        if req.method == "session/request_permission":
            self._permission_request(req)
        elif req.method == "elicitation/create":
            self._elicitation_request(req)
        else:
            # fs/* and terminal/* are not advertised; opencode writes files itself anyway.
            self.conn.respond_error(
                req.id, jsonrpc.METHOD_NOT_FOUND, f"method not found: {req.method}"
            )

    def _register(
        self,
        kind: Literal["permission", "elicitation"],
        rpc_id: jsonrpc.Id,
        event: Event,
        **extra: Any,
    ) -> None:
        if rpc_id in self._by_rpc_id:
            self.conn.respond_error(rpc_id, jsonrpc.INVALID_REQUEST, "duplicate request id")
            return
        request_id = str(uuid.uuid4())
        event["requestId"] = request_id
        event["deadline"] = _now_ms() + self.config.answer_timeout * 1000
        pending = Pending(kind, rpc_id, event, **extra)
        self.pending[request_id] = pending
        self._by_rpc_id[rpc_id] = request_id
        loop = asyncio.get_running_loop()
        pending.timer = loop.call_later(
            self.config.answer_timeout + self.config.backstop_grace, self.expire, request_id
        )
        self._emit(event)

    def _permission_request(self, req: Request) -> None:
        params = req.params if isinstance(req.params, dict) else {}
        options = []
        for option in params.get("options") or []:
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
        self._register(
            "permission",
            req.id,
            {
                "kind": "permission_request",
                "toolCall": bound(tool_call) if isinstance(tool_call, dict) else {},
                "options": options,
            },
            option_ids=frozenset(o["optionId"] for o in options),
        )

    def _elicitation_request(self, req: Request) -> None:
        params = req.params if isinstance(req.params, dict) else {}
        if params.get("mode", "form") != "form":
            # Only form mode is advertised (seed §"url mode").
            self.conn.respond_error(
                req.id, jsonrpc.INVALID_PARAMS, "only form elicitation is supported"
            )
            return
        view = take_elicitation_view(params)
        event: Event = {
            "kind": "elicitation_request",
            "message": view.message,
            "fields": view.fields,
        }
        # An MCP server's question, forwarded by claude's wrapper, names no tool call
        # (reference §12); the MCP tool that asks is the newest one still running.
        tool_call_id = view.tool_call_id or next(reversed(self._running_tools), None)
        if tool_call_id is not None:
            event["toolCallId"] = tool_call_id
        if view.title is not None:
            event["title"] = view.title
        self._register("elicitation", req.id, event, fields=view.fields)

    def _on_notification(self, note: Notification) -> None:
        if note.method == "session/update":
            params = note.params
            update = params.get("update") if isinstance(params, dict) else None
            if isinstance(update, dict) and isinstance(update.get("sessionUpdate"), str):
                self._track_tool(update)
                event: Event = {"kind": "update", "update": update}
                if chunk_key(event) is None or len(update["content"]["text"]) > 65536:
                    event["update"] = bound(update)
                self._emit(event)
        elif note.method == "$/cancel_request":
            params = note.params if isinstance(note.params, dict) else {}
            request_id = self._by_rpc_id.get(params.get("requestId"))  # type: ignore[arg-type]
            if request_id is not None:
                self._settle(request_id, "cancelled", by="agent", withdrawn=True)

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
        elif status is not None:
            self._running_tools.pop(tool_call_id, None)

    def _exited(self, code: int | None, detail: str) -> None:
        self.status = "exited"
        self._emit(
            {
                "kind": "agent_status",
                "status": "exited",
                "agent": self.spec.name,
                "detail": detail,
                "exitCode": code,
                "stderrTail": self.conn.stderr_tail,
            }
        )

    def _on_exit(self, code: int | None, stderr_tail: str) -> None:
        for request_id in list(self.pending):
            self._settle(request_id, "cancelled", by=None)
        if self.status == "exited":
            return
        detail = self._end_reason or (
            "the agent stopped" if code == 0 else f"the agent exited with code {code}"
        )
        self._exited(code, detail)
