"""``Chat``: the notebook's handle on one agent conversation.

Display it to get the widget; drive it from code with ``await chat.ask(...)``,
answer the agent's questions with ``chat.answer(...)`` or a policy. Events are
folded into ``chat.state`` with the same fold the widget uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, Union, cast

import anywidget
import traitlets

from ..agent import mcp_servers as mcp_servers_shape
from ..agent.auth_methods import env_hint
from ..notebook_tools import attachments, running_cell
from ..notebook_tools.variables import ipython_shell
from ..notebook_tools.waiting import cell_waits
from ..wire import fold as folding
from ..wire.contracts import (
    MAX_NAME,
    SAVED_MIME,
    TRUSTED_TYPES,
    FoldSnapshot,
    Frame,
    StreamEvent,
    TurnEndedEvent,
    error_ack,
)
from ..wire.errors import AuthRequired, ChatError, InvalidRequest, error_for
from . import transcript, turn_display, widget_code
from .card_pointer import Pointers
from .local_transport import Client
from .server_transport import connect, execute_id, why_local
from .turn_view import TurnView

log = logging.getLogger(__name__)
T = TypeVar("T")

ACK_TIMEOUT = 30.0
# The %%agent views a chat keeps sending its events to over the comm (local mode); an
# older one shows what it had, and the whole chat is in the chat's own output.
MAX_TURN_VIEWS = 20


class Action(str, enum.Enum):
    """What a policy may return instead of an answer."""

    DECLINE = "decline"
    CANCEL = "cancel"


DECLINE = Action.DECLINE
CANCEL = Action.CANCEL
__all__ = [
    "CANCEL",
    "DECLINE",
    "Action",
    "AuthRequired",
    "Chat",
    "ChatError",
    "NeedsAnswer",
    "Turn",
]

ElicitationPolicy = Callable[[dict[str, Any]], "Mapping[str, Any] | Action | None"]
PermissionPolicy = Callable[[dict[str, Any]], "str | Action | None"]
# Given an edit (a CellEdit or FileEdit dict): "accept", "reject", or None for a person.
EditPolicy = Callable[[dict[str, Any]], "Literal['accept', 'reject'] | None"]
# What an edit policy's answer selects: the first option of that kind.
_EDIT_OPTION_KINDS = {"accept": "allow_once", "reject": "reject_once"}


# The sign-in states in which the agent waits for the user (ready() says "auth_required").
_SIGN_IN_NEEDED = ("required", "signed_out")


class NeedsAnswer(RuntimeError):
    """A blocking wait hit a question no one can answer while the kernel is blocked."""


@dataclass(frozen=True)
class Turn:
    """One finished turn, as the agent left it."""

    number: int
    text: str
    stop_reason: str | None
    error: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    plan: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    # The chat under the cell shows this turn already (a magic's value): show nothing more.
    shown: bool = field(default=False, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None and self.stop_reason in ("end_turn", None)

    def __repr__(self) -> str:
        # For the REPL and nbval's text/plain; a notebook shows the text (_ipython_display_).
        end = f"error {self.error!r}" if self.error else (self.stop_reason or "ended")
        return f"<Turn {self.number}: {end}, {len(self.text):,} characters>"

    def _repr_html_(self) -> str:
        return turn_display.turn_html(self.text, self.stop_reason, self.error)

    def _ipython_display_(self) -> None:
        """As a cell's value: the answer's text; nothing for a magic's turn, whose chat
        under the cell shows it (``_`` still holds the turn)."""
        if self.shown:
            return
        from IPython.display import display

        bundle = {"text/plain": repr(self), "text/html": self._repr_html_()}
        display(bundle, raw=True)  # type: ignore[no-untyped-call]


Attachable = Union[Sequence[Any], Mapping[str, Any]]
_opened: list[Chat] = []


def _policy_kinds(request: Mapping[str, Any]) -> list[str]:
    """The policies that may decide ``request``, in order: for a notebook edit the edit
    policy, then the one of the request's type."""
    edit = request["type"] == "permission" and isinstance(request.get("edit"), dict)
    return ["edit", request["type"]] if edit else [request["type"]]


def _prompt_message(text: str, attach: Attachable) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "chat:prompt", "text": text}
    if attach:
        message["attachments"] = attachments.attach_all(attach, attachments.user_names())
    return message


# Who local mode says acted (a cell, a click) when the frontend names no user: JupyterLab
# sends every kernel message with an empty header username.
NOTEBOOK_USER = "notebook user"


