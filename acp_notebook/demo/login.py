"""The demo agent's login mode: an agent that will not work until the user signs in.

``ACP_DEMO_LOGIN=<file>`` switches it on: the agent then advertises three ``authMethods``
and ``auth.logout``, and answers ``session/new``, ``session/load``, ``session/resume``
and ``session/prompt`` with ACP's ``auth_required`` (-32000) until one of them worked:
- ``demo-agent``: the agent's own (``authenticate``) signs in at once;
- ``demo-terminal``: the agent's own command with ``--login`` (``main`` below) asks for
  the password on stdin (``ACP_DEMO_PASSWORD``, default ``open sesame``), and signs in
  when it is right (exit 0), or exits 1;
- ``demo-key``: ``ACP_DEMO_API_KEY`` set where the agent starts signs it in.
Signed in means ``<file>`` exists (the login command is another process); ``logout``
removes it (and ignores the key from then on).
"""

from __future__ import annotations

import os
import sys
from typing import Any

LOGIN_FILE = os.environ.get("ACP_DEMO_LOGIN") or None
KEY_VARIABLE = "ACP_DEMO_API_KEY"
DEFAULT_PASSWORD = "open sesame"
LOGIN_FLAG = "--login"
AUTH_REQUIRED = -32000

AUTH_METHODS: list[dict[str, Any]] = [
    {
        "id": "demo-agent",
        "name": "Demo sign-in",
        "description": "The demo agent signs you in by itself.",
    },
    {
        "id": "demo-terminal",
        "name": "Demo login in a terminal",
        "description": "Runs the demo agent's login, which asks for a password.",
        "type": "terminal",
        "args": [LOGIN_FLAG],
        "env": {"ACP_DEMO_LOGIN_BY": "terminal"},
    },
    {
        "id": "demo-key",
        "name": "Demo API key",
        "type": "env_var",
        "vars": [{"name": KEY_VARIABLE, "label": "Demo API key"}],
        "link": "https://example.com/demo-keys",
    },
]


class Login:
    """The agent process's view of the sign-in (the file is shared with the login command)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.key_ignored = False  # after a logout, the key no longer signs in

    @property
    def signed_in(self) -> bool:
        with_key = bool(os.environ.get(KEY_VARIABLE)) and not self.key_ignored
        return with_key or os.path.exists(self.path)

    def sign_in(self, by: str) -> None:
        _write(self.path, by)

    def sign_out(self) -> None:
        self.key_ignored = True
        if os.path.exists(self.path):
            os.remove(self.path)


def _write(path: str, by: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"signed in by {by}\n")


def main() -> int:
    """The ``demo-terminal`` method's command: reads the password as one line of stdin
    (never echoed: a pipe has no echo, and it is not printed)."""
    path = os.environ.get("ACP_DEMO_LOGIN")
    if not path:
        print("ACP_DEMO_LOGIN is not set: nothing to sign in to.", flush=True)
        return 2
    print("Demo login for acp_notebook.", flush=True)
    print("Password: ", end="", flush=True)
    line = sys.stdin.readline()
    if line.rstrip("\r\n") != os.environ.get("ACP_DEMO_PASSWORD", DEFAULT_PASSWORD):
        print("\nWrong password.", flush=True)
        return 1
    _write(path, os.environ.get("ACP_DEMO_LOGIN_BY", "login"))
    print("\nSigned in.", flush=True)
    return 0
