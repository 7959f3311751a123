"""The Jupyter server extension: the hubs of this server's kernels and their sockets.

Configured with traitlets, e.g. in ``jupyter_server_config.py``::

    c.AcpNotebookApp.answer_timeout = 120
    c.AcpNotebookApp.allowed_agents = ["claude-code"]
    c.AcpNotebookApp.allow_commands = False
    c.AcpNotebookApp.kernel_url = "http://lab-host.example:8888/"  # kernels elsewhere
"""

from __future__ import annotations

import logging
import os
import secrets
from typing import TYPE_CHECKING, Any

from jupyter_events.logger import EventLogger
from jupyter_server.extension.application import ExtensionApp
from jupyter_server.gateway.connections import GatewayWebSocketConnection
from jupyter_server.serverapp import ServerApp
from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection
from tornado.ioloop import PeriodicCallback
from traitlets import Bool, Dict, Enum, Float, Int, List, Unicode, default

from ..agent.jsonrpc import LineBudget
from ..bridge.chat_session import SessionConfig
from ..bridge.hub import ChatCount, HubConfig
from ..kernel import widget_code
from ..notebook_tools.documents import DocumentSource
from ..notebook_tools.page_document import Pages
from ..notebook_tools.server_side import ServerTools
from ..notebook_tools.text_files import ServerFiles
from ..wire.kernel_auth import SECRET_ENV, URL_ENV, UsedProofs
from .api import AgentsHandler, ChatsHandler, SessionsHandler
from .gateway_socket import V1GatewayConnection
from .handlers import BrowserSocket, KernelSocket
from .identity import Principals
from .kernel_keys import KernelKeys
from .kernel_queries import KernelQueries
from .kernels import KernelHubs
from .owners import Executions, noting_connection
from .page_socket import PageSocket

if TYPE_CHECKING:
    from ..notebook_tools.shared_document import SharedDocuments

KERNEL_ACTIONS = "https://events.jupyter.org/jupyter_server/kernel_actions/v1"


def loopback_url(serverapp: ServerApp) -> str | None:
    """How a kernel on this machine reaches the server (base_url included); None over a unix socket."""
    if serverapp.sock:
        return None
    ip = serverapp.ip
    if ip in ("", "localhost", "0.0.0.0"):
        host = "127.0.0.1"
    elif ip == "::":
        host = "[::1]"
    else:
        host = f"[{ip}]" if ":" in ip else ip
    scheme = "https" if serverapp.certfile else "http"
    return f"{scheme}://{host}:{serverapp.port}{serverapp.base_url}"


def ydoc_extension(serverapp: ServerApp) -> Any | None:
    """The server's shared documents (jupyter_server_ydoc, real-time collaboration) when
    it loads them. Looked up among the enabled extensions, not in the settings: it loads
    after this one (extensions load by name)."""
    apps = serverapp.extension_manager.extension_apps.get("jupyter_server_ydoc", set())
    return next(iter(apps), None)


