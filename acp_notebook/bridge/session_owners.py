"""Who started each ACP session on this server: a session is its owner's to continue.

The hubs note the owner (a principal's id) of every chat whose agent opened or loaded a
session, by agent, directory and session id; the first owner noted keeps it (a load by
someone else was refused before it started). Bounded per owner, as ``Executions`` is:
one principal's many chats evict only their own entries. In memory: a server restart
forgets it (server/api.py says what is allowed then).
"""

from __future__ import annotations

from collections import OrderedDict

Key = tuple[str, str, str]  # (agent name, directory, session id)


class SessionOwners:
    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._owners: dict[Key, str] = {}
        self._by_owner: dict[str, OrderedDict[Key, None]] = {}

    def note(self, agent: str, cwd: str, session_id: str, owner: str) -> None:
        key = (agent, cwd, session_id)
        if key in self._owners:
            return
        self._owners[key] = owner
        keys = self._by_owner.setdefault(owner, OrderedDict())
        keys[key] = None
        if len(keys) > self.limit:
            del self._owners[keys.popitem(last=False)[0]]

    def owner(self, agent: str, cwd: str, session_id: str) -> str | None:
        """Whose the session is, if a chat here opened or loaded it."""
        return self._owners.get((agent, cwd, session_id))

    def refusal(self, agent: str, cwd: str, session_id: str, who: str | None) -> str | None:
        """Why ``who`` may not continue the session (None: they may): another owner
        noted here has it."""
        started_by = self.owner(agent, cwd, session_id)
        if who is None or started_by in (None, who):
            return None
        return f"session {session_id!r} was started by another user: only they can continue it"
