"""Fold the chat's stream events into a transcript state; the twin of ``js/src/fold.ts``.

``fold`` is pure protocol logic: no I/O, deterministic, O(1) amortized per event (it
mutates and returns its input). ``snapshot`` renders the state as the plain JSON of
the spec (``FoldSnapshot``), which the shared vectors in ``tests/vectors/fold`` pin for
both languages; ``restore`` makes a foldable state of one again.

Both folds have the same sections, with the same functions in the same order (the TS
side takes ``str`` and ``records`` from dom.ts). The readers at the end are the
kernel's and the history's; the widget reads its state directly.

Agent payloads (``update`` events) are passed through by the bridge unvalidated, so
every read of them checks its type and anything malformed is skipped, never raised.

A kernel's ``Chat`` folds every event of a chat's life, so the state is bounded like
the server's history (``history.py``): past ``max_items`` items or ``max_weight``
characters of text and payloads, the oldest items go (a pending request's card never),
and a message larger than that keeps its end; ``snapshot`` then says what went.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from pydantic import ValidationError

from .attachment_blocks import resource_name
from .clip import clip_start
from .contracts import FOLD_MAX_ITEMS as MAX_ITEMS
from .contracts import FOLD_MAX_WEIGHT as MAX_WEIGHT
from .contracts import FOLD_TERMINAL_MAX as TERMINAL_MAX
from .contracts import (
    AccessView,
    AgentStatusEvent,
    AuthEvent,
    AuthView,
    Dropped,
    FoldSnapshot,
    Phase,
    QueueEvent,
    RequestEvent,
    ResolvedEvent,
    StreamEvent,
    TerminalView,
    fold_snapshot,
    is_request,
)

Json = Any
Activity = Literal["thinking", "responding", "tool"]
RequestKind = Literal["permission", "elicitation"]

# sessionUpdate kind -> transcript item type.
_CHUNK_TYPES = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}
_RUNNING = ("pending", "in_progress")
_TOOL_TEXTS = ("title", "kind", "status")
_TOOL_LISTS = ("content", "locations")
_TOOL_KEYS = (*_TOOL_TEXTS, *_TOOL_LISTS, "rawInput", "rawOutput")
# A request's own fields: what its card weighs once settled ("edit": an edit's card only).
_PERMISSION_FIELDS = ("toolCall", "options", "deadline", "edit")
_ELICITATION_FIELDS = ("message", "fields", "toolCallId", "title", "deadline", "url", "host")


@dataclass(slots=True)
class Item:
    """One transcript entry; text is kept as parts so appending a chunk never copies."""

    type: str
    parts: list[str] = field(default_factory=list)
    message_id: str | None = None
    start_ts: float | None = None
    end_ts: float | None = None
    # toolCallId for "tool" items, requestId for "permission"/"elicitation" items.
    ref: str | None = None
    # A user item's attachment summaries (turn_started's ``attachments``), when it had any.
    attachments: list[dict[str, Json]] | None = None
    # Characters in parts: what the item counts towards the state's weight.
    size: int = 0

    def text(self) -> str:
        # Compacting on read keeps repeated snapshots of a long message linear.
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""


@dataclass(slots=True)
class Terminal:
    """A tool call's terminal (claude's ``_meta.terminal_*``); its output is kept as parts
    and cut to its last ``TERMINAL_MAX`` characters once it holds twice that, so that
    appending a line never copies the rest."""

    terminal_id: str
    parts: list[str] = field(default_factory=list)
    size: int = 0
    cut: int = 0
    exited: bool = False
    exit_code: int | None = None
    signal: str | None = None

    def append(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size > 2 * TERMINAL_MAX:
            _keep_end(self)

    def view(self) -> TerminalView:
        _keep_end(self)
        return {
            "terminalId": self.terminal_id,
            "output": self.parts[0] if self.parts else "",
            "cut": self.cut,
            "exited": self.exited,
            "exitCode": self.exit_code,
            "signal": self.signal,
        }


@dataclass(slots=True)
class ChatState:
    """The folded chat; read it through ``snapshot`` and the helpers below."""

    seq: int = 0
    agent: dict[str, Json] = field(
        default_factory=lambda: {
            "status": "starting",
            "detail": None,
            "name": None,
            "info": None,
            "capabilities": None,
            "sessionId": None,
            "exitCode": None,
            "stderrTail": None,
        }
    )
    active: bool = False
    # What the agent was last seen doing in the active turn (the phase before "waiting").
    activity: Activity = "thinking"
    stop_reason: str | None = None
    error: str | None = None
    items: list[Item] = field(default_factory=list)
    tool_calls: dict[str, dict[str, Json]] = field(default_factory=dict)
    # The tool calls' terminals, by toolCallId; a snapshot shows each as its call's "terminal".
    terminals: dict[str, Terminal] = field(default_factory=dict)
    plan: list[dict[str, Json]] = field(default_factory=list)
    usage: dict[str, Json] | None = None
    modes: dict[str, Json] | None = None
    config_options: list[dict[str, Json]] | None = None
    commands: list[dict[str, Json]] = field(default_factory=list)
    title: str | None = None
    permissions: dict[str, dict[str, Json]] = field(default_factory=dict)
    elicitations: dict[str, dict[str, Json]] = field(default_factory=dict)
    # The item a chunk may still append to; None after a non-chunk item or a new turn.
    tail: Item | None = None
    # The thought item whose endTs is not known yet.
    open_thought: Item | None = None
    # Tool calls of the current turn still pending or in progress.
    running: set[str] = field(default_factory=set)
    # Unsettled requests in arrival order (a dict used as an ordered set).
    pending: dict[tuple[RequestKind, str], None] = field(default_factory=dict)
    # Index of the last user item, for last_agent_text.
    last_user: int = -1
    max_items: int = MAX_ITEMS
    max_weight: int = MAX_WEIGHT
    # Approximate characters held (texts, tool calls, requests), pending requests apart.
    weight: int = 0
    # Each card's payload sizes by key, so that an update replacing one counts once.
    card_sizes: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    # What the bounds took; None until they took something.
    dropped: Dropped | None = None
    # The chat's "accept edits" setting; None until an edit_policy event said it.
    accept_edits: bool | None = None
    # Who may act on the chat; None until an access event said it.
    access: AccessView | None = None
    # The prompts waiting for the running turn; None until a queue event said it.
    queue: list[dict[str, Json]] | None = None
    # The sign-in; None until an auth event said it.
    auth: AuthView | None = None


def initial_state(max_items: int = MAX_ITEMS, max_weight: int = MAX_WEIGHT) -> ChatState:
    return ChatState(max_items=max_items, max_weight=max_weight)


def restore(
    snap: FoldSnapshot, max_items: int = MAX_ITEMS, max_weight: int = MAX_WEIGHT
) -> ChatState:
    """Rebuilds a foldable state from a snapshot (saved, or a resync's), weighed like a
    fold's. A snapshot is anyone's (a notebook file): one of another shape raises
    ``ValueError`` saying what is wrong."""
    try:
        # Checked only: the validated copy would add the absent optional keys as nulls.
        fold_snapshot.validate_python(snap, strict=True)
    except ValidationError as exc:
        raise ValueError(f"not a fold snapshot: {exc}") from None
    state = initial_state(max_items, max_weight)
    state.seq = snap["seq"]
    state.agent = dict(snap["agent"])
    turn = snap["turn"]
    state.active, state.stop_reason, state.error = turn["active"], turn["stopReason"], turn["error"]
    if turn["phase"] in ("thinking", "responding", "tool"):
        state.activity = turn["phase"]
    for shown in snap["items"]:
        raw = cast(dict[str, Json], shown)
        text = raw.get("reason" if raw["type"] == "stopped" else "text")
        ref = raw.get("toolCallId", raw.get("requestId"))
        item = Item(raw["type"], [] if text is None else [text], raw.get("messageId"), ref=ref)
        item.start_ts, item.end_ts = raw.get("startTs"), raw.get("endTs")
        item.attachments = raw.get("attachments")
        _add(state, item)
    state.plan, state.commands, state.title = snap["plan"], snap["commands"], snap["title"]
    state.usage = cast("dict[str, Json] | None", snap["usage"])
    # A copy: a current_mode_update sets its currentModeId in place.
    state.modes = None if snap["modes"] is None else dict(snap["modes"])
    state.config_options = snap["configOptions"]
    for tool_id, call in snap["toolCalls"].items():
        state.tool_calls[tool_id] = {k: v for k, v in call.items() if k != "terminal"}
        sizes = {key: _size(state.tool_calls[tool_id][key]) for key in _TOOL_KEYS}
        if "terminal" in call:
            saved = call["terminal"]
            term = Terminal(saved["terminalId"], cut=saved["cut"], exited=saved["exited"])
            term.exit_code, term.signal = saved["exitCode"], saved["signal"]
            term.append(saved["output"])
            state.terminals[tool_id] = term
            sizes["terminal"] = term.size
        state.card_sizes[("tool", tool_id)] = sizes
        state.weight += sum(sizes.values())
    cards: list[tuple[RequestKind, Mapping[str, Mapping[str, Json]], tuple[str, ...]]] = [
        ("permission", snap["permissions"], _PERMISSION_FIELDS),
        ("elicitation", snap["elicitations"], _ELICITATION_FIELDS),
    ]
    for kind, table, keys in cards:
        for request_id, entry in table.items():
            (state.permissions if kind == "permission" else state.elicitations)[request_id] = {
                **entry
            }
            # Weighed as _request weighs its fields: the entry without its id and outcome.
            size = _size({key: entry[key] for key in keys if key in entry})
            state.card_sizes[(kind, request_id)] = {"": size}
            if entry["outcome"] is None:
                state.pending[(kind, request_id)] = None
            else:
                state.weight += size
    state.accept_edits = snap.get("acceptEdits")
    if "access" in snap:
        state.access = dict(snap["access"])  # type: ignore[assignment]
    if "queue" in snap:
        state.queue = [dict(q) for q in snap["queue"]]
    if "auth" in snap:
        state.auth = dict(snap["auth"])  # type: ignore[assignment]
    if "dropped" in snap:
        dropped = snap["dropped"]
        state.dropped = {
            "items": _count(dropped["items"]),
            "characters": _count(dropped["characters"]),
        }
    if len(state.items) > state.max_items or state.weight > state.max_weight:
        _compact(state)
    return state


def fold(state: ChatState, event: StreamEvent) -> ChatState:
    seq = event.get("seq")
    seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else 0
    ts = _num(event.get("ts"))
    if is_request(event):
        # Resync re-sends pending requests after the history, with their old seq.
        state.seq = max(state.seq, seq)
        _request(state, event, ts)
        if len(state.items) > state.max_items:
            _compact(state)
        return state
    if seq <= state.seq:
        return state
    state.seq = seq
    if "kind" not in event:  # malformed: only its seq counts
        return state
    if event["kind"] == "update":
        update = event.get("update")
        if isinstance(update, dict):
            _update(state, update, ts)
    elif event["kind"] == "turn_started":
        _close_thought(state, ts)
        _add(state, _user_item(event))
        state.active, state.activity = True, "thinking"
        state.stop_reason = state.error = None
        state.running.clear()
    elif event["kind"] == "turn_ended":
        _close_thought(state, ts)
        _end_turn(state)
        state.stop_reason = _str(event.get("stopReason"))
        state.error = _str(event.get("error"))
        if state.error is not None:
            _add(state, Item("error", [state.error]))
        elif state.stop_reason not in (None, "end_turn"):
            # Cut short (stopped, or a limit the agent met): the transcript says so there.
            _add(state, Item("stopped", [state.stop_reason]))
    elif event["kind"] == "agent_status":
        _close_thought(state, ts)
        _agent_status(state, event)
    elif event["kind"] == "agent_error":
        message = _str(event.get("message"))
        if message:
            _add(state, Item("error", [message]))
    elif event["kind"] == "permission_resolved" or event["kind"] == "elicitation_resolved":
        _resolve(state, event, ts)
    elif event["kind"] == "edit_policy":
        accept = event.get("acceptEdits")
        if isinstance(accept, bool):
            state.accept_edits = accept
    elif event["kind"] == "access":
        share = event.get("share")
        state.access = {
            "owner": _str(event.get("owner")),
            "ownerName": _str(event.get("ownerName")),
            "share": "anyone" if share == "anyone" else None,
        }
    elif event["kind"] == "queue":
        _queue(state, event)
    elif event["kind"] == "auth":
        _auth(state, event)
    if len(state.items) > state.max_items or state.weight > state.max_weight:
        _compact(state)
    return state


def snapshot(state: ChatState) -> FoldSnapshot:
    """The spec's JSON; its containers are fresh, agent payloads inside are shared (read-only).

    After the bounds took something, ``dropped`` says what: ``{"items": n, "characters": n}``.
    """
    snap: dict[str, Json] = {
        "seq": state.seq,
        "agent": dict(state.agent),
        "turn": {
            "active": state.active,
            "phase": _phase(state),
            "stopReason": state.stop_reason,
            "error": state.error,
        },
        "items": [_item_json(item) for item in state.items],
        "toolCalls": _tool_table(state),
        "plan": list(state.plan),
        "usage": None if state.usage is None else dict(state.usage),
        "modes": None if state.modes is None else dict(state.modes),
        "configOptions": None if state.config_options is None else list(state.config_options),
        "commands": list(state.commands),
        "title": state.title,
        "permissions": _copy_table(state.permissions),
        "elicitations": _copy_table(state.elicitations),
    }
    if state.accept_edits is not None:
        snap["acceptEdits"] = state.accept_edits
    if state.access is not None:
        snap["access"] = dict(state.access)
    if state.queue is not None:
        snap["queue"] = [dict(q) for q in state.queue]
    if state.auth is not None:
        snap["auth"] = dict(state.auth)
    if state.dropped is not None:
        snap["dropped"] = dict(state.dropped)
    return cast(FoldSnapshot, snap)


def _phase(state: ChatState) -> Phase:
    if not state.active:
        return "idle"
    return "waiting" if state.pending else state.activity


# ---------------------------------------------------------------- session/update


def _update(state: ChatState, update: Mapping[str, Json], ts: float | None) -> None:
    kind = update.get("sessionUpdate")
    if not isinstance(kind, str):
        return
    chunk_type = _CHUNK_TYPES.get(kind)
    if chunk_type is not None:
        _chunk(state, chunk_type, update, ts)
    elif kind in ("tool_call", "tool_call_update"):
        _tool(state, kind == "tool_call", update, ts)
    elif _set_part(state, kind, update):
        _close_thought(state, ts)  # every update of the state ends a running thought


def _set_part(state: ChatState, kind: str, update: Mapping[str, Json]) -> bool:
    """Sets the part of the state an update of ``kind`` carries; False for another kind."""
    if kind == "plan":
        state.plan = _records(update.get("entries"))
    elif kind == "usage_update":
        state.usage = {
            "used": _num(update.get("used")),
            "size": _num(update.get("size")),
            "cost": _object(update.get("cost")),
        }
    elif kind == "current_mode_update":
        if state.modes is None:
            state.modes = {"currentModeId": None, "availableModes": []}
        state.modes["currentModeId"] = _str(update.get("currentModeId"))
    elif kind == "config_option_update":
        state.config_options = _records(update.get("configOptions"))
    elif kind == "available_commands_update":
        state.commands = _records(update.get("availableCommands"))
    elif kind == "session_info_update":
        # An absent title leaves it alone; an explicit null clears it.
        if "title" in update:
            state.title = _str(update.get("title"))
    else:
        return False
    return True


def _chunk(state: ChatState, item_type: str, update: Mapping[str, Json], ts: float | None) -> None:
    message_id = _str(update.get("messageId"))
    tail = state.tail
    if tail is None or tail.type != item_type or tail.message_id != message_id:
        _close_thought(state, ts)
        tail = Item(item_type, message_id=message_id)
        if item_type == "thought":
            tail.start_ts = ts
            state.open_thought = tail
        _add(state, tail)
        state.tail = tail
    elif tail is not state.open_thought and item_type == "thought":
        # More of a thought that something else had closed: it goes on.
        tail.end_ts = None
        state.open_thought = tail
    text = _block_text(update.get("content"))
    tail.parts.append(text)
    tail.size += len(text)
    state.weight += len(text)
    if state.active:
        state.activity = "thinking" if item_type == "thought" else "responding"


def _block_text(block: Json) -> str:
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return _str(block.get("text")) or ""
    # A resource by its name (a variable's, a file's), never its raw URI.
    if kind == "resource_link":
        uri = _str(block.get("uri"))
        return f"[{_str(block.get('name')) or (uri and resource_name(uri)) or kind}]"
    if kind == "resource":
        inner = block.get("resource")
        uri = _str(inner.get("uri")) if isinstance(inner, dict) else None
        return f"[{(uri and resource_name(uri)) or kind}]"
    return f"[{kind}]" if isinstance(kind, str) else ""


def _tool(
    state: ChatState, is_new_call: bool, update: Mapping[str, Json], ts: float | None
) -> None:
    tool_id = _card_id(state, update, "toolCallId", ts)
    if tool_id is None:
        return
    tool = state.tool_calls.get(tool_id)
    if tool is None:
        _add(state, Item("tool", ref=tool_id))
    if tool is None or is_new_call:
        # tool_call replaces the whole entry; an update for an unseen id (its
        # tool_call fell out of the history ring) starts one from the defaults.
        tool = {
            "toolCallId": tool_id,
            "title": None,
            "kind": None,
            "status": "pending",
            "content": [],
            "locations": [],
            "rawInput": None,
            "rawOutput": None,
        }
        state.tool_calls[tool_id] = tool
        state.terminals.pop(tool_id, None)
        _forget_sizes(state, ("tool", tool_id))
    sizes = state.card_sizes.setdefault(("tool", tool_id), {})
    meta = update.get("_meta")
    if isinstance(meta, dict):
        _terminal(state, tool_id, meta, sizes)
    for key in _TOOL_KEYS:
        if key in update:
            value = update[key]
            size = _size(value)
            state.weight += size - sizes.get(key, 0)
            sizes[key] = size
            if key in _TOOL_TEXTS:
                value = _str(value)
            elif key in _TOOL_LISTS:
                value = _records(value)
            tool[key] = value
    if tool["status"] in _RUNNING:
        state.running.add(tool_id)
    else:
        state.running.discard(tool_id)
    if state.active:
        state.activity = "tool" if state.running else "thinking"


def _terminal(
    state: ChatState, tool_id: str, meta: Mapping[str, Json], sizes: dict[str, int]
) -> None:
    """Claude's terminal on a tool call: ``terminal_info`` shows it, ``terminal_output``
    replaces its output, ``terminal_output_delta`` appends to it, ``terminal_exit`` ends it
    (in that order when one update carries several)."""
    parts = [
        _object(meta.get(key))
        for key in ("terminal_info", "terminal_output", "terminal_output_delta", "terminal_exit")
    ]
    _, whole, delta, exit_ = parts  # terminal_info only shows the terminal
    term = state.terminals.get(tool_id)
    if term is None:
        given = next((p for p in parts if p is not None), None)
        if given is None:
            return
        term = Terminal(_str(given.get("terminal_id")) or tool_id)
        state.terminals[tool_id] = term
    if whole is not None:
        term.parts.clear()
        term.size = term.cut = 0
        term.append(_str(whole.get("data")) or "")
    if delta is not None:
        term.append(_str(delta.get("data")) or "")
    if exit_ is not None:
        term.exited = True
        code = exit_.get("exit_code")
        term.exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
        term.signal = _str(exit_.get("signal"))
    shown = min(term.size, TERMINAL_MAX)
    state.weight += shown - sizes.get("terminal", 0)
    sizes["terminal"] = shown


# ---------------------------------------------------------------- turns, agent, requests


def _queue(state: ChatState, event: QueueEvent) -> None:
    """The queue as the event lists it; a steered prompt becomes the running turn's."""
    steered = _int(event.get("steered"))
    was = next((q for q in state.queue or () if _int(q.get("turn")) == steered), None)
    if was is not None and state.active:
        _close_thought(state, _num(event.get("ts")))
        _add(state, _user_item(was))
    state.queue = [q for q in _records(event.get("prompts")) if _int(q.get("turn")) is not None]


def _auth(state: ChatState, event: AuthEvent) -> None:
    """The sign-in as the event says it (its methods are the bridge's, bounded)."""
    auth_state = event.get("state")
    if auth_state not in ("required", "signing_in", "signed_in", "signed_out"):
        return
    state.auth = {
        "state": auth_state,
        "methods": cast(Any, _records(event.get("methods"))),
        "logout": event.get("logout") is True,
        "methodId": _str(event.get("methodId")),
        "toolCallId": _str(event.get("toolCallId")),
        "detail": _str(event.get("detail")),
        "by": _str(event.get("by")),
    }


def _user_item(prompt: Mapping[str, Json]) -> Item:
    """A prompt's item: a turn_started event's, or a queued prompt's."""
    attached = _records(prompt.get("attachments"))
    return Item("user", [_str(prompt.get("prompt")) or ""], attachments=attached or None)


def _end_turn(state: ChatState) -> None:
    state.active = False
    state.running.clear()


def _agent_status(state: ChatState, event: AgentStatusEvent) -> None:
    status = _str(event.get("status")) or state.agent["status"]
    detail = _str(event.get("detail"))
    agent = state.agent
    agent["status"] = status
    agent["detail"] = detail
    agent["exitCode"] = _num(event.get("exitCode"))
    agent["stderrTail"] = _str(event.get("stderrTail"))
    # The agent's identity outlives one status; only a new value replaces it.
    if event.get("agent") is not None:
        agent["name"] = _str(event.get("agent"))
    if isinstance(event.get("agentInfo"), dict):
        agent["info"] = event["agentInfo"]
    if isinstance(event.get("agentCapabilities"), dict):
        agent["capabilities"] = event["agentCapabilities"]
    if isinstance(event.get("sessionId"), str):
        agent["sessionId"] = event["sessionId"]
    modes = event.get("modes")
    if isinstance(modes, dict):
        state.modes = {
            "currentModeId": _str(modes.get("currentModeId")),
            "availableModes": _records(modes.get("availableModes")),
        }
    if isinstance(event.get("configOptions"), list):
        state.config_options = _records(event["configOptions"])
    if status == "exited":
        _end_turn(state)
        _add(state, Item("error", [detail or "agent exited"]))


def _request(state: ChatState, event: RequestEvent, ts: float | None) -> None:
    request_id = _card_id(state, event, "requestId", ts)
    if request_id is None:
        return
    kind: RequestKind
    if event["kind"] == "permission_request":
        kind, table = "permission", state.permissions
        fields: dict[str, Json] = {
            "toolCall": _object(event.get("toolCall")),
            "options": _records(event.get("options")),
            "deadline": _num(event.get("deadline")),
        }
        edit = _object(event.get("edit"))
        if edit is not None:
            fields["edit"] = edit
        settled: dict[str, Json] = {"outcome": None, "optionId": None, "by": None}
    else:
        kind, table = "elicitation", state.elicitations
        fields = {
            "message": _str(event.get("message")) or "",
            "fields": _records(event.get("fields")),
            "toolCallId": _str(event.get("toolCallId")),
            "title": _str(event.get("title")),
            "deadline": _num(event.get("deadline")),
        }
        url = _str(event.get("url"))
        if url is not None:  # URL mode: the keys only a URL card has
            fields["url"], fields["host"] = url, _str(event.get("host"))
        settled = {"outcome": None, "by": None}
    # Weighed once it settles: a pending card is never dropped.
    size = _size(fields)
    entry = table.get(request_id)
    if entry is None:
        # A repeated request keeps the outcome it may already have.
        table[request_id] = {"requestId": request_id, **fields, **settled}
        state.pending[(kind, request_id)] = None
        _add(state, Item(kind, ref=request_id))
    else:
        entry.update(fields)
        if (kind, request_id) not in state.pending:
            state.weight += size - _card_size(state, (kind, request_id))
    state.card_sizes[(kind, request_id)] = {"": size}


def _resolve(state: ChatState, event: ResolvedEvent, ts: float | None) -> None:
    request_id = _str(event.get("requestId"))
    kind: RequestKind = "permission" if event["kind"] == "permission_resolved" else "elicitation"
    table = state.permissions if kind == "permission" else state.elicitations
    if request_id is None or (entry := table.get(request_id)) is None:
        return
    _close_thought(state, ts)
    entry["outcome"] = _str(event.get("outcome"))
    entry["by"] = _str(event.get("by"))  # who answered: a Jupyter user, "kernel", "agent"
    if kind == "permission":
        entry["optionId"] = _str(event.get("optionId"))
    elif isinstance(values := event.get("values"), dict):
        entry["values"] = values  # the bridge checked it against the fields (bounded)
    if state.pending.pop((kind, request_id), False) is None:
        state.weight += _card_size(state, (kind, request_id))


# ---------------------------------------------------------------- helpers


def _add(state: ChatState, item: Item) -> None:
    item.size = _item_size(item)
    state.weight += item.size
    state.items.append(item)
    state.tail = None
    if item.type == "user":
        state.last_user = len(state.items) - 1


def _compact(state: ChatState) -> None:
    """Drop the oldest items until the state is a tenth under its bounds (so this runs
    once per many events); never a pending request's card, nor the newest item, whose
    text keeps its end when it alone is over."""
    items = state.items
    max_items, max_weight = state.max_items * 9 // 10, state.max_weight * 9 // 10
    kept: list[Item] = []
    i = 0
    while i < len(items) - 1 and (
        len(kept) + len(items) - i > max_items or state.weight > max_weight
    ):
        item = items[i]
        i += 1
        if item.ref is not None and (item.type, item.ref) in state.pending:
            kept.append(item)
        else:
            _forget(state, item)
    state.items = kept + items[i:]
    newest = state.items[-1]
    if state.weight > max_weight and newest.ref is None:
        text = newest.text()
        keep = max(1024, len(text) - (state.weight - max_weight))
        if keep < len(text):
            newest.parts[:] = [clip_start(text, keep)]
            _dropped_of(state)["characters"] += len(text) - keep + 1
            state.weight -= newest.size - keep
            newest.size = keep
    state.last_user = next(
        (n for n in range(len(state.items) - 1, -1, -1) if state.items[n].type == "user"), -1
    )


def _forget(state: ChatState, item: Item) -> None:
    """Drop one item and the tool call or request it shows."""
    _dropped_of(state)["items"] += 1
    state.weight -= item.size
    if item is state.open_thought:
        state.open_thought = None
    if item.ref is None:
        return
    _forget_sizes(state, (item.type, item.ref))
    if item.type == "tool":
        state.tool_calls.pop(item.ref, None)
        state.terminals.pop(item.ref, None)
        state.running.discard(item.ref)
    else:
        (state.permissions if item.type == "permission" else state.elicitations).pop(item.ref, None)


def _dropped_of(state: ChatState) -> Dropped:
    if state.dropped is None:
        state.dropped = {"items": 0, "characters": 0}
    return state.dropped


def _forget_sizes(state: ChatState, key: tuple[str, str]) -> None:
    state.weight -= _card_size(state, key)
    state.card_sizes.pop(key, None)


def _card_size(state: ChatState, key: tuple[str, str]) -> int:
    return sum(state.card_sizes.get(key, {}).values())


def _item_size(item: Item) -> int:
    return sum(map(len, item.parts))


def _size(value: Json) -> int:
    """About the characters ``value`` holds as JSON (one C pass; a bound, not a measure)."""
    if isinstance(value, str):
        return len(value)
    try:
        return len(json.dumps(value, ensure_ascii=False, check_circular=False, default=str))
    except (ValueError, TypeError, RecursionError):
        return 0


def _card_id(state: ChatState, event: Mapping[str, Json], key: str, ts: float | None) -> str | None:
    """The id of the card an event opens or updates; a card ends the running thought."""
    card_id = _str(event.get(key))
    if card_id is not None:
        _close_thought(state, ts)
    return card_id


def _close_thought(state: ChatState, ts: float | None) -> None:
    if state.open_thought is not None:
        state.open_thought.end_ts = ts
        state.open_thought = None


def _item_json(item: Item) -> dict[str, Json]:
    if item.type in ("user", "error"):
        if item.attachments is not None:
            return {"type": item.type, "text": item.text(), "attachments": item.attachments}
        return {"type": item.type, "text": item.text()}
    if item.type == "stopped":
        return {"type": "stopped", "reason": item.text()}
    if item.type == "agent":
        return {"type": "agent", "messageId": item.message_id, "text": item.text()}
    if item.type == "thought":
        return {
            "type": "thought",
            "messageId": item.message_id,
            "text": item.text(),
            "startTs": item.start_ts,
            "endTs": item.end_ts,
        }
    key = "toolCallId" if item.type == "tool" else "requestId"
    return {"type": item.type, key: item.ref}


def _tool_table(state: ChatState) -> dict[str, Json]:
    return {tool_id: _tool_view(state, tool_id) for tool_id in state.tool_calls}


def _tool_view(state: ChatState, tool_id: str) -> dict[str, Json]:
    """A copy of a tool call as the snapshot shows it: with its terminal, if it has one."""
    view = dict(state.tool_calls[tool_id])
    term = state.terminals.get(tool_id)
    if term is not None:
        view["terminal"] = term.view()
    return view


def _keep_end(term: Terminal) -> None:
    """Cuts a terminal's output to its last ``TERMINAL_MAX`` characters, counting the cut."""
    text = "".join(term.parts)
    over = len(text) - TERMINAL_MAX
    if over > 0:
        term.cut += over
        text = text[over:]
    term.parts[:] = [text] if text else []
    term.size = len(text)


def _copy_table(table: Mapping[str, dict[str, Json]]) -> dict[str, Json]:
    return {key: dict(value) for key, value in table.items()}


def _count(value: Json) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def _int(value: Json) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Json) -> str | None:
    return value if isinstance(value, str) else None


