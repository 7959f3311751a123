"""``acp_notebook.sessions(agent, cwd)``: an agent's past sessions, to continue one, and
``delete_session``: remove one.

Starts the agent, ``initialize``, pages through ``session/list`` (or sends
``session/delete``, or ``session/fork`` for the Agent panel) and ends the agent.
It runs the agent in this process (the kernel), as ``Chat(..., transport="local")``
would: the sessions an agent keeps on disk belong to the user, not to a server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from ..wire.contracts import valid_session_id
from .catalogue import AgentSpec, resolve_agent
from .connection import AgentConnection
from .handshake import INITIALIZE_PARAMS, agent_env
from .jsonrpc import RpcError
from .resume import forked_session, offered, offers_session

T = TypeVar("T")

MAX_SESSIONS = 1000  # what one listing returns at most, whatever the agent offers
MAX_PAGES = 50
MAX_TEXT = 1024
# A session id to continue that the agent cannot vouch for (it does not list its
# sessions): letters and digits, then also ``._:-`` (UUIDs, "ses_..."), no "..".
STRICT_SESSION_ID = re.compile(r"(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._:-]{0,255}")


class SessionsUnavailable(RuntimeError):
    """The agent does not list (or delete) its sessions, or failed to."""


@dataclass(frozen=True)
class SessionInfo:
    """One past session, as ``session/list`` reported it; continue it with
    ``Chat.resume(info.session_id, agent=..., cwd=info.cwd)``."""

    session_id: str
    cwd: str
    title: str | None
    updated_at: datetime | None


class SessionList(list[SessionInfo]):
    """Sessions, most recent first as the agent lists them; ``next_cursor``: where the
    listing goes on (``sessions(..., cursor=...)``), None when nothing is left;
    ``offers``: what else the agent does with its sessions (``resume.offered``)."""

    def __init__(
        self,
        found: Sequence[SessionInfo],
        next_cursor: str | None,
        offers: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__(found)
        self.next_cursor = next_cursor
        self.offers = offers


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value[:64].replace("Z", "+00:00"))
    except ValueError:
        return None


def parse_page(result: Any) -> tuple[list[SessionInfo], str | None]:
    """A ``session/list`` result: its sessions (malformed entries skipped), its next cursor."""
    if not isinstance(result, dict) or not isinstance(result.get("sessions"), list):
        raise SessionsUnavailable("session/list returned no sessions list")
    found = []
    for entry in result["sessions"]:
        if not isinstance(entry, dict):
            continue
        session_id, cwd, title = entry.get("sessionId"), entry.get("cwd"), entry.get("title")
        if not (isinstance(session_id, str) and isinstance(cwd, str)):
            continue
        found.append(
            SessionInfo(
                session_id[:MAX_TEXT],
                cwd[:MAX_TEXT],
                title[:MAX_TEXT] if isinstance(title, str) else None,
                _when(entry.get("updatedAt")),
            )
        )
    cursor = result.get("nextCursor")
    # A cut cursor would point nowhere: one too long ends the listing.
    return found, cursor if isinstance(cursor, str) and 0 < len(cursor) <= MAX_TEXT else None


async def _initialized(conn: AgentConnection, verb: str) -> frozenset[str]:
    """Initialized, where the agent advertises ``sessionCapabilities.<verb>``: what it
    offers (``resume.offered``)."""
    init = await conn.request("initialize", INITIALIZE_PARAMS)
    caps = init.get("agentCapabilities") if isinstance(init, dict) else None
    if not offers_session(caps, verb):
        raise SessionsUnavailable(f"the agent does not {verb} its sessions (session/{verb})")
    return offered(caps)


async def _pages(
    conn: AgentConnection, cwd: str, limit: int = MAX_SESSIONS, cursor: str | None = None
) -> SessionList:
    offers = await _initialized(conn, "list")
    found: list[SessionInfo] = []
    for _ in range(MAX_PAGES):
        params: dict[str, Any] = {"cwd": cwd}
        if cursor is not None:
            params["cursor"] = cursor
        page, cursor = parse_page(await conn.request("session/list", params))
        found.extend(page)
        if cursor is None or len(found) >= limit:
            break
    # Whole pages: a cursor cannot point inside one, so the last page may pass ``limit``.
    # Past MAX_SESSIONS the rest is dropped, and the cursor with it.
    if len(found) > MAX_SESSIONS:
        return SessionList(found[:MAX_SESSIONS], None, offers)
    return SessionList(found, cursor, offers)


async def _with_agent(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    timeout: float,
    work: Callable[[AgentConnection], Awaitable[T]],
) -> T:
    """``work`` on a connection to the agent started for it, ended after."""
    conn = AgentConnection(
        argv,
        env=env,
        cwd=cwd if os.path.isdir(cwd) else None,  # a listing may name a folder that is gone
        on_request=lambda req: conn.respond_error(req.id, -32601, "not supported here"),
        on_notification=lambda note: None,
        on_exit=lambda code: None,
    )
    try:
        await conn.start()
    except OSError as exc:
        raise SessionsUnavailable(f"could not start {argv[0]!r}: {exc}") from None
    try:
        return await asyncio.wait_for(work(conn), timeout)
    except RpcError as exc:
        raise SessionsUnavailable(f"the agent refused: {exc.message}") from None
    except asyncio.TimeoutError:
        raise SessionsUnavailable(f"the agent did not answer within {timeout:g} s") from None
    finally:
        await conn.close()


async def list_sessions(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    timeout: float,
    limit: int = MAX_SESSIONS,
    cursor: str | None = None,
) -> SessionList:
    return await _with_agent(argv, env, cwd, timeout, lambda conn: _pages(conn, cwd, limit, cursor))


def unknown_session(session_id: str, cwd: str, listed: Sequence[SessionInfo] | None) -> str | None:
    """Why ``session_id`` is not one to continue in ``cwd`` (None: it is): where the agent
    listed its sessions (``listed``), one of those; else one of the strict character set."""
    if listed is not None:
        if any(info.session_id == session_id for info in listed):
            return None
        return f"the agent lists no session {session_id!r} in {cwd}"
    if STRICT_SESSION_ID.fullmatch(session_id):
        return None
    return (
        f"session id {session_id!r}: the agent does not list its sessions, so only letters, "
        "digits and ._:- (not first, no '..') are accepted"
    )


async def listed_sessions(spec: AgentSpec, cwd: str, timeout: float) -> list[SessionInfo] | None:
    """``spec``'s agent's sessions in ``cwd``, or None where it cannot say (it does not list
    them, or failed to)."""
    try:
        return await list_sessions(spec.argv, agent_env(spec), cwd, timeout)
    except SessionsUnavailable:
        return None


def _run(work: Coroutine[Any, Any, T]) -> T:
    # Its own loop on its own thread: a notebook cell already runs inside a loop.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


def sessions(
    agent: str = "demo",
    cwd: str | None = None,
    *,
    limit: int | None = None,
    cursor: str | None = None,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
) -> SessionList:
    """The past sessions of ``agent`` in ``cwd`` (default: the current directory), each
    with its title. ``limit``: stop once that many are read (in the agent's pages, so a
    few more may come); the result's ``next_cursor`` then goes on from there, as
    ``cursor``. Without ``limit``, all of them (up to 1000)."""
    spec = resolve_agent(agent, command=command, env=env)
    where = os.path.abspath(cwd or os.getcwd())
    most = MAX_SESSIONS if limit is None else max(1, min(limit, MAX_SESSIONS))
    return _run(list_sessions(spec.argv, agent_env(spec), where, timeout, most, cursor))


async def _delete(conn: AgentConnection, session_id: str) -> None:
    await _initialized(conn, "delete")
    await conn.request("session/delete", {"sessionId": session_id})


async def _fork(conn: AgentConnection, session_id: str, cwd: str) -> str:
    offers = await _initialized(conn, "fork")
    params = {"sessionId": session_id, "cwd": cwd, "mcpServers": []}
    forked = forked_session(await conn.request("session/fork", params))
    if forked is None:
        raise SessionsUnavailable("session/fork returned no valid sessionId")
    if "close" in offers:  # the fork is opened in a chat of its own, later
        with contextlib.suppress(RpcError):  # forked all the same
            await conn.request("session/close", {"sessionId": forked})
    return forked


async def fork_stored_session(
    argv: Sequence[str], env: Mapping[str, str], cwd: str, session_id: str, timeout: float
) -> str:
    """The id of a new session forked from the stored ``session_id`` (``session/fork``,
    where the agent advertises it)."""
    return await _with_agent(argv, env, cwd, timeout, lambda c: _fork(c, session_id, cwd))


async def delete_stored_session(
    argv: Sequence[str], env: Mapping[str, str], cwd: str, session_id: str, timeout: float
) -> None:
    await _with_agent(argv, env, cwd, timeout, lambda c: _delete(c, session_id))


def delete_session(
    agent: str,
    session_id: str,
    cwd: str | None = None,
    *,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
) -> None:
    """Delete one of ``agent``'s past sessions (``session/delete``, where the agent
    advertises ``sessionCapabilities.delete``); ``SessionsUnavailable`` says why not.
    ``cwd``: where the agent runs (default: the current directory)."""
    if not valid_session_id(session_id):
        raise ValueError(f"not a session id: {session_id[:80]!r}")
    spec = resolve_agent(agent, command=command, env=env)
    where = os.path.abspath(cwd or os.getcwd())
    _run(delete_stored_session(spec.argv, agent_env(spec), where, session_id, timeout))
