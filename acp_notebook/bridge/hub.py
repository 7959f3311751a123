"""The hub: the chats of one kernel, and the policy around them.

It validates every client request against one schema, lets only a chat's owner act on
it, and fans events out to any number of subscribers without letting a slow one stall
the agent or the others.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar, cast

from pydantic import Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict, Unpack

from ..agent.catalogue import AgentSpec, resolve_agent
from ..agent.jsonrpc import RpcError
from ..agent.mcp_servers import NOTEBOOK, normalize
from ..wire import bounded_json
from ..wire.attachment_blocks import AttachmentError, adapt
from ..wire.contracts import (
    CHAT_GONE_CLOSED,
    CHAT_GONE_KERNEL,
    MAX_DETAIL,
    MAX_REQUEST_BYTES,
    TRUSTED_TYPES,
    AcceptEditsRequest,
    Attachment,
    AuthRequest,
    CancelRequest,
    CloseRequest,
    ElicitationRespondRequest,
    ErrorCode,
    ForkRequest,
    Frame,
    MentionRequest,
    OpenRequest,
    PermissionRespondRequest,
    PromptRequest,
    QueueRequest,
    ResyncRequest,
    SetConfigRequest,
    SetModeRequest,
    ShareRequest,
    StreamEvent,
    SubscribeRequest,
    VariableName,
    VariablesRequest,
    client_request,
    error_ack,
    why_invalid,
)
from .chat_session import AgentExited, Busy, ChatSession, NotOffered, NotQueued, SessionConfig
from .elicitation import AnswerError
from .history import snapshot_resync
from .ledger import NotFound
from .ports import KernelQuery, TextFilesFactory, ToolsFactory
from .session_owners import SessionOwners
from .sign_in import SignInRefused
from .subscriptions import MAX_QUEUE_BYTES, MAX_QUEUE_EVENTS, Subscription

log = logging.getLogger(__name__)

CLOSED = "the chats of this kernel are closed (it shut down, or the server stops)"

# A kernel's answer to a mention: the query channel's cap (server/kernel_queries.py).
MAX_MENTION_ANSWER = 64 * 1024
_VARIABLE_NAMES: TypeAdapter[list[VariableName]] = TypeAdapter(
    Annotated[list[VariableName], Field(max_length=1000)]
)


class TooManyChats(Exception):
    """The chats open on the hubs sharing a ``ChatCount`` are at its limit."""


class ChatCount:
    """The chats open on every hub that shares it (a server's, over all its kernels and
    users): each is an agent process and a history of megabytes, so they are capped."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit  # None in local mode: the kernel's user runs every chat there
        self.open = 0

    def take(self) -> None:
        if self.limit is not None and self.open >= self.limit:
            raise TooManyChats(
                f"{self.open} chats are open here, the most allowed (on a Jupyter server, "
                "AcpNotebookApp.max_chats): close one first (chat.close(), or shut down "
                "the kernel whose chats you no longer need)"
            )
        self.open += 1

    def give(self) -> None:
        self.open -= 1


@dataclass(frozen=True)
class HubConfig:
    session: SessionConfig = field(default_factory=SessionConfig)
    # Command lines that replace the built-in ones, by agent name.
    agent_commands: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # Agent names a chat may start; None allows every known name.
    allowed_agents: frozenset[str] | None = None
    # Whether Chat(command=[...]) may start an arbitrary program.
    allow_commands: bool = True
    default_agent: str = "demo"
    # A subscriber further behind than this is reset to a resync instead.
    max_queue_events: int = MAX_QUEUE_EVENTS
    max_queue_bytes: int = MAX_QUEUE_BYTES
    # Shared by every hub of this config.
    chats: ChatCount = field(default_factory=ChatCount)
    sessions: SessionOwners = field(default_factory=SessionOwners)


class OpenOptions(TypedDict, total=False):
    """What a chat is opened with besides its agent name: ``Chat``'s keywords."""

    command: Sequence[str] | None
    env: Mapping[str, str] | None
    cwd: str | None
    mode: str | None
    mcp_servers: Sequence[Mapping[str, Any]]
    notebook_tools: bool
    load_session_id: str | None
    notebook: str | None
    share: Literal["anyone"] | None


class Forbidden(PermissionError):
    pass


