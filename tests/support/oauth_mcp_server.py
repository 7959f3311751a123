"""An MCP server that needs OAuth, with its own authorization server, on 127.0.0.1.

For the claude wrapper's MCP sign-in (a URL elicitation, reference/acp-protocol.md §6):
the MCP SDK serves it all from one port, with an in-memory provider behind it:

- ``/mcp``: streamable HTTP; without a valid bearer token it answers 401 with
  ``WWW-Authenticate: Bearer resource_metadata=...``. Its one tool, ``read_vault``,
  returns ``VAULT_TEXT``.
- ``/.well-known/oauth-protected-resource/mcp`` and
  ``/.well-known/oauth-authorization-server``: the metadata a client discovers.
- ``/register`` (dynamic client registration), ``/authorize``, ``/token`` (PKCE).

``/authorize`` signs the user in at once (there is no login page) and redirects to the
client's ``redirect_uri`` with a code. Every request the server gets is recorded
(``requests``), so a test can tell that nobody opened the sign-in page before the user
did.

The server runs on its own thread and event loop, so it answers while a test blocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.types import ASGIApp, Receive, Scope, Send

NAME = "vault"
TOOL = f"mcp__{NAME}__read_vault"  # how Claude Code names the tool
VAULT_TEXT = "the vault holds 42 gold coins"
AUTHORIZE_PATH = "/authorize"
MCP_PATH = "/mcp"


class Authority:
    """The in-memory authorization server: registered clients, codes and tokens."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.tokens: dict[str, AccessToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        assert client.client_id is not None
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        token = secrets.token_urlsafe(24)
        self.tokens[token] = AccessToken(
            token=token,
            client_id=authorization_code.client_id,
            scopes=authorization_code.scopes,
            resource=authorization_code.resource,
        )
        return OAuthToken(access_token=token, token_type="Bearer", expires_in=3600)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return None  # none are issued

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        raise NotImplementedError("no refresh tokens are issued")

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.tokens.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.tokens.pop(token.token, None)


class _Recorder:
    """ASGI middleware: notes (method, path) of every HTTP request before serving it."""

    def __init__(self, app: ASGIApp, seen: list[tuple[str, str]], lock: threading.Lock) -> None:
        self.app, self.seen, self.lock = app, seen, lock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            with self.lock:
                self.seen.append((scope["method"], scope["path"]))
        await self.app(scope, receive, send)


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the test process keeps its signals


class OAuthMcpServer:
    """The server on a thread: ``with OAuthMcpServer() as vault: ... vault.url``."""

    def __init__(self) -> None:
        self.authority = Authority()
        self._seen: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The MCP endpoint, for ``mcp_servers=[{"type": "http", "url": ...}]``."""
        return self.origin + MCP_PATH

    def entry(self) -> dict[str, Any]:
        return {"type": "http", "name": NAME, "url": self.url}

    @property
    def requests(self) -> list[tuple[str, str]]:
        """(method, path) of every request so far, in order."""
        with self._lock:
            return list(self._seen)

    def hits(self, path: str) -> int:
        return sum(1 for _, p in self.requests if p == path)

    def _app(self) -> ASGIApp:
        mcp = MCPServer(
            NAME,
            auth_server_provider=self.authority,
            auth=AuthSettings(
                issuer_url=self.origin,
                resource_server_url=self.url,
                validate_token_resource=True,  # a token is good for the resource it names
                client_registration_options=ClientRegistrationOptions(enabled=True),
            ),
        )

        @mcp.tool()
        def read_vault() -> str:
            """Read what the vault holds."""
            return VAULT_TEXT

        return _Recorder(
            mcp.streamable_http_app(streamable_http_path=MCP_PATH), self._seen, self._lock
        )

    def start(self) -> OAuthMcpServer:
        config = uvicorn.Config(
            self._app(),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=1,  # Claude Code may hold a stream open to the end
        )
        server = self._server = _Server(config)
        self._thread = threading.Thread(
            target=asyncio.run, args=(server.serve(sockets=[self._sock]),), daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the OAuth MCP stub did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self._sock.close()

    def __enter__(self) -> OAuthMcpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
