"""The extension's REST endpoints, for the JupyterLab extension's Agent panel.

``GET  acp-notebook/api/agents``: the agent names a chat may start here, and the default.
``GET  acp-notebook/api/chats?kernel=<id>``: the chats of a kernel, each with its owner
(``owner``, ``ownerName``), its sharing and whether this login may act on it (``mayAct``);
its content (``title``, the first prompt, ``sessionId``, and ``waiting``: a question waits
for its answer) only where it may act.
``POST acp-notebook/api/chats`` ``{"kernel", "agent", "cwd"?, "mode"?, "loadSessionId"?}``:
opens a chat on the kernel's hub, owned by the logged-in principal (identity.py),
continuing the ACP session ``loadSessionId`` if given; ``{"chatId"}``.

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

import json
import os
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from tornado import web

from ..agent.catalogue import UnknownAgent, builtin_agents
from ..agent.session_list import listed_sessions, unknown_session
from ..bridge.chat_session import ChatSession
from ..bridge.hub import Forbidden, HubConfig, TooManyChats, agent_spec, may_act
from ..wire import bounded_json
from ..wire.contracts import MAX_ID, PathText, SessionId, why_invalid
from .identity import Principal, Principals
from .kernels import KernelHubs

# A chat request body is a few short strings; anything larger is not one.
MAX_BODY_BYTES = 16 * 1024
MAX_TITLE = 120
# How long the agent may take to list its sessions when a Continue names one.
LIST_TIMEOUT = 60.0
Name = Annotated[str, StringConstraints(min_length=1, max_length=128)]


class OpenChatBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kernel: Name
    agent: Name
    cwd: PathText | None = None
    mode: Annotated[str, Field(max_length=MAX_ID)] | None = None
    loadSessionId: SessionId | None = None


# Whoever drives an agent could as well run code: the same permission.
_Method = Callable[..., Coroutine[Any, Any, None]]
may_execute: Callable[[_Method], _Method] = authorized(
    "execute", "kernels", "needs the permission to execute on kernels"
)


def chat_title(session: ChatSession) -> str | None:
    """The chat's first prompt, first line, cut short (the history may have dropped it)."""
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


class ChatsHandler(_ApiHandler):
    def initialize(self, hubs: KernelHubs, principals: Principals) -> None:  # type: ignore[override]
        super().initialize(hubs)
        self.principals = principals

    @property
    def principal(self) -> Principal:
        return self.principals.of(self.current_user)

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
        try:
            body = OpenChatBody.model_validate(
                bounded_json.loads(self.request.body, max_bytes=MAX_BODY_BYTES)
            )
        except ValidationError as exc:
            raise web.HTTPError(400, why_invalid(exc)) from None
        except ValueError as exc:  # bounded_json.Rejected among them
            raise web.HTTPError(400, f"not a JSON object: {exc}") from None
        kernel_id = self._kernel(body.kernel)
        cwd = await self._cwd(kernel_id, body.cwd)
        me = self.principal
        try:
            if body.loadSessionId is not None:
                await self._continuable(me, body.agent, cwd, body.loadSessionId)
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

    async def _continuable(self, me: Principal, agent: str, cwd: str, session_id: str) -> None:
        """Refuses (403, 400) to continue ``session_id`` unless it is ``me``'s to continue
        (the module's docstring says when)."""
        config: HubConfig = self.hubs.config
        spec = agent_spec(config, agent, {})
        if config.sessions.owner(spec.name, cwd, session_id) is not None:
            return  # seen started here: the hub lets only its owner continue it
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