@dataclass
class _Chat:
    session: ChatSession
    # The handshake: a chat is ``ready`` or ``exited`` once it is done.
    start_task: asyncio.Task[None]
    # The owner's principal id (None: anyone who may read it may act) and shown name.
    owner: str | None
    owner_name: str | None = None
    # "anyone": every reader may act too; None: only the owner (and trusted callers).
    share: Literal["anyone"] | None = None
    subscribers: list[Subscription] = field(default_factory=list)
    # The last snapshot resync, and the seq it was made at.
    resync: tuple[int, dict[str, Any]] | None = None


def may_act(chat: _Chat, user: str | None) -> bool:
    """Whether ``user`` (a principal's id; None: an unknown one) may act on ``chat``:
    its owner, anyone when it has none or is shared."""
    return chat.owner in (None, user) or chat.share == "anyone"


# Who may send each kind of request: only the kernel (trusted callers; the wire's
# TRUSTED_TYPES), any reader of the chat, its owner (and trusted callers, and anyone
# when the chat is shared), or its owner alone (and trusted callers: sharing is the
# owner's choice); and the Hub method that answers it (None: ``accepted``).
Who = Literal["kernel", "reader", "owner", "owner alone"]
_Handler = Callable[..., Awaitable[Frame | None]]
_ROUTES: dict[str, tuple[Who, _Handler]] = {}
_H = TypeVar("_H", bound=_Handler)


def _route(who: Who, *kinds: str) -> Callable[[_H], _H]:
    """Makes the decorated Hub method the handler of ``kinds``, which ``who`` may send."""

    def add(handler: _H) -> _H:
        _ROUTES.update(dict.fromkeys(kinds, (who, handler)))
        return handler

    return add


def agent_spec(config: HubConfig, agent: str | None, options: OpenOptions) -> AgentSpec:
    """How to start the chat's agent, by the admin's rules (``Forbidden``; an unknown
    name: ``UnknownAgent``)."""
    command = options.get("command")
    if command is not None and not config.allow_commands:
        raise Forbidden("starting arbitrary commands is disabled on this server")
    name = agent or config.default_agent
    if command is None and config.allowed_agents is not None and name not in config.allowed_agents:
        raise Forbidden(f"agent {name!r} is not allowed on this server")
    return resolve_agent(
        name if command is None else agent,
        command=command,
        env=options.get("env"),
        mode=options.get("mode"),
        commands=config.agent_commands,
    )


@dataclass(frozen=True)
class _Call:
    """A request's sender and its chat, as the request's handler sees them."""

    found: _Chat | None  # None for chat:open, the one request that names no chat
    user: str | None
    trusted: bool
    follow: Callable[[Subscription], None] | None
    name: str | None

    @property
    def chat(self) -> _Chat:
        """The chat the request names (``handle`` found it before calling the handler)."""
        assert self.found is not None, "chat:open names no chat"
        return self.found

    @property
    def actor(self) -> str | None:
        """Who answered, on the *_resolved event: the person (``name``, how the server
        shows them; local mode names the page's user), or the kernel's code."""
        return self.name or self.user or ("kernel" if self.trusted else None)


