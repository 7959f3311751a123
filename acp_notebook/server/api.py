"""The extension's REST endpoints, for the JupyterLab extension's Agent panel.

``GET  acp-notebook/api/agents``: the agent names a chat may start here, and the default.
``GET  acp-notebook/api/chats?kernel=<id>``: the chats of a kernel, each with its owner
(``owner``, ``ownerName``), its sharing and whether this login may act on it (``mayAct``);
its content (``title``, the first prompt, ``sessionId``, and ``waiting``: a question waits
for its answer) only where it may act.
``POST acp-notebook/api/chats`` ``{"kernel", "agent", "cwd"?, "mode"?, "loadSessionId"?}``:
opens a chat on the kernel's hub, owned by the logged-in principal (identity.py),
continuing the ACP session ``loadSessionId`` if given; ``{"chatId"}``. One live chat per
session: where a chat of the kernel has that session open already (and the login may
act on it), that chat's id (200); one elsewhere is a conflict (409).

The agent's past sessions in the notebook's directory (the panel's history), each
request starting the agent for it as ``sessions()`` does (at most ``MAX_AGENT_CALLS``
at once, 429 past that):
``GET acp-notebook/api/sessions?kernel=<id>&agent=<name>[&cursor=<c>]``: a page of
``{"sessions": [{"sessionId", "title", "updatedAt"}], "nextCursor", "offers": [...]}``
(``offers``: ``load``, ``resume``, ``fork``, ``delete``... as the agent advertises them),
or ``{"unavailable": why}`` for an agent that does not list them;
``POST acp-notebook/api/sessions`` ``{"kernel", "agent", "fork"}``: forks a session
(through its live chat here if it has one, as ``chat:fork``), ``{"sessionId"}``;
``DELETE acp-notebook/api/sessions?kernel=<id>&agent=<name>&session=<id>``: deletes one
no chat has open. A login sees and changes only the sessions it may continue (below);
titles, ids and cursors are bounded.

Named agents only: a browser never chooses a command line, an environment or a mode:
``mode`` is accepted and ignored (the chat starts in the agent's default mode, which the
chat's own menu changes), since a saved chat's mode is anyone's file's. A session to
continue is the caller's (``_continuable``): one a chat of this server opened for
another principal is refused; one it did not see opened (before a restart, or outside
it) only for the principal whose account the server runs as (identity.py) and only if
the agent lists it for that directory (where it cannot list: a strict character set).
The same permission as the browser socket (``execute`` on ``kernels``); POSTs are
XSRF-checked by the server as for every API handler.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Annotated, Any, TypeVar

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from tornado import web

from ..agent.catalogue import AgentSpec, UnknownAgent, builtin_agents
from ..agent.handshake import agent_env
from ..agent.session_list import (
    MAX_TEXT,
    SessionsUnavailable,
    delete_stored_session,
    fork_stored_session,
    list_sessions,
    listed_sessions,
    unknown_session,
)
from ..bridge.chat_session import ChatSession
from ..bridge.hub import Forbidden, HubConfig, TooManyChats, agent_spec, may_act
from ..wire import bounded_json
from ..wire.contracts import MAX_ID, PathText, SessionId, valid_session_id, why_invalid
from .identity import Principal, Principals
from .kernels import KernelHubs

# A chat request body is a few short strings; anything larger is not one.
MAX_BODY_BYTES = 16 * 1024
MAX_TITLE = 120
# How long the agent may take to list (fork, delete) its sessions.
LIST_TIMEOUT = 60.0
# Sessions one history request reads at least (in the agent's own pages).
HISTORY_PAGE = 50
# Agents started at once for history requests, over all logins.
MAX_AGENT_CALLS = 4
Name = Annotated[str, StringConstraints(min_length=1, max_length=128)]


class ForkBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kernel: Name
    agent: Name
    fork: SessionId


class OpenChatBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kernel: Name
    agent: Name
    cwd: PathText | None = None
    mode: Annotated[str, Field(max_length=MAX_ID)] | None = None
    loadSessionId: SessionId | None = None


_Body = TypeVar("_Body", bound=BaseModel)

# Whoever drives an agent could as well run code: the same permission.
_Method = Callable[..., Coroutine[Any, Any, None]]
may_execute: Callable[[_Method], _Method] = authorized(
    "execute", "kernels", "needs the permission to execute on kernels"
)


def chat_title(session: ChatSession) -> str | None:
    """The session's title as the agent names it, else the chat's first prompt, first
    line, cut short (the history may have dropped it)."""
    if session.title is not None:
        return session.title[:MAX_TITLE]
    for event in session.resync():
        if event["kind"] == "turn_started":
            line = str(event.get("prompt", "")).strip().split("\n", 1)[0]
            return line[:MAX_TITLE] or None
    return None


class _ApiHandler(APIHandler):
    auth_resource = "kernels"

    def initialize(self, hubs: KernelHubs) -> None:
        self.hubs = hubs

    def _kernel(self, kernel_id: str) -> str:
        if kernel_id not in self.kernel_manager:
            raise web.HTTPError(404, f"no kernel {kernel_id!r}")
        return kernel_id


class AgentsHandler(_ApiHandler):
    @web.authenticated
    @may_execute
    async def get(self) -> None:
        config = self.hubs.config
        # The names Hub.open_chat accepts without a command.
        known = builtin_agents().keys() | config.agent_commands.keys()
        names = known if config.allowed_agents is None else config.allowed_agents
        self.finish({"agents": sorted(names), "default": config.default_agent})


def _body(model: type[_Body], raw: bytes) -> _Body:
    try:
        return model.model_validate(bounded_json.loads(raw, max_bytes=MAX_BODY_BYTES))
    except ValidationError as exc:
        raise web.HTTPError(400, why_invalid(exc)) from None
    except ValueError as exc:  # bounded_json.Rejected among them
        raise web.HTTPError(400, f"not a JSON object: {exc}") from None


class _SessionsHandler(_ApiHandler):
    """What the chats and the sessions endpoints share: who asks, where, which sessions
    are theirs."""

    def initialize(self, hubs: KernelHubs, principals: Principals) -> None:  # type: ignore[override]
        super().initialize(hubs)
        self.principals = principals

    @property
    def principal(self) -> Principal:
        return self.principals.of(self.current_user)

    def _spec(self, agent: str) -> AgentSpec:
        if not 0 < len(agent) <= 128:
            raise web.HTTPError(400, "agent: a name of 1 to 128 characters")
        try:
            return agent_spec(self.hubs.config, agent, {})
        except Forbidden as exc:
            raise web.HTTPError(403, str(exc)) from None
        except UnknownAgent as exc:
            raise web.HTTPError(400, str(exc)) from None

    def _live_chat(self, me: Principal, kernel_id: str, agent: str, session_id: str) -> str | None:
        """The chat of this kernel that has the session open (None: no chat has); 409 when
        a chat that ``me`` may not act on, or one of another kernel, has."""
        for held_by, chat_id in self.hubs.holding(agent, session_id):
            hub = self.hubs.get(held_by)
            if held_by == kernel_id and hub is not None and may_act(hub.chats[chat_id], me.id):
                return chat_id
            raise web.HTTPError(
                409,
                f"session {session_id!r} is open in another chat (another notebook's, or "
                "another user's)",
            )
        return None

    async def _continuable(self, me: Principal, agent: str, cwd: str, session_id: str) -> None:
        """Refuses (403, 400) to continue ``session_id`` unless it is ``me``'s to continue
        (the module's docstring says when)."""
        config: HubConfig = self.hubs.config
        spec = agent_spec(config, agent, {})
        refused = config.sessions.refusal(spec.name, cwd, session_id, me.id)
        if refused is not None:
            raise web.HTTPError(403, refused)
        if config.sessions.owner(spec.name, cwd, session_id) is not None:
            return  # seen started here, by ``me``
        if not self.principals.holds_account(me):
            raise web.HTTPError(
                403,
                f"session {session_id!r} was not started by you on this server (or before it "
                "restarted): here only sessions you started can be continued",
            )
        listed = await listed_sessions(spec, cwd, LIST_TIMEOUT)
        why = unknown_session(session_id, cwd, listed)
        if why is not None:
            raise web.HTTPError(400, f"loadSessionId: {why}")

    async def _cwd(self, kernel_id: str, cwd: str | None) -> str:
        """``cwd`` (a path relative to the server's root, or an absolute one under it, as a
        saved chat records it), else the notebook's directory."""
        root = os.path.realpath(self.contents_manager.root_dir)
        if cwd is None:
            sessions = await self.session_manager.list_sessions()  # type: ignore[no-untyped-call]
            paths = [s["path"] for s in sessions if s.get("kernel", {}).get("id") == kernel_id]
            cwd = os.path.dirname(paths[0]) if paths else ""
        refused = web.HTTPError(400, f"cwd: {cwd!r} is not a directory under the server's root")
        if "\0" in cwd:  # no path holds one (realpath raises ValueError)
            raise refused
        path = os.path.realpath(os.path.join(root, cwd.lstrip("/")))
        absolute = os.path.realpath(cwd)
        if os.path.isabs(cwd) and os.path.commonpath([root, absolute]) == root:
            path = absolute
        if os.path.commonpath([root, path]) != root or not os.path.isdir(path):
            raise refused
        return path


class ChatsHandler(_SessionsHandler):
    @web.authenticated
    @may_execute
    async def get(self) -> None:
        hub = self.hubs.get(self._kernel(self.get_query_argument("kernel", "")))
        me = self.principal.id
        chats = []
        for chat_id, chat in hub.chats.items() if hub is not None else ():
            # Another user's chat, not shared: who has it, not what it says.
            theirs = not may_act(chat, me)
            chats.append(
                {
                    "chatId": chat_id,
                    "agent": chat.session.spec.name,
                    "owner": chat.owner,
                    "ownerName": chat.owner_name,
                    "share": chat.share,
                    "mayAct": not theirs,
                    "mine": chat.owner == me,
                    "status": chat.session.status,
                    "title": None if theirs else chat_title(chat.session),
                    "sessionId": None if theirs else chat.session.session_id,
                    # A question waits for an answer this login may give (the panel marks it).
                    "waiting": not theirs and bool(chat.session.pending),
                }
            )
        self.finish({"chats": chats})

    @web.authenticated
    @may_execute
    async def post(self) -> None:
        body = _body(OpenChatBody, self.request.body)
        kernel_id = self._kernel(body.kernel)
        cwd = await self._cwd(kernel_id, body.cwd)
        me = self.principal
        try:
            if body.loadSessionId is not None:
                # Whose it is to continue first (403), then whether a chat has it open.
                await self._continuable(me, body.agent, cwd, body.loadSessionId)
                spec = self._spec(body.agent)
                live = self._live_chat(me, kernel_id, spec.name, body.loadSessionId)
                if live is not None:
                    self.finish(json.dumps({"chatId": live}))
                    return
            hub = self.hubs.attach(kernel_id)
            chat_id = await hub.open_chat(
                body.agent,
                cwd=cwd,
                owner=me.id,
                owner_name=me.name,
                load_session_id=body.loadSessionId,
            )
        except Forbidden as exc:
            raise web.HTTPError(403, str(exc)) from None
        except TooManyChats as exc:
            raise web.HTTPError(429, str(exc)) from None
        except UnknownAgent as exc:
            raise web.HTTPError(400, str(exc)) from None
        except RuntimeError as exc:  # the server is stopping
            raise web.HTTPError(503, str(exc)) from None
        self.log.info("acp_notebook: %s opened chat %s", self.current_user.username, chat_id)
        self.set_status(201)
        self.finish(json.dumps({"chatId": chat_id}))


class SessionsHandler(_SessionsHandler):
    """The agent's past sessions in the notebook's directory (the module docstring)."""

    # History requests being served, over every instance (each starts an agent).
    running = 0

    @contextlib.asynccontextmanager
    async def _agent_call(self) -> AsyncIterator[None]:
        if SessionsHandler.running >= MAX_AGENT_CALLS:
            raise web.HTTPError(429, "too many session requests at once: try again")
        SessionsHandler.running += 1
        try:
            yield
        except SessionsUnavailable as exc:
            raise web.HTTPError(409, str(exc)) from None
        finally:
            SessionsHandler.running -= 1

    async def _mine(self, me: Principal, spec: AgentSpec, cwd: str, session_id: str) -> None:
        """Refuses (403, 400) a session that is not ``me``'s to fork or delete: one a chat
        here opened for someone else, or one ``_continuable`` refuses."""
        owner = self.hubs.config.sessions.owner(spec.name, cwd, session_id)
        if owner is None:
            await self._continuable(me, spec.name, cwd, session_id)
        elif owner != me.id:
            raise web.HTTPError(403, f"session {session_id!r} was started by another user")

    @web.authenticated
    @may_execute
    async def get(self) -> None:
        kernel_id = self._kernel(self.get_query_argument("kernel", ""))
        spec = self._spec(self.get_query_argument("agent", ""))
        cursor = self.get_query_argument("cursor", None)
        if cursor is not None and not 0 < len(cursor) <= MAX_TEXT:
            raise web.HTTPError(400, f"cursor: 1 to {MAX_TEXT} characters")
        cwd = await self._cwd(kernel_id, None)
        me = self.principal
        async with self._agent_call():
            try:
                listed = await list_sessions(
                    spec.argv, agent_env(spec), cwd, LIST_TIMEOUT, HISTORY_PAGE, cursor
                )
            except SessionsUnavailable as exc:
                self.finish({"unavailable": str(exc)})
                return
        owners = self.hubs.config.sessions
        account = self.principals.holds_account(me)

        def visible(session_id: str) -> bool:
            # Another user's sessions are not listed to them, nor theirs to this one.
            owner = owners.owner(spec.name, cwd, session_id)
            return owner == me.id or (owner is None and account)

        sessions = [
            {
                "sessionId": info.session_id,
                "title": None if info.title is None else info.title[:MAX_TITLE],
                "updatedAt": None if info.updated_at is None else info.updated_at.isoformat(),
            }
            for info in listed
            if valid_session_id(info.session_id) and visible(info.session_id)
        ]
        self.finish(
            {
                "sessions": sessions,
                "nextCursor": listed.next_cursor,
                "offers": sorted(listed.offers),
            }
        )

    @web.authenticated
    @may_execute
    async def post(self) -> None:
        body = _body(ForkBody, self.request.body)
        kernel_id = self._kernel(body.kernel)
        spec = self._spec(body.agent)
        cwd = await self._cwd(kernel_id, None)
        me = self.principal
        # Counted from the check on: it may start the agent to list its sessions.
        async with self._agent_call():
            await self._mine(me, spec, cwd, body.fork)
            live = self._live_chat(me, kernel_id, spec.name, body.fork)
            hub = self.hubs.get(kernel_id)
            if live is not None and hub is not None:
                # Its agent has it open (or is opening it): forked there, as the chat's
                # own request.
                await asyncio.wait([hub.chats[live].start_task], timeout=LIST_TIMEOUT)
                fork = {"type": "chat:fork", "id": "fork", "chatId": live}
                ack = await hub.handle(fork, user=me.id, name=me.name)
                if "error" in ack:
                    raise web.HTTPError(409, f"{ack['error']}: {ack.get('detail') or ''}")
                forked = str(ack["sessionId"])
            else:
                forked = await fork_stored_session(
                    spec.argv, agent_env(spec), cwd, body.fork, LIST_TIMEOUT
                )
                self.hubs.config.sessions.note(spec.name, cwd, forked, me.id)
        self.set_status(201)
        self.finish({"sessionId": forked})

    @web.authenticated
    @may_execute
    async def delete(self) -> None:
        kernel_id = self._kernel(self.get_query_argument("kernel", ""))
        spec = self._spec(self.get_query_argument("agent", ""))
        session_id = self.get_query_argument("session", "")
        if not valid_session_id(session_id):
            raise web.HTTPError(400, "session: not a session id")
        cwd = await self._cwd(kernel_id, None)
        async with self._agent_call():
            await self._mine(self.principal, spec, cwd, session_id)
            if self.hubs.holding(spec.name, session_id):
                raise web.HTTPError(409, f"session {session_id!r} is open in a chat: close it")
            await delete_stored_session(spec.argv, agent_env(spec), cwd, session_id, LIST_TIMEOUT)
        self.set_status(204)
        self.finish()
