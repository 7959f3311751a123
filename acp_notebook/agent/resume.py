"""Which ACP method continues a stored session, read from the agent's capabilities.

``session/load`` when the agent advertises ``loadSession`` (it replays the
conversation first, so the chat shows it again); else ``session/resume`` when it
advertises ``sessionCapabilities.resume`` (the agent remembers, nothing is
replayed); else the agent cannot continue a session and the chat says so.
"""

from __future__ import annotations

from typing import Any, Literal

from ..wire.contracts import valid_session_id

Method = Literal["session/load", "session/resume"]


def continue_method(capabilities: Any) -> Method | None:
    if isinstance(capabilities, dict) and capabilities.get("loadSession") is True:
        return "session/load"
    return "session/resume" if offers_session(capabilities, "resume") else None


def offers_session(capabilities: Any, name: str) -> bool:
    """Whether the agent advertises ``sessionCapabilities.<name>`` (``list``, ``resume``,
    ``close``, ``delete``, ``fork``)."""
    sessions = capabilities.get("sessionCapabilities") if isinstance(capabilities, dict) else None
    return isinstance(sessions, dict) and isinstance(sessions.get(name), dict)


def cannot_continue(agent: str) -> str:
    return (
        f"{agent} cannot continue an earlier session: it advertises neither "
        "loadSession nor sessionCapabilities.resume"
    )


def not_offered(agent: str, name: str) -> str:
    return f"{agent} does not advertise sessionCapabilities.{name} (session/{name})"


def offered(capabilities: Any) -> frozenset[str]:
    """What the agent does with its sessions: ``load`` (``loadSession``) and each of
    ``sessionCapabilities``' ``list``, ``resume``, ``close``, ``delete``, ``fork``."""
    verbs = {
        v for v in ("list", "resume", "close", "delete", "fork") if offers_session(capabilities, v)
    }
    if isinstance(capabilities, dict) and capabilities.get("loadSession") is True:
        verbs.add("load")
    return frozenset(verbs)


def forked_session(result: Any) -> str | None:
    """The new session's id in a ``session/fork`` result; None when it holds no valid one."""
    forked = result.get("sessionId") if isinstance(result, dict) else None
    return forked if valid_session_id(forked) else None
