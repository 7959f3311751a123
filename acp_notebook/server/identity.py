"""Who a Jupyter login is to the owner gate: a principal (an id, and a name to show).

jupyter_server's own identity providers (the default ``IdentityProvider``, and
``PasswordIdentityProvider``) know no people: every token login without their cookie is
a new random "Anonymous ..." user, so the same person in a second browser, on another
device or after a restart is a stranger. There every holder of the token (or password)
is one principal. Real identities (JupyterHub, a configured identity provider, such as
named users of a collaboration server) stay one principal per user.
``AcpNotebookApp.principals`` overrides the automatic choice. A principal's name is
always the login's own: a page says "by <its display name>" whatever the gate compares.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from jupyter_server.auth.identity import IdentityProvider, PasswordIdentityProvider, User

from ..wire.contracts import MAX_NAME

# The id of every login where they all are one principal.
TOKEN_HOLDERS = "token-holders"
# The logins whose names are kept unique (a login a page, a cookie cleared a new one).
MAX_LOGINS = 10_000


@dataclass(frozen=True)
class Principal:
    id: str
    name: str


def anonymous_logins(provider: object) -> bool:
    """Whether ``provider`` makes up a user per login: jupyter_server's own (these exact
    types, a subclass may know people), and no JupyterHub behind the server."""
    if os.environ.get("JUPYTERHUB_API_TOKEN") or os.environ.get("JUPYTERHUB_USER"):
        return False
    return type(provider) in (IdentityProvider, PasswordIdentityProvider)


class Principals:
    """Maps the server's logins to principals, by ``setting`` (``AcpNotebookApp.principals``:
    "auto", "shared" or "per-user") and the server's identity provider."""

    def __init__(self, provider: object, setting: str = "auto") -> None:
        self.shared = setting == "shared" or (setting == "auto" and anonymous_logins(provider))
        # Where all are one principal, each login's name, unique among them (see of).
        self._names: dict[str, str] = {}

    def of(self, user: User) -> Principal:
        name = (user.display_name or user.username)[:MAX_NAME]
        if not self.shared:
            return Principal(user.username, name)
        return Principal(TOKEN_HOLDERS, self._unique(user.username, name))

    def _unique(self, login: str, name: str) -> str:
        """``name``, or "name 2", "name 3"... when another login has it: jupyter_server
        draws an anonymous login's name from 57 moons, and a page calls an answer given
        under its own name "you"."""
        known = self._names.get(login)
        if known is not None:
            return known
        taken = set(self._names.values())
        unique, n = name, 2
        while unique in taken:
            unique, n = f"{name[: MAX_NAME - 8]} {n}", n + 1
        if len(self._names) >= MAX_LOGINS:  # the oldest login's name is free again
            del self._names[next(iter(self._names))]
        self._names[login] = unique
        return unique

    def holds_account(self, principal: Principal) -> bool:
        """Whether ``principal`` is the person whose account the server runs as, and so
        whose the agents' stored sessions are: every token holder where they are one
        principal, the JupyterHub user whose single-user server this is."""
        return self.shared or principal.id == os.environ.get("JUPYTERHUB_USER")
