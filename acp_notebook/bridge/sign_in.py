"""A chat's sign-in: the agent's ``authMethods`` as a card, and the one the user picks.

When the agent refuses to open a session (or to run a turn) with ACP's ``auth_required``,
the chat does not fail: every client hears an ``auth`` event with the methods, and the
session waits (``done``). The user picks one (``chat:auth``, the owner only):
- the agent's own: ``authenticate {methodId}``;
- a terminal method: its command (the agent's own command line and the method's
  arguments, shown on the card before the click) runs as a client terminal whose output
  shows live on a tool call of the chat's own, and whose stdin takes the lines the user
  types (``input``: written to the process, never logged, never emitted, never stored);
  a zero exit signs in;
- an ``env_var`` method is not run: its card says which variables to set, and where.
A sign-in that worked sets ``done`` (the session retries ``session/new``); one that did
not shows the card again, saying why. ``sign_out`` is ACP's ``logout``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..agent.auth_methods import env_hint, find, logout_offered, take_auth_methods, terminal_env
from ..agent.jsonrpc import RpcError
from ..agent.terminals import ClientTerminals, Terminal
from ..wire.contracts import MAX_MESSAGE, AuthEvent, AuthMethodView, AuthState, StreamEvent

# The tool call a terminal sign-in's output shows on: ours, never one of the agent's.
TOOL_CALL_PREFIX = "acp-notebook-sign-in-"


class SignInRefused(ValueError):
    """A sign-in request that cannot be carried out now; the message says why."""


class SignIn:
    """The sign-in of one chat (see the module's docstring)."""

    def __init__(
        self,
        *,
        emit: Callable[[StreamEvent], None],
        show_update: Callable[[dict[str, Any]], None],
        terminals: ClientTerminals,
        request: Callable[[str, Any], Awaitable[Any]],
        env: Mapping[str, str],
        timeout: float,
    ) -> None:
        self._emit_event = emit
        self._show = show_update
        self._terminals = terminals
        self._request = request
        self._env = dict(env)
        self._timeout = timeout  # what the agent's authenticate and logout may take
        self.methods: list[AuthMethodView] = []
        self.logout = False
        self.state: AuthState | None = None
        # A sign-in worked since the agent last refused: the session tries again.
        self.done = asyncio.Event()
        self._running: asyncio.Task[None] | None = None
        self._login: Terminal | None = None
        self._runs = 0
        self._gone = False  # the agent exited: nothing more is said

    def learn(self, init: Mapping[str, Any], agent_argv: tuple[str, ...]) -> None:
        """The methods and the logout the ``initialize`` result offers."""
        self.methods = take_auth_methods(init.get("authMethods"), agent_argv)
        self.logout = logout_offered(init.get("agentCapabilities"))

    def refused(self, detail: str) -> bool:
        """The agent answered ``auth_required``: the card shows (False: the agent offers
        no method, and the refusal stands)."""
        if not self.methods:
            return False
        self.done.clear()
        if self.state != "signing_in":  # a sign-in still running goes on
            self._emit("required", detail=detail)
        return True

    # ------------------------------------------------------------ the card's controls

    def start(self, method_id: str, by: str | None) -> None:
        """Run method ``method_id``; its outcome arrives as ``auth`` events."""
        if self.state not in ("required", "signed_out"):
            raise SignInRefused(
                "a sign-in is running already"
                if self.state == "signing_in"
                else "the agent has not asked for a sign-in"
            )
        method = find(self.methods, method_id)
        if method is None:
            raise SignInRefused(f"the agent offers no sign-in method {method_id[:200]!r}")
        if method["type"] == "env_var":
            raise SignInRefused(env_hint(method))
        run = self._agent_method if method["type"] == "agent" else self._terminal_method
        self._running = asyncio.create_task(run(method, by))

    def input(self, text: str) -> None:
        """One line to the running terminal sign-in. ``text`` goes to its stdin only."""
        if self._login is None:
            raise SignInRefused("no sign-in command is running")
        try:
            ClientTerminals.write(self._login, text)
        except OSError as exc:
            raise SignInRefused(str(exc)) from None

    async def stop(self) -> None:
        """End the running sign-in (its card then offers the methods again)."""
        if self._login is not None:
            await self._terminals.stop(self._login)
        elif self._running is not None and not self._running.done():
            self._running.cancel()
        else:
            raise SignInRefused("no sign-in is running")

    async def sign_out(self, by: str | None) -> None:
        """ACP's ``logout``; the card then offers the methods again."""
        if not self.logout:
            raise SignInRefused("the agent does not advertise logout")
        if self.state == "signing_in":
            raise SignInRefused("a sign-in is running")
        try:
            await asyncio.wait_for(self._request("logout", {}), self._timeout)
        except asyncio.TimeoutError:
            raise SignInRefused(f"the agent did not log out within {self._timeout:g} s") from None
        self.done.clear()
        self._emit("signed_out", by=by)

    def end(self) -> None:
        """The agent is gone: a sign-in still running is dropped, silently."""
        self._gone = True
        if self._running is not None:
            self._running.cancel()

    # ------------------------------------------------------------ running a method

    async def _agent_method(self, method: AuthMethodView, by: str | None) -> None:
        self._emit("signing_in", method["id"], by=by)
        try:
            request = self._request("authenticate", {"methodId": method["id"]})
            await asyncio.wait_for(request, self._timeout)
        except RpcError as exc:
            self._failed(f"{method['name']}: the agent refused: {exc.describe()}")
        except asyncio.TimeoutError:
            self._failed(f"{method['name']}: the agent did not answer in {self._timeout:g} s")
        except asyncio.CancelledError:
            self._failed(f"{method['name']}: stopped")
            raise
        else:
            self._signed_in(method["id"], by)

    async def _terminal_method(self, method: AuthMethodView, by: str | None) -> None:
        self._runs += 1
        tool_id = f"{TOOL_CALL_PREFIX}{self._runs}"
        command = list(method.get("command") or [])
        self._show(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": tool_id,
                "title": f"Sign in: {method['name']}",
                "kind": "execute",
                "status": "in_progress",
                "rawInput": {"command": method.get("commandLine") or ""},
                "_meta": {"terminal_info": {"terminal_id": tool_id}},
            }
        )
        self._emit("signing_in", method["id"], tool_id, by=by)
        try:
            term = await self._terminals.login(command, terminal_env(self._env, method), tool_id)
        except OSError as exc:
            self._tool_status(tool_id, "failed")
            self._failed(f"{method['name']}: could not start {command[0]!r}: {exc}")
            return
        self._login = term
        try:
            await term.exited.wait()  # the user takes their time; stop() ends it
        finally:
            self._login = None
        status = term.exit_status or {}
        code = status.get("exitCode")
        self._tool_status(tool_id, "completed" if code == 0 else "failed")
        if code == 0:
            self._signed_in(method["id"], by)
        else:
            how = f"code {code}" if code is not None else f"signal {status.get('signal')}"
            self._failed(f"{method['name']}: the sign-in command ended with {how}")

    def _tool_status(self, tool_id: str, status: str) -> None:
        self._show({"sessionUpdate": "tool_call_update", "toolCallId": tool_id, "status": status})

    def _signed_in(self, method_id: str, by: str | None) -> None:
        self._emit("signed_in", method_id, by=by)
        self.done.set()

    def _failed(self, detail: str) -> None:
        self._emit("required", detail=detail)

    def _emit(
        self,
        state: AuthState,
        method_id: str | None = None,
        tool_call_id: str | None = None,
        detail: str | None = None,
        by: str | None = None,
    ) -> None:
        if self._gone:
            return
        self.state = state
        event: AuthEvent = {
            "kind": "auth",
            "state": state,
            "methods": self.methods,
            "logout": self.logout,
        }
        if method_id is not None:
            event["methodId"] = method_id
        if tool_call_id is not None:
            event["toolCallId"] = tool_call_id
        if detail:
            event["detail"] = detail[:MAX_MESSAGE]
        if by:
            event["by"] = by
        self._emit_event(event)