def _num(value: Json) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _object(value: Json) -> dict[str, Json] | None:
    return value if isinstance(value, dict) else None


def _records(value: Json) -> list[dict[str, Json]]:
    """The object elements of a list from the agent; anything else counts as empty."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


# ---------------------------------------------------------------- readers


def pending_requests(state: ChatState) -> list[dict[str, Json]]:
    """Unsettled permissions and elicitations in arrival order, each with its ``type``."""
    return [
        {"type": kind, **(state.permissions if kind == "permission" else state.elicitations)[rid]}
        for kind, rid in state.pending
    ]


def last_agent_text(state: ChatState) -> str:
    """The agent's messages since the last user item, one paragraph per message."""
    texts = [item.text() for item in state.items[state.last_user + 1 :] if item.type == "agent"]
    return "\n\n".join(texts)


def last_tool_calls(state: ChatState) -> list[dict[str, Json]]:
    """The tool calls since the last user item, in order (copies)."""
    items = state.items[state.last_user + 1 :]
    tools = state.tool_calls
    return [_tool_view(state, i.ref) for i in items if i.type == "tool" and i.ref in tools]


def sets_state(kind: str) -> bool:
    """Whether a session/update of ``kind`` sets a part of the state as a whole (the
    latest one says all of it)."""
    return _set_part(ChatState(), kind, {})