def _frontend_user() -> str:
    """The user the frontend named in the message the kernel handles now, if it did."""
    parent = getattr(ipython_shell(), "parent_header", None) or {}
    header = parent.get("header") if isinstance(parent, dict) else None
    name = header.get("username") if isinstance(header, dict) else None
    return name.strip()[:MAX_NAME] if isinstance(name, str) and name.strip() else NOTEBOOK_USER


def _accepted(ack: Frame) -> Frame:
    if ack.get("error"):
        raise error_for(ack)
    return ack


def _permission_answer(request_id: str, option_id: str | None) -> dict[str, Any]:
    """The option chosen, or a cancel (None)."""
    answer = {"cancel": True} if option_id is None else {"optionId": option_id}
    return {"type": "chat:permission.respond", "requestId": request_id, **answer}


def _elicitation_answer(
    request_id: str, action: str, values: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    answer = {} if values is None else {"values": dict(values)}
    return {"type": "chat:elicitation.respond", "requestId": request_id, "action": action, **answer}


def _agent_name(agent: str | None, command: Sequence[str] | None) -> str:
    """What a chat calls its agent: its name, else its program's."""
    return agent or (os.path.basename(command[0]) if command else "demo")


class Chat(anywidget.AnyWidget):
    """An agent conversation: ``Chat("claude-code")``, ``Chat(command=[...])``."""

    # A chat in server mode carries the loader instead. The stylesheet is in the bundle,
    # which adds it to the page once (not per model, after the lab extension's copy).
    _esm = widget_code.bundle_esm()

    chat_id = traitlets.Unicode("").tag(sync=True)
    kernel_id = traitlets.Unicode("").tag(sync=True)
    transport = traitlets.Unicode("").tag(sync=True)
    snapshot = traitlets.Dict().tag(sync=True)
    locale = traitlets.Unicode("").tag(sync=True)
    # In local mode though not asked for: why server mode was not reached (the header says).
    local_reason = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        agent: str | None = None,
        *,
        command: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        mode: str | None = None,
        mcp_servers: Sequence[Mapping[str, Any]] = (),
        notebook_tools: bool = True,
        transport: str = "auto",
        locale: str = "",
        load_session_id: str | None = None,
        share: Literal["anyone"] | None = None,
        notebook: str | None = None,
    ) -> None:
        """``load_session_id`` continues an earlier ACP session (see ``Chat.resume``).
        ``notebook``: the notebook file the agent's edit tools work on in local mode when
        no frontend names it (a kernel nbval or a script started).

        In server mode the person who ran the cell owns the chat (every holder of the
        server's token is one person where Jupyter knows no names: see docs/configuration.md,
        "Who may answer"): others who may open the kernel can read it, and act on it (prompt,
        answer, cancel, choose the mode) only with ``share="anyone"`` (``chat.share``).
        """
        client = connect(transport)
        running_cell.watch()  # kernel_state names the cell that runs, from the next one on
        loader = widget_code.server_esm() if client.mode == "server" else None
        reason = why_local() if client.mode == "local" else ""
        super().__init__(locale=locale, local_reason=reason, **({"_esm": loader} if loader else {}))
        self.agent = _agent_name(agent, command)
        # Resolved here: in server mode the agent runs in the server's process.
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self._named = command is None
        self._load_session_id = load_session_id
        self._client: Client = client
        self._lock = threading.RLock()
        self._state = folding.initial_state()
        self._turns: dict[int, Future[Turn]] = {}
        self._listeners: list[Callable[[StreamEvent], None]] = []
        # After each frame: _changed wakes wait(); _wakers wake ready() and next_request().
        self._changed = threading.Condition(self._lock)
        self._wakers: list[Callable[[], None]] = []
        # The policy for each type of request: "permission" or "elicitation"; and "edit",
        # for a permission that decides a notebook edit.
        self._policies: dict[str, Callable[[dict[str, Any]], Any] | None] = {}
        self._policy_done: set[str] = set()
        self._pointers = Pointers()
        self._turn_number = 0
        self._auth_events = 0  # auth events folded (authenticate waits for its first)
        self._closed = False
        self._displays: list[Any] = []
        self._comm_used = False  # a view fell back to the comm: events go there too
        # The views of this chat from one turn on (%%agent's), the latest MAX_TURN_VIEWS.
        self._turn_views: list[TurnView] = []
        # What fork() opens its chat with: this one's options, the session aside.
        self._options: dict[str, Any] = {
            "command": command,
            "env": env,
            "cwd": self.cwd,
            "mode": mode,
            "mcp_servers": mcp_servers,
            "notebook_tools": notebook_tools,
            "transport": transport,
            "locale": locale,
            "share": share,
            "notebook": notebook,
        }
        options: dict[str, Any] = {
            "type": "chat:open",
            "agent": agent,
            "command": list(command) if command is not None else None,
            "env": dict(env) if env else None,
            "cwd": self.cwd,
            "mode": mode,
            # Checked here, so a malformed entry fails in the cell that passed it.
            "mcpServers": mcp_servers_shape.normalize(mcp_servers),
            "notebookTools": notebook_tools,
            "notebook": os.path.abspath(notebook) if notebook else None,
            "executeId": execute_id(),
            "share": share,
            "loadSessionId": load_session_id,
        }
        chat_id = str(_accepted(self._submit(options).result(ACK_TIMEOUT))["chatId"])
        self._client.subscribe(chat_id, self._on_frame).result(ACK_TIMEOUT)
        self.chat_id = chat_id
        self.kernel_id = self._client.kernel_id
        self.transport = "server" if self._client.mode == "server" else "comm"
        # What the saved output needs to continue the chat elsewhere (no command, no env).
        self._saved = {
            "chatId": chat_id,
            "kernelId": self.kernel_id,
            "agent": self.agent,
            "cwd": self.cwd,
            "mode": mode,
            "locale": locale,
        }
        self.on_msg(self._on_widget_msg)
        _opened.append(self)

    @staticmethod
    def opened() -> list[Chat]:
        """This kernel's chats not closed yet, oldest first (the magics pick from them)."""
        return list(_opened)

    @classmethod
    def resume(
        cls,
        session_id: str,
        agent: str | None = None,
        *,
        cwd: str | None = None,
        **options: Any,
    ) -> Chat:
        """Continue an earlier session of ``agent`` (``acp_notebook.sessions`` lists them).

        The agent loads it (``session/load``: the conversation is shown again) or resumes
        it (``session/resume``: it remembers, nothing is shown); an agent that can do
        neither ends the chat with a message saying so (``await chat.ready()`` is
        ``"exited"``). ``options`` are those of ``Chat``.

        One live chat per session: a chat of this kernel that has the session and has
        not exited is returned as it is; in server mode, so is the chat a page's
        "Continue" opened on this kernel (a new ``Chat`` object for that chat).
        """
        name = _agent_name(agent, options.get("command"))
        where = os.path.abspath(cwd or os.getcwd())
        for chat in reversed(_opened):
            if chat._holds(session_id, name, where):
                return chat
        return cls(agent, cwd=cwd, load_session_id=session_id, **options)

    def _holds(self, session_id: str, agent: str, cwd: str) -> bool:
        """Whether this chat has (or is loading) ``session_id`` of ``agent`` in ``cwd``."""
        with self._lock:
            held = session_id in (self._state.agent["sessionId"], self._load_session_id)
            return held and (self.agent, self.cwd) == (agent, cwd) and self.status != "exited"

    def fork(self) -> Chat:
        """A new chat on a fork of this one's session (``session/fork``, where the agent
        advertises ``sessionCapabilities.fork``): the conversation so far, continued apart
        from this one, which goes on unchanged. The new chat loads the fork as
        ``Chat.resume`` would, with this chat's options."""
        forked = str(self._request({"type": "chat:fork"})["sessionId"])
        return Chat.resume(forked, self.agent if self._named else None, **self._options)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        # A display id lets each turn's end refresh the static transcript saved with it.
        handle = display(self._repr_mimebundle_()[0], raw=True, display_id=True)  # type: ignore[no-untyped-call]
        if handle is not None:
            self._displays.append(handle)
        self._pointers.shown_in(execute_id())

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self._bundle(super()._repr_mimebundle_(**kwargs), self.state)

    def _bundle(self, bundle: Any, snap: FoldSnapshot) -> Any:
        # anywidget's bundle: (data, metadata), or None for a widget without a view.
        if bundle is not None:
            data = bundle[0]
            # Both bounded: each turn's end sends them to the frontend again, and
            # JupyterLab parses an HTML output whole (its table of contents sanitizes it):
            # a 1.3 MB answer made tasks of 100 ms and more.
            # Shown where the widget cannot be: nbconvert, a viewer, a notebook without kernel.
            readable = transcript.compact(snap, transcript.STATIC_TEXT)
            data["text/html"] = transcript.render_html(readable)
            # What a notebook reopened without this kernel shows, and continues from.
            small = transcript.compact(snap)
            data[SAVED_MIME] = transcript.saved_chat(small, self._saved, self._named)
        return bundle

    def __repr__(self) -> str:
        # Stable across runs (nbval compares text/plain): no ids, no addresses.
        return f"Chat(agent={self.agent!r})"

    def from_here(self) -> TurnView:
        """A view of this chat that starts after what it holds now: display it, send a
        prompt, and call its ``end_here()`` when the turn has ended; it shows that turn
        (and its cards) only, with a button for the whole chat (``%%agent`` does this)."""
        with self._lock:
            at = self._position()
        view = TurnView(self, at)
        self._turn_views = [*self._turn_views, view][-MAX_TURN_VIEWS:]
        self._pointers.shown_in(execute_id())  # its cell shows the turn's cards
        return view

    def _position(self) -> int:
        """Where the next item goes in the whole chat (the items the fold dropped counted);
        call it holding the lock."""
        dropped = self._state.dropped
        return (dropped["items"] if dropped else 0) + len(self._state.items)

    # ------------------------------------------------------------ state

    @property
    def mode(self) -> str:
        """``server`` (through the Jupyter server extension) or ``local`` (in this kernel);
        ``local_reason`` says why server mode was not reached, if it was not asked for."""
        return self._client.mode

    @property
    def title(self) -> str | None:
        """The session's title, as the agent names it (``session_info_update``)."""
        return self.state["title"]

    @property
    def state(self) -> FoldSnapshot:
        """The folded chat: messages, thoughts, tool calls, plan, usage, pending requests."""
        with self._lock:
            return folding.snapshot(self._state)

    @property
    def status(self) -> str:
        with self._lock:
            return str(self._state.agent["status"])

    @property
    def pending(self) -> list[dict[str, Any]]:
        """Permissions and questions waiting for an answer, oldest first."""
        with self._lock:
            return folding.pending_requests(self._state)

    @property
    def commands(self) -> list[dict[str, Any]]:
        """The agent's slash commands (``name``, ``description``, ``input``'s ``hint``);
        send one as a prompt: ``chat.send_prompt("/review the last commit")``."""
        with self._lock:
            return [dict(c) for c in self._state.commands]

    @property
    def queue(self) -> list[dict[str, Any]]:
        """Prompts sent during a turn, waiting for it, in the order they go out
        (``turn``: the number each runs as, ``prompt``: its text)."""
        with self._lock:
            return [dict(q) for q in self._state.queue or ()]

    def steer(self, turn: int) -> None:
        """Send a queued prompt into the running turn now, where the agent takes prompts
        during a turn (claude's prompt queueing); its turn then ends with the running one."""
        self._request({"type": "chat:queue", "op": "steer", "turn": turn})

    def unqueue(self, turn: int) -> None:
        """Remove a queued prompt; a wait for its turn returns it with an error."""
        self._request({"type": "chat:queue", "op": "remove", "turn": turn})

    # ------------------------------------------------------------ events in

    def _on_frame(self, frame: Frame) -> None:
        """Runs on the client's loop thread for every batch of events."""
        events: list[StreamEvent] = frame.get("events") or []
        ended: list[tuple[int, Turn]] = []
        snap: FoldSnapshot | None = None
        with self._lock:
            if frame.get("reset"):
                self._state = folding.initial_state()
            for event in events:
                self._state = folding.fold(self._state, event)
                if event["kind"] == "turn_started":
                    self._turn_number = max(self._turn_number, event["turn"])
                elif event["kind"] == "turn_ended":
                    ended.append((event["turn"], self._turn_result(event)))
                elif event["kind"] == "auth":
                    self._auth_events += 1
                elif event["kind"] == "queue":
                    # Turns that will never run: their waits end saying why.
                    why = f"removed from the queue ({event.get('reason') or 'removed'})"
                    ended.extend((n, Turn(n, "", None, why)) for n in event.get("removed") or ())
            pending = folding.pending_requests(self._state)
            # A settled request never comes back: its id would only add up over the chat.
            self._policy_done.intersection_update(p["requestId"] for p in pending)
            if ended:  # one snapshot for the widget state and the saved transcript
                snap = folding.snapshot(self._state)
        if self.transport == "comm" or self._comm_used:
            for view in [self, *self._turn_views]:
                view.send(frame)
        if snap is not None:
            # Only a compact snapshot goes into widget state; deltas travel as messages.
            self.snapshot = cast(dict[str, Any], transcript.compact(snap))
            # And the static transcript under each display, saved with the notebook.
            bundle = self._bundle(super()._repr_mimebundle_(), snap)[0] if self._displays else {}
            for handle in self._displays:
                with contextlib.suppress(Exception):  # a closed frontend must not break the stream
                    handle.update(bundle, raw=True)
            for view in self._turn_views:
                view.refresh(snap)
        for number, turn in ended:
            future = self._turn_future(number)
            if not future.done():
                future.set_result(turn)
        for listener in list(self._listeners):
            for event in events:
                listener(event)
        for request in pending:  # _apply_policy skips those a policy already answered
            self._apply_policy(request)
        self._pointers.settle(self.chat_id, self.agent, pending)
        with self._changed:
            self._changed.notify_all()
        for wake in list(self._wakers):
            wake()

    def _turn_result(self, event: TurnEndedEvent) -> Turn:
        state = self._state
        return Turn(
            number=event["turn"],
            text=folding.last_agent_text(state),
            stop_reason=event.get("stopReason"),
            error=event.get("error"),
            tool_calls=folding.last_tool_calls(state),
            plan=list(state.plan),
            usage=None if state.usage is None else dict(state.usage),
        )

    def _turn_future(self, number: int) -> Future[Turn]:
        with self._lock:
            return self._turns.setdefault(number, Future())

    # ------------------------------------------------------------ requests out

    def _submit(self, message: Mapping[str, Any]) -> Future[Frame]:
        """Every request of this chat goes out here. One made on the kernel's main thread
        (a cell, the widget's comm) names the message the kernel handles: the server
        answers it as that message's sender's, local mode as the frontend's user's. The
        other threads' (the policies') are the kernel's own code."""
        if threading.current_thread() is not threading.main_thread():
            return self._client.request(message)
        return self._client.request({"executeId": execute_id(), **message}, by=_frontend_user())

    def _request(self, message: dict[str, Any]) -> Frame:
        message.setdefault("chatId", self.chat_id)
        return _accepted(self._submit(message).result(ACK_TIMEOUT))

    def _on_widget_msg(self, widget: Any, content: Any, _buffers: Any) -> None:
        """The widget's requests over the comm (``widget``: this chat's, or one of its
        ``TurnView``s): forward them, ack them back on that comm, and from then on send
        this chat's events over the comms too.

        In local mode the comm is the widget's only link. In server mode it is a
        fallback, for a page whose WebSocket to the extension failed (a proxy that
        blocks it): the kernel relays the page's chat requests, naming the comm message
        (``_submit``): the server knows who sent it, gates the request as theirs and shows
        their name; and a relay held up by a busy kernel ends in the widget's request
        timeout.
        The kernel's own requests (open, subscribe, close) are refused here."""
        if not isinstance(content, dict):
            return
        if content.get("type") == widget_code.CODE_REQUEST:  # the loader could not fetch it
            widget.send({"type": widget_code.CODE_REQUEST, "code": widget_code.bundle_text()})
            return
        self._comm_used = True
        kind = content.get("type")  # a page's: a list here is no hashable set member
        if isinstance(kind, str) and kind in TRUSTED_TYPES:  # the kernel's own requests
            widget.send(error_ack(content.get("id"), "FORBIDDEN", "not from the widget"))
            return
        message = {**content, "chatId": self.chat_id}
        future = self._submit(message)
        future.add_done_callback(lambda f: widget.send(f.result()) if not f.exception() else None)

    async def _until(self, check: Callable[[], T | None], timeout: float | None = None) -> T:
        """``check()``'s first result that is not None, re-checked after every frame."""
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def wake() -> None:  # on the client's thread
            loop.call_soon_threadsafe(changed.set)

        async def watch() -> T:
            while True:
                changed.clear()
                found = check()
                if found is not None:
                    return found
                await changed.wait()

        self._wakers.append(wake)
        try:
            return await asyncio.wait_for(watch(), timeout)
        finally:
            self._wakers.remove(wake)

    async def ready(self) -> str:
        """Wait until the agent is ready (or has exited); returns the status, or
        ``"auth_required"`` while it waits for a sign-in (``auth_methods``)."""
        return await self._until(self._ready_status)

    def _ready_status(self) -> str | None:
        with self._lock:
            status = str(self._state.agent["status"])
            auth = self._state.auth
        if status == "starting" and auth is not None and auth["state"] in _SIGN_IN_NEEDED:
            return "auth_required"
        return None if status == "starting" else status

    async def next_request(self, timeout: float | None = 30.0) -> dict[str, Any]:
        """The oldest question or permission the agent waits on, waiting for one to arrive;
        the cell says where its card is."""
        request = await self._until(lambda: next(iter(self.pending), None), timeout)
        self._point(request)
        return request

    def _point(self, request: dict[str, Any]) -> None:
        """A pointer in the running cell to ``request``'s card, when a person must answer
        it (no policy does) and the cell does not show the chat (card_pointer.py)."""
        kinds = _policy_kinds(request)
        if request["requestId"] in self._policy_done or any(self._policies.get(k) for k in kinds):
            return
        if threading.current_thread() is threading.main_thread():
            self._pointers.point(self.chat_id, self.agent, request, execute_id())

    def _turn_or_point(self, future: Future[Turn]) -> Turn | None:
        """The turn of ``future`` once it ended; until then, points to each new card."""
        if future.done():
            return future.result()
        for request in self.pending:
            self._point(request)
        return None

    async def ask(
        self, text: str, timeout: float | None = None, *, attach: Attachable = ()
    ) -> Turn:
        """Send a prompt and wait for the end of its turn (queued during a turn).

        ``attach``: DataFrames, figures, images, paths, strings (see ``attachments``),
        or ``{name: object}``; a bad one raises ``AttachmentError`` and sends nothing.
        """
        message = {**_prompt_message(text, attach), "chatId": self.chat_id}
        if await self.ready() == "auth_required":
            raise self._auth_required()
        ack = _accepted(await asyncio.wrap_future(self._submit(message)))
        future = self._turn_future(int(ack["turn"]))
        with cell_waits():
            return await self._until(lambda: self._turn_or_point(future), timeout)

    def send_prompt(self, text: str, *, attach: Attachable = ()) -> int:
        """Send a prompt without waiting; returns the turn number. During a turn it is
        queued (``queue``) and runs as that number once the turns before it have ended;
        a cancel removes the queued prompts."""
        return int(self._request(_prompt_message(text, attach))["turn"])

    @cell_waits()
    def wait(self, turn: int | None = None, timeout: float | None = None) -> Turn:
        """Block until a turn ends (the latest by default).

        In local mode a question that only a person could answer cannot reach this
        kernel while it blocks, so that raises ``NeedsAnswer`` instead of hanging.
        """
        number = turn if turn is not None else self._turn_number
        future = self._turn_future(number)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._changed:  # every frame notifies, after its turn ends are set
                if (ended := self._turn_or_point(future)) is not None:
                    return ended
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"turn {number} did not end within {timeout} s")
                if self._ready_status() == "auth_required":
                    raise self._auth_required()
                # In local mode, a question only a person could answer: say so.
                stuck = [p for p in self.pending if p["requestId"] not in self._policy_done]
                if self.mode == "local" and stuck and self._policies.get(stuck[0]["type"]) is None:
                    raise NeedsAnswer(
                        f"the agent is waiting for an answer ({stuck[0]['type']} "
                        f"{stuck[0]['requestId']}) and a blocking wait cannot receive one "
                        "from the widget in local mode: use `await chat.ask(...)`, answer "
                        "it with chat.answer()/chat.allow(), or set a policy"
                    )
                self._changed.wait(left)

    def cancel(self) -> None:
        """Stop the running turn; pending questions and permissions are cancelled, and
        queued prompts removed (their turns end with an error saying so)."""
        self._request({"type": "chat:cancel"})

    def set_mode(self, mode_id: str) -> None:
        self._request({"type": "chat:set_mode", "modeId": mode_id})

    def set_config(self, config_id: str, value: str | bool) -> None:
        self._request({"type": "chat:set_config", "configId": config_id, "value": value})

    @property
    def accept_edits(self) -> bool:
        """The chat's "accept edits" setting: on, the agent's notebook edits land without a
        review. Set it to turn it on or off (for everyone who sees the chat)."""
        with self._lock:
            return bool(self._state.accept_edits)

    @accept_edits.setter
    def accept_edits(self, value: bool) -> None:
        self._request({"type": "chat:accept_edits", "value": bool(value)})

    @property
    def share(self) -> Literal["anyone"] | None:
        """Who may act on the chat besides its owner: ``"anyone"`` who may read it, or
        None (its owner alone). Set it to change it: its owner's cells only."""
        with self._lock:
            access = self._state.access
            return "anyone" if access is not None and access["share"] == "anyone" else None

    @share.setter
    def share(self, value: Literal["anyone"] | None) -> None:
        if value not in ("anyone", None):
            raise ValueError('share is "anyone" or None')
        self._request({"type": "chat:share", "share": value})

    @property
    def owner(self) -> str | None:
        """The name of the chat's owner (None: no one, anyone who may read it may act)."""
        with self._lock:
            access = self._state.access
            return None if access is None else access["ownerName"] or access["owner"]

    # ------------------------------------------------------------ sign-in

    @property
    def auth_methods(self) -> list[dict[str, Any]]:
        """The agent's sign-in methods, once it asked for a sign-in: ``id``, ``name``,
        ``description``, ``type``: "agent" (it signs in by itself), "terminal" (``command``
        runs, ``env`` added; answer its prompts with ``auth_input``) or "env_var" (set
        ``vars`` where the agent starts)."""
        with self._lock:
            auth = self._state.auth
            return [dict(m) for m in auth["methods"]] if auth is not None else []

    @property
    def auth_state(self) -> str | None:
        """The sign-in: "required", "signing_in", "signed_in", "signed_out" (after
        ``logout``); None while the agent asked for none."""
        with self._lock:
            auth = self._state.auth
            return None if auth is None else auth["state"]

    def authenticate(self, method_id: str) -> None:
        """Sign in with method ``method_id`` of ``auth_methods``; ``await chat.ready()``
        then waits for the agent (``"auth_required"`` again: it did not work, and
        ``chat.state["auth"]["detail"]`` says why). A terminal method runs its ``command``
        (the agent's own, with the method's arguments): answer what it asks with
        ``auth_input``. An ``env_var`` method cannot run: it raises, saying what to set."""
        with self._lock:
            seen = self._auth_events
        self._request({"type": "chat:auth", "op": "start", "methodId": method_id})
        # Its first event folded: ready() then waits for the outcome, not the old state.
        with self._changed:
            self._changed.wait_for(lambda: self._auth_events > seen, ACK_TIMEOUT)

    def auth_input(self, text: str) -> None:
        """One line to the running terminal sign-in, as if typed at its prompt (a
        password: ``getpass.getpass()``). It goes to that process only: never logged,
        shown or kept."""
        self._request({"type": "chat:auth", "op": "input", "text": text})

    def stop_sign_in(self) -> None:
        """End the running sign-in (a terminal method's command, or the agent's own)."""
        self._request({"type": "chat:auth", "op": "stop"})

    def logout(self) -> None:
        """Sign out (ACP ``logout``, where the agent advertises ``auth.logout``); the
        agent then asks for a sign-in again."""
        self._request({"type": "chat:auth", "op": "logout"})

    def _auth_required(self) -> AuthRequired:
        methods = self.auth_methods
        ways = []
        for m in methods:
            if m["type"] == "env_var":
                ways.append(env_hint(cast(Any, m)))
            elif m["type"] == "terminal":
                command = " ".join(m.get("command") or [])
                ways.append(
                    f"chat.authenticate({m['id']!r}) runs `{command}` ({m['name']});"
                    " answer its prompts with chat.auth_input(...)"
                )
            else:
                ways.append(f"chat.authenticate({m['id']!r}) ({m['name']})")
        with self._lock:
            auth = self._state.auth
            detail = auth["detail"] if auth is not None else None
        said = f" ({detail})" if detail else ""
        text = f"the agent needs a sign-in{said}: " + "; or ".join(ways)
        return AuthRequired(text, methods)

    # ------------------------------------------------------------ answers

    def answer(self, request_id: str, values: Mapping[str, Any] | None = None) -> None:
        """Accept a question with ``values`` (field name -> value)."""
        self._request(_elicitation_answer(request_id, "accept", values))

    def decline(self, request_id: str) -> None:
        self._request(_elicitation_answer(request_id, "decline"))

    def dismiss(self, request_id: str) -> None:
        """Cancel one pending question or permission."""
        request = self._pending_request(request_id)
        if request is not None and request["type"] == "permission":
            self._request(_permission_answer(request_id, None))
        else:
            self._request(_elicitation_answer(request_id, "cancel"))

    def allow(self, request_id: str, option_id: str | None = None) -> None:
        """Answer a permission with ``option_id`` (default: the first allow option)."""
        self._choose(request_id, option_id, "allow")

    def reject(self, request_id: str, option_id: str | None = None) -> None:
        self._choose(request_id, option_id, "reject")

    def _choose(self, request_id: str, option_id: str | None, prefix: str) -> None:
        if option_id is None:
            request = self._pending_request(request_id)
            options = request.get("options", []) if request else []
            option_id = next(
                (o["optionId"] for o in options if str(o.get("kind", "")).startswith(prefix)), None
            )
            if option_id is None:
                raise InvalidRequest("INVALID", f"no {prefix} option on {request_id}")
        self._request(_permission_answer(request_id, option_id))

    def _pending_request(self, request_id: str) -> dict[str, Any] | None:
        return next((p for p in self.pending if p["requestId"] == request_id), None)

    # ------------------------------------------------------------ policies

    def on_elicitation(self, policy: ElicitationPolicy | None) -> None:
        """``policy(request)`` returns values to accept, DECLINE, CANCEL, or None for a person."""
        self._policies["elicitation"] = policy
        self._rerun_policies()

    def on_permission(self, policy: PermissionPolicy | None) -> None:
        """``policy(request)`` returns an optionId, CANCEL, or None for a person."""
        self._policies["permission"] = policy
        self._rerun_policies()

    def on_edit(self, policy: EditPolicy | None) -> None:
        """``policy(edit)`` returns "accept", "reject", or None (then ``on_permission``'s
        policy, or a person, decides). ``edit`` is the change a pending request decides: a
        notebook cell's (op, path, cellType, index, before, after, ...) or a file's the
        agent writes through the client (op "write", path, before, after, created)."""
        self._policies["edit"] = policy
        self._rerun_policies()

    def _rerun_policies(self) -> None:
        for request in self.pending:
            self._client.thread.loop.call_soon_threadsafe(self._apply_policy, request)

    def _apply_policy(self, request: dict[str, Any]) -> None:
        """Runs on the client's loop thread; the answer goes out without blocking it."""
        request_id = request["requestId"]
        if request_id in self._policy_done:
            return
        decision = self._decide(request)
        if decision is None:
            return
        self._policy_done.add(request_id)
        if request["type"] == "permission":
            option = None if decision is Action.CANCEL else str(decision)
            message = _permission_answer(request_id, option)
        elif isinstance(decision, Action):
            message = _elicitation_answer(request_id, decision.value)
        else:
            message = _elicitation_answer(request_id, "accept", decision)
        message["chatId"] = self.chat_id

        def done(future: Future[Frame]) -> None:
            ack = future.result()
            if ack.get("error"):
                log.warning(
                    "policy answer to %s refused: %s %s",
                    request_id,
                    ack["error"],
                    ack.get("detail", ""),
                )

        self._submit(message).add_done_callback(done)

    def _decide(self, request: dict[str, Any]) -> Any:
        """The policies' answer to ``request``, or None: for a notebook edit the edit
        policy first (its "accept" or "reject" as the option of that kind), then the one
        of the request's type."""
        for kind in _policy_kinds(request):
            policy = self._policies.get(kind)
            if policy is None:
                continue
            try:
                decision = policy(request["edit"] if kind == "edit" else request)
            except Exception:
                log.exception("the %s policy failed on %s", kind, request["requestId"])
                continue
            if kind == "edit" and decision is not None:
                wanted = _EDIT_OPTION_KINDS.get(decision)
                options = request.get("options", [])
                decision = next((o["optionId"] for o in options if o.get("kind") == wanted), None)
                if decision is None:
                    log.warning("no option on %s answers an edit policy", request["requestId"])
            if decision is not None:
                return decision
        return None

    # ------------------------------------------------------------ streams

    async def events(self) -> AsyncIterator[StreamEvent]:
        """Every event from now on, as it arrives (``async for event in chat.events()``)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[StreamEvent] = asyncio.Queue()

        def listener(event: StreamEvent) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, event)

        self._listeners.append(listener)
        try:
            while True:
                yield await queue.get()
        finally:
            self._listeners.remove(listener)

    def close(self) -> None:
        """End the agent process; the widget shows the chat as exited."""
        if self.chat_id and not self._closed:
            self._closed = True
            with contextlib.suppress(ValueError):
                _opened.remove(self)
            future = self._client.close_chat(self.chat_id)
            # ipywidgets calls close() from __del__, which may run on the client's own
            # thread: waiting there would deadlock.
            if not self._client.thread.is_current:
                with contextlib.suppress(Exception):
                    future.result(ACK_TIMEOUT)
        super().close()