class AcpNotebookApp(ExtensionApp):
    name = "acp_notebook"

    answer_timeout = Float(
        60.0,
        help="Seconds a permission or a question waits for an answer before it is cancelled.",
    ).tag(config=True)
    default_agent = Unicode("demo", help="The agent of Chat() without a name.").tag(config=True)
    agent_commands = Dict(
        key_trait=Unicode(),
        value_trait=List(Unicode()),
        help="Command lines that replace the built-in ones, by agent name.",
    ).tag(config=True)
    allowed_agents = List(
        Unicode(),
        default_value=None,
        allow_none=True,
        help="The agent names a chat may start; None allows every known name.",
    ).tag(config=True)
    allow_commands = Bool(
        True, help="Whether Chat(command=[...]) may start an arbitrary program."
    ).tag(config=True)
    history_events = Int(5000, help="Events a chat keeps for a reattaching client.").tag(
        config=True
    )
    history_bytes = Int(
        8 * 1024 * 1024, help="Bytes of events a chat keeps for a reattaching client."
    ).tag(config=True)
    line_budget = Int(
        64 * 1024 * 1024,
        help="Bytes the unfinished lines of all agents on this server may hold together; "
        "an agent whose line would go over is told so and the line is skipped.",
    ).tag(config=True)
    max_chats = Int(
        64,
        help="Chats this server holds open at once, over all its kernels and users (each "
        "an agent process): one more is refused, TOO_MANY_CHATS, until one is closed.",
    ).tag(config=True)
    notebook_tools = Bool(
        True,
        help="Whether every chat gets the `notebook` MCP server: the kernel's variables, "
        "the notebook's cells and last error, running code in the kernel, and its state, "
        "interrupt and restart.",
    ).tag(config=True)
    principals = Enum(
        ["auto", "shared", "per-user"],
        "auto",
        help="Who a login is to a chat's owner gate. 'shared': every login is one "
        "principal (everyone who holds the token may act on every chat); 'per-user': "
        "each Jupyter user is their own (a chat's owner alone may act, unless it is "
        "shared); 'auto': 'shared' where jupyter_server's own identity provider makes up "
        "an anonymous user per browser (a plain token or password login, no JupyterHub), "
        "else 'per-user'.",
    ).tag(config=True)
    kernel_url = Unicode(
        "",
        help="The URL (base_url included) by which kernels reach this server, for kernels "
        "on other machines (behind a kernel gateway), e.g. http://lab-host.example:8888/. "
        "Empty: the server's loopback address, for kernels on this machine.",
    ).tag(config=True)
    reconcile_interval = Float(
        10.0, help="Seconds between checks for kernels that are gone without a shutdown event."
    ).tag(config=True)

    @property
    def _server(self) -> ServerApp:
        assert self.serverapp is not None  # linked before any initialize_* runs
        return self.serverapp

    @property
    def _events(self) -> EventLogger:
        events = self._server.event_logger
        assert events is not None
        return events

    def _hub_config(self) -> HubConfig:
        return HubConfig(
            session=SessionConfig(
                answer_timeout=self.answer_timeout,
                history_events=self.history_events,
                history_bytes=self.history_bytes,
                line_budget=LineBudget(self.line_budget),
            ),
            agent_commands={name: tuple(argv) for name, argv in self.agent_commands.items()},
            allowed_agents=None if self.allowed_agents is None else frozenset(self.allowed_agents),
            allow_commands=self.allow_commands,
            default_agent=self.default_agent,
            chats=ChatCount(self.max_chats),
        )

    def initialize_settings(self) -> None:
        # As the server does for tornado's: the package's loggers write through the server's.
        package_log = logging.getLogger("acp_notebook")
        self._log_parent = package_log.parent
        package_log.parent = self._server.log
        self.queries = KernelQueries()
        self.executions = Executions()
        self.principals_of = Principals(self._server.identity_provider, self.principals)
        base = self._server.web_app.settings.get("kernel_websocket_connection_class")
        if base is GatewayWebSocketConnection:
            base = V1GatewayConnection  # pages reach kernels behind a gateway (its module)
        if isinstance(base, type) and issubclass(
            base, (ZMQChannelsWebsocketConnection, GatewayWebSocketConnection)
        ):
            # Who runs a cell is who owns the chats it opens (owners.py). Another
            # connection class leaves owners to JUPYTERHUB_USER.
            self.settings["kernel_websocket_connection_class"] = noting_connection(
                base, self.executions, self.principals_of
            )
        # The notebooks open in JupyterLab / Notebook 7 pages, for the agent's edits.
        self.pages = Pages()
        tools = None
        self.shared_documents: SharedDocuments | None = None
        if self.notebook_tools:
            server = self._server
            # Where a kernel's notebook is found live, tried in order (DESIGN.md, "Agent
            # edits"): the shared document, the open page; its saved file comes last. Read
            # when a kernel's tools start, so the shared document put first below counts.
            sources: list[DocumentSource] = [self.pages]
            tools = ServerTools(
                server.kernel_manager, server.session_manager, self.queries.ask, sources
            )
            ydoc = ydoc_extension(server)
            if ydoc is not None:
                # Only with jupyter-collaboration installed (it brings pycrdt).
                from ..notebook_tools.shared_document import SharedDocuments

                self.shared_documents = SharedDocuments(ydoc, tools.runner_of, self.pages)
                sources.insert(0, self.shared_documents)
        contents = self._server.contents_manager
        root = getattr(contents, "root_dir", self._server.root_dir)
        files = ServerFiles(contents, root, self.pages)
        # Every chat's agent reads and writes under the server's root, whatever its cwd.
        self.hubs = KernelHubs(
            self._hub_config(), self.log, self.queries.ask, tools, lambda cwd: files
        )
        self.secret = secrets.token_urlsafe(32)
        self.proofs = UsedProofs()
        self.kernel_keys = KernelKeys(self.secret, self._kernel_url)
        self.kernel_keys.hook(self._server.kernel_manager)
        self._export_env()
        self._events.add_listener(schema_id=KERNEL_ACTIONS, listener=self._on_kernel_action)
        self._reconciler = PeriodicCallback(self._reconcile, self.reconcile_interval * 1000)
        self._reconciler.start()

    @default("static_paths")
    def _static_paths(self) -> list[str]:
        # The widget's bundle, fetched once per page by the loader in each chat's model.
        return [str(widget_code.STATIC)]

    def initialize_handlers(self) -> None:
        self.handlers.extend(
            [
                (
                    r"acp-notebook/ws/browser",
                    BrowserSocket,
                    {"hubs": self.hubs, "principals": self.principals_of},
                ),
                (r"acp-notebook/ws/pages", PageSocket, {"pages": self.pages}),
                (
                    r"acp-notebook/ws/kernel",
                    KernelSocket,
                    {
                        "hubs": self.hubs,
                        "secret": self.secret,
                        "queries": self.queries,
                        "proofs": self.proofs,
                        "executions": self.executions,
                        "keys": self.kernel_keys,
                    },
                ),
                (r"acp-notebook/api/agents", AgentsHandler, {"hubs": self.hubs}),
                (
                    r"acp-notebook/api/chats",
                    ChatsHandler,
                    {"hubs": self.hubs, "principals": self.principals_of},
                ),
                (
                    r"acp-notebook/api/sessions",
                    SessionsHandler,
                    {"hubs": self.hubs, "principals": self.principals_of},
                ),
            ]
        )

    def _kernel_url(self) -> str | None:
        return self.kernel_url or loopback_url(self._server)

    def _export_env(self) -> None:
        # Kernels started from now on inherit both (jupyter_client copies os.environ),
        # also those started past the hook (KernelKeys): they prove with their session key.
        url = self._kernel_url()
        if url is None:
            self.log.info(
                "acp_notebook: the server listens on a unix socket; kernels use local mode"
            )
            return
        os.environ[URL_ENV] = url
        os.environ[SECRET_ENV] = self.secret

    async def _start_jupyter_server_extension(self, serverapp: ServerApp) -> None:
        # The port is final only once the server listens (port 0, port retries).
        self._export_env()

    async def _on_kernel_action(
        self, logger: EventLogger, schema_id: str, data: dict[str, Any]
    ) -> None:
        # A restart keeps the chats (only their runs of code end); a shutdown ends them.
        kernel_id, action = data.get("kernel_id"), data.get("action")
        if not kernel_id or data.get("status") != "success":
            return
        if action == "shutdown":
            self.kernel_keys.forget(kernel_id)
            await self.hubs.drop(kernel_id, "shut down")
        elif action == "restart":
            self.pages.restarted(kernel_id)
            if self.hubs.tools is not None:
                self.hubs.tools.restarted(kernel_id)

    async def _reconcile(self) -> None:
        alive = self._server.kernel_manager.list_kernel_ids()
        self.kernel_keys.keep(alive)
        await self.hubs.reconcile(alive)

    async def stop_extension(self) -> None:
        self._reconciler.stop()
        KernelKeys.unhook(self._server.kernel_manager)
        self._events.remove_listener(schema_id=KERNEL_ACTIONS, listener=self._on_kernel_action)
        await self.hubs.close()
        logging.getLogger("acp_notebook").parent = self._log_parent
        if os.environ.get(SECRET_ENV) == self.secret:
            os.environ.pop(URL_ENV, None)
            os.environ.pop(SECRET_ENV, None)
