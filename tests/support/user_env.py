"""The environment a notebook user would have, for tests that start Jupyter or nbval."""

from __future__ import annotations

import os

# Settings of this machine or of an enclosing test run that would change what the code
# under test does: a real key or Claude settings, a Jupyter server's address for kernels
# (the chat would try server mode), pytest options, and the container's sandbox marker
# (Claude Code then refuses to start as root).
LEAKY_PREFIXES = ("ACP_NOTEBOOK_", "ANTHROPIC_", "CLAUDE_", "PYTEST_")
LEAKY_NAMES = frozenset({"IS_SANDBOX"})


def user_env(*also_drop: str) -> dict[str, str]:
    """``os.environ`` without the leaky settings, nor variables starting with ``also_drop``."""
    prefixes = LEAKY_PREFIXES + also_drop
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(prefixes) and name not in LEAKY_NAMES
    }