@dataclass(eq=False)
class Hub:
    """The chats of one kernel (the per-kernel bridge) and the rules around them."""

    config: HubConfig = field(default_factory=HubConfig)
    name: str = ""
    # Serves a chat's `notebook` MCP server; None: this hub's chats get none.
    notebook_tools: ToolsFactory | None = None
    # Asks the kernel for a kernel-side tool (the composer's @ mentions); None: no kernel.
    kernel_query: KernelQuery | None = None
    # The files a chat's agent reads and write through the client (fs/*), given the chat's
    # directory; None: the client offers none.
    text_files: TextFilesFactory | None = None
    chats: dict[str, _Chat] = field(default_factory=dict, init=False)
    _closed: bool = field(default=False, init=False)

    # ------------------------------------------------------------ chats

    async def open_chat(
        self,
        agent: str | None = None,
        *,
        owner: str | None = None,
        owner_name: str | None = None,
        **options: Unpack[OpenOptions],
    ) -> str:
        """Start a chat; it is usable (``starting``) at once and ``ready`` after the handshake.

        ``owner``: the principal id of who alone may act on it (None: anyone who may read
        it), shown as ``owner_name``; a session another owner started here is not theirs
        to continue (``Forbidden``). A session a live chat of this hub has (or loads) is
        not opened twice: its chat's id is returned, and the other options are that
        chat's. ``options`` are ``Chat``'s. The admin's rules apply
        to the agent (``Forbidden``). ``mcp_servers`` are the user's own (``ValueError``
        when malformed); the chat's ``notebook`` server is added unless ``notebook_tools``
        is False.
        """
        if self._closed:
            raise RuntimeError(CLOSED)
        config = self.config
        spec = agent_spec(config, agent, options)
        cwd = os.path.abspath(options.get("cwd") or os.getcwd())
        load = options.get("load_session_id")
        refused = None if load is None else config.sessions.refusal(spec.name, cwd, load, owner)
        if refused is not None:
            raise Forbidden(refused)
        live = None if load is None else self._live_chat(spec.name, cwd, load)
        if live is not None:
            # One live chat per session: a second agent process on it would write the
            # same conversation twice. The chat that has it is the one to continue.
            if owner is not None and self.chats[live].owner not in (None, owner):
                raise Forbidden(f"session {load!r} is open in another user's chat")
            return live
        servers = normalize(options.get("mcp_servers", ()))
        tools = options.get("notebook_tools", True) and self.notebook_tools is not None
        if tools and any(s["name"] == NOTEBOOK for s in servers):
            raise ValueError(
                f"an MCP server named {NOTEBOOK!r} is the chat's own notebook tools: "
                "rename yours, or pass notebook_tools=False"
            )
        chat_id = uuid.uuid4().hex
        chat: _Chat | None = None

        def sink(event: StreamEvent) -> None:
            assert chat is not None
            self._fan_out(chat, event)

        config.chats.take()  # given back when the chat is closed
        notebook = None
        try:
            notebook = await self.notebook_tools() if tools and self.notebook_tools else None
            if notebook is not None:
                notebook.agent = spec.name
                notebook.notebook_path = options.get("notebook")
            if self._closed:  # while it waited: close() has ended every chat it knew
                raise RuntimeError(CLOSED)
            session = ChatSession(
                chat_id,
                spec,
                cwd=cwd,
                mcp_servers=servers,
                config=config.session,
                sink=sink,
                load_session_id=load,
                notebook=notebook,
                files=None if self.text_files is None else self.text_files(cwd),
            )
        except BaseException:
            config.chats.give()
            if notebook is not None:
                notebook.close()
            raise
        chat = _Chat(session, asyncio.create_task(session.start()), owner, owner_name)
        chat.share = options.get("share")
        if owner is not None:
            chat.start_task.add_done_callback(lambda _: self._note_session(session, owner))
        self.chats[chat_id] = chat
        self._announce_access(chat)
        return chat_id

    def _live_chat(self, agent: str, cwd: str, session_id: str) -> str | None:
        """The chat of this hub that has (or is loading) ``session_id`` of ``agent`` in
        ``cwd`` and has not exited, if there is one."""
        for chat_id, chat in self.chats.items():
            session = chat.session
            held = session_id in (session.session_id, session.load_session_id)
            same = session.spec.name == agent and session.cwd == cwd
            if held and same and session.status != "exited":
                return chat_id
        return None

    def _note_session(self, session: ChatSession, owner: str) -> None:
        """The session the chat's agent opened (or loaded) is its owner's."""
        if session.session_id is not None:
            self.config.sessions.note(session.spec.name, session.cwd, session.session_id, owner)

    async def close_chat(self, chat_id: str, why: str = CHAT_GONE_CLOSED) -> None:
        """End a chat; ``why`` tells its pages why (``CHAT_GONE_CLOSED``: someone closed it)."""
        chat = self.chats.pop(chat_id, None)
        if chat is None:
            return
        self.config.chats.give()
        chat.start_task.cancel()  # a no-op once it is done
        await chat.session.close()
        for sub in list(chat.subscribers):
            sub.close(why)

    async def close(self) -> None:
        """End every chat and its agent process: the kernel is gone."""
        self._closed = True
        await asyncio.gather(
            *(self.close_chat(cid, CHAT_GONE_KERNEL) for cid in list(self.chats)),
            return_exceptions=True,
        )

    # ------------------------------------------------------------ events

    def subscribe(self, chat_id: str, user: str | None = None, reset: bool = False) -> Subscription:
        chat = self.chats[chat_id]
        sub = Subscription(
            chat_id,
            user,
            reset,
            max_events=self.config.max_queue_events,
            max_bytes=self.config.max_queue_bytes,
            resync=lambda: self._resync_events(chat_id),
            detach=self._detach,
        )
        chat.subscribers.append(sub)
        return sub

    def _resync_events(self, chat_id: str) -> list[StreamEvent]:
        chat = self.chats.get(chat_id)
        return chat.session.resync() if chat is not None else []

    def _detach(self, sub: Subscription) -> None:
        chat = self.chats.get(sub.chat_id)
        if chat is not None:  # subscribe put it there; only its close removes it
            chat.subscribers.remove(sub)

    @staticmethod
    def _announce_access(chat: _Chat, by: str | None = None) -> None:
        """Tells every client who may act on the chat (an ``access`` event, kept by the
        history): pages say so before anyone clicks."""
        chat.session.set_access(chat.owner, chat.owner_name, chat.share, by=by)

    def _fan_out(self, chat: _Chat, event: StreamEvent) -> None:
        for sub in chat.subscribers:
            sub.push(event)
        if event["kind"] == "turn_ended" and not chat.session.queue:
            # Folded now, once per turn, rather than on the path of a page being reloaded;
            # not when a queued prompt goes out next (the fold would hold it up).
            asyncio.get_running_loop().call_soon(self._snapshot_resync, chat)

    def _snapshot_resync(self, chat: _Chat) -> dict[str, Any]:
        """A ``chat:resync`` ack's snapshot and events; folded once per state of the chat."""
        session = chat.session
        if chat.resync is None or chat.resync[0] != session.last_seq:
            folded = snapshot_resync(session.resync(), session.ledger)
            chat.resync = (session.last_seq, folded)
        return chat.resync[1]

    # ------------------------------------------------------------ requests

    async def handle(
        self,
        message: Any,
        user: str | None = None,
        trusted: bool = False,
        follow: Callable[[Subscription], None] | None = None,
        name: str | None = None,
        read: bool = False,
    ) -> Frame:
        """Answer one client request (a frame's text, or its parsed JSON) with an ack.

        Never raises. ``trusted`` callers (the kernel, local mode) act for any owner
        and alone may open, follow (``follow`` receives the subscription) or close chats.
        ``read``: ``message`` is what ``read_request`` gave already (the kernel socket
        reads a frame to route it), so it is validated without being read again.
        """
        try:
            if not read:
                message = read_request(message)
            req = client_request.validate_python(message)
        except BadRequest as exc:
            return error_ack(None, "INVALID", str(exc))
        except ValidationError as exc:
            return error_ack(request_id(message), "INVALID", why_invalid(exc))
        ack = req.id
        who, handler = _ROUTES[req.type]
        if who == "kernel" and not trusted:
            return error_ack(ack, "FORBIDDEN", "only the kernel may open, follow or close a chat")
        chat = None
        if req.type != "chat:open":
            chat = self.chats.get(req.chatId)
            if chat is None:
                return error_ack(ack, "CHAT_NOT_FOUND", "no such chat on this kernel")
            if who == "owner" and not (trusted or may_act(chat, user)):
                return error_ack(ack, "FORBIDDEN", "only the chat's owner may do that")
            if who == "owner alone" and not (trusted or chat.owner in (None, user)):
                return error_ack(ack, "FORBIDDEN", "only the chat's owner may share it")
        try:
            answer = await handler(self, req, _Call(chat, user, trusted, follow, name))
        except NotFound:
            code: ErrorCode = (
                "PERMISSION_NOT_FOUND"
                if req.type == "chat:permission.respond"
                else "ELICITATION_NOT_FOUND"
            )
            return error_ack(ack, code, "unknown or already settled")
        except (AnswerError, AttachmentError, NotOffered, NotQueued, SignInRefused) as exc:
            return error_ack(ack, "INVALID", str(exc))
        except Busy as exc:
            return error_ack(ack, "BUSY", str(exc))
        except AgentExited as exc:
            return error_ack(ack, "AGENT_EXITED", str(exc), reason=exc.reason)
        except RpcError as exc:
            return error_ack(
                ack, "INVALID", f"the agent refused: {exc.message}", data=exc.data_text
            )
        return {"ack": ack, "accepted": True} if answer is None else answer

    # The handlers of _ROUTES, one per request kind.

    @_route("kernel", "chat:subscribe")
    async def _subscribe(self, req: SubscribeRequest, call: _Call) -> Frame | None:
        if call.follow is None:
            return error_ack(req.id, "INVALID", "this connection cannot follow a chat")
        call.follow(self.subscribe(req.chatId, call.user, reset=True))
        return None

    @_route("kernel", "chat:close")
    async def _close(self, req: CloseRequest, call: _Call) -> None:
        await self.close_chat(req.chatId)

    @_route("reader", "chat:resync")
    async def _resync(self, req: ResyncRequest, call: _Call) -> Frame:
        chat = call.chat
        session = chat.session
        # A person's page learns who it is: with the chat's access, whether it may act.
        ack: Frame = {"ack": req.id, "accepted": True}
        if call.user is not None:
            ack["viewer"] = {"id": call.user, "name": call.name or call.user}
        if req.since == session.last_seq:
            return {**ack, "events": [], "reset": False}
        for sub in chat.subscribers:  # the asker's among them; harmless to the others
            sub.seal()
        if req.snapshot:
            return {**ack, **self._snapshot_resync(chat), "reset": True}
        return {**ack, "events": session.resync(), "reset": True}

    @_route("owner", "chat:prompt")
    async def _prompt(self, req: PromptRequest, call: _Call) -> Frame:
        session = call.chat.session
        attached = [a.model_dump(exclude_none=True) for a in req.attachments or []]
        if session.status == "ready":  # else the turn checks once the agent is
            adapt([a["block"] for a in attached], session.capabilities, session.spec.name)
        turn = session.prompt(req.text, by=call.name or call.user, attachments=attached)
        ack: Frame = {"ack": req.id, "accepted": True, "turn": turn}
        if any(q.turn == turn for q in session.queue):
            ack["queued"] = True
        return ack

    @_route("owner", "chat:queue")
    async def _queue(self, req: QueueRequest, call: _Call) -> None:
        session = call.chat.session
        session.change_queue(req.op, req.turn, req.text, req.index, by=call.name or call.user)

    @_route("owner", "chat:cancel")
    async def _cancel(self, req: CancelRequest, call: _Call) -> None:
        call.chat.session.cancel()

    @_route("owner", "chat:set_mode")
    async def _set_mode(self, req: SetModeRequest, call: _Call) -> None:
        await call.chat.session.set_mode(req.modeId)

    @_route("owner", "chat:set_config")
    async def _set_config(self, req: SetConfigRequest, call: _Call) -> None:
        await call.chat.session.set_config(req.configId, req.value)

    @_route("owner", "chat:fork")
    async def _fork(self, req: ForkRequest, call: _Call) -> Frame:
        session = call.chat.session
        forked = await session.fork()
        if call.chat.owner is not None:  # the fork is the chat owner's, to continue
            self.config.sessions.note(session.spec.name, session.cwd, forked, call.chat.owner)
        return {"ack": req.id, "accepted": True, "sessionId": forked}

    @_route("owner", "chat:accept_edits")
    async def _accept_edits(self, req: AcceptEditsRequest, call: _Call) -> None:
        call.chat.session.set_accept_edits(req.value, by=call.actor)

    @_route("owner alone", "chat:share")
    async def _share(self, req: ShareRequest, call: _Call) -> None:
        chat = call.chat
        if chat.share != req.share:
            chat.share = req.share
            self._announce_access(chat, by=call.actor)

    @_route("owner", "chat:auth")
    async def _auth(self, req: AuthRequest, call: _Call) -> None:
        """The sign-in card's controls (bridge/sign_in.py). An input's text goes to the
        sign-in command's stdin and nowhere else."""
        session = call.chat.session
        if session.status == "exited":
            raise AgentExited("the agent has exited", session.exit_detail)
        sign_in = session.sign_in
        if req.op == "start":
            assert req.methodId is not None  # AuthRequest checks it
            sign_in.start(req.methodId, by=call.actor)
        elif req.op == "input":
            assert req.text is not None
            sign_in.input(req.text)
        elif req.op == "stop":
            await sign_in.stop()
        else:
            await sign_in.sign_out(by=call.actor)

    @_route("owner", "chat:permission.respond")
    async def _respond_permission(self, req: PermissionRespondRequest, call: _Call) -> None:
        option = None if req.cancel else req.optionId
        call.chat.session.respond_permission(req.requestId, option, by=call.actor)

    @_route("owner", "chat:elicitation.respond")
    async def _respond_elicitation(self, req: ElicitationRespondRequest, call: _Call) -> None:
        call.chat.session.respond_elicitation(req.requestId, req.action, req.values, by=call.actor)

    @_route("owner", "chat:variables", "chat:mention")
    async def _mention(self, req: VariablesRequest | MentionRequest, call: _Call) -> Frame:
        """The kernel's variables, or one as an attachment (the kernel's answer is
        untrusted: parsed bounded and validated against the contract)."""
        if self.kernel_query is None:
            return error_ack(req.id, "INVALID", "this chat cannot read the kernel's variables")
        try:
            if req.type == "chat:variables":
                text = await self.kernel_query("mention_list", {})
                listing = bounded_json.loads(text, max_bytes=MAX_MENTION_ANSWER)
                if not isinstance(listing, dict):
                    raise ValueError("the kernel's answer is not an object")
                names = _VARIABLE_NAMES.validate_python(listing.get("variables"))
                omitted = listing.get("omitted")
                return {
                    "ack": req.id,
                    "accepted": True,
                    "variables": [n.model_dump() for n in names],
                    "omitted": omitted if isinstance(omitted, int) else 0,
                }
            text = await self.kernel_query("mention_attach", {"name": req.name})
            attachment = Attachment.model_validate(
                bounded_json.loads(text, max_bytes=MAX_MENTION_ANSWER)
            )
        except (RuntimeError, ValueError) as exc:  # no kernel, no such variable, a bad answer
            return error_ack(req.id, "INVALID", str(exc)[:MAX_DETAIL])
        return {
            "ack": req.id,
            "accepted": True,
            "attachment": attachment.model_dump(exclude_none=True),
        }

    @_route("kernel", "chat:open")
    async def _open(self, req: OpenRequest, call: _Call) -> Frame:
        wire = req.model_dump(exclude={"type", "id", "agent", "owner", "ownerName", "executeId"})
        # Under Chat's keyword names (mcpServers: mcp_servers).
        snake = {re.sub("[A-Z]", lambda c: "_" + c[0].lower(), k): v for k, v in wire.items()}
        try:
            chat_id = await self.open_chat(
                req.agent, owner=req.owner, owner_name=req.ownerName, **cast(OpenOptions, snake)
            )
        except Forbidden as exc:
            return error_ack(req.id, "FORBIDDEN", str(exc))
        except TooManyChats as exc:
            return error_ack(req.id, "TOO_MANY_CHATS", str(exc))
        except ValueError as exc:  # an unknown agent, malformed mcpServers
            return error_ack(req.id, "INVALID", str(exc))
        except RuntimeError as exc:  # the hub is closed
            return error_ack(req.id, "INTERNAL", str(exc))
        log.info("acp_notebook: kernel %s opened chat %s", self.name, chat_id)
        return {"ack": req.id, "accepted": True, "chatId": chat_id}


assert {kind for kind, (who, _) in _ROUTES.items() if who == "kernel"} == TRUSTED_TYPES


class BadRequest(ValueError):
    """A request that cannot be read."""


def read_request(message: Any) -> Any:
    """The one read of a request: its text, size- and shape-checked (``bounded_json``).

    Parsed JSON (local mode's requests, a comm's) is read back from its text, so each
    transport takes the same requests (a lone surrogate in a kernel's string, from
    ``os.fsdecode`` say, is U+FFFD on both; it made local mode's prompts INVALID)."""
    try:
        text = (
            message
            if isinstance(message, (str, bytes))
            else json.dumps(message, ensure_ascii=False)
        )
        return bounded_json.loads(text, max_bytes=MAX_REQUEST_BYTES)
    except (TypeError, ValueError) as exc:  # bounded_json.Rejected, or not JSON at all
        raise BadRequest(str(exc)) from None


def request_id(message: Any) -> int | str | None:
    """The id of a request as read, when it has a usable one (for the ack of a refusal)."""
    raw_id = message.get("id") if isinstance(message, dict) else None
    return raw_id if isinstance(raw_id, (int, str)) else None
