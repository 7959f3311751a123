"""What this client says about itself when it starts an agent, and what the agent inherits.

``session.py`` (a chat) and ``session_list.py`` (listing an agent's sessions) start agents
the same way: the same ``initialize`` and the same environment.
"""

from __future__ import annotations

import os
from typing import Any

from .catalogue import AgentSpec

VERSION = "0.1.0"


# Our ``initialize`` request as a listing of sessions sends it: ACP v1, form and URL
# elicitation (each mode is advertised by a non-null key: ``{}`` alone would advertise
# nothing), claude's live terminal output; a chat adds what it answers
# (``initialize_params``).
INITIALIZE_PARAMS: dict[str, Any] = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
        "elicitation": {"form": {}, "url": {}},
        # Claude's wrapper then streams a command's output on its tool call (fold.py).
        "_meta": {"terminal_output": True, "terminal_output_delta": True},
    },
    "clientInfo": {"name": "acp_notebook", "title": "Jupyter ACP", "version": VERSION},
}


def initialize_params(fs: bool) -> dict[str, Any]:
    """A chat's ``initialize`` request: it runs client terminals (agent/terminals.py) and
    terminal sign-ins; ``fs``: it answers ``fs/read_text_file`` and ``fs/write_text_file``."""
    capabilities = dict(INITIALIZE_PARAMS["clientCapabilities"])
    capabilities["fs"] = {"readTextFile": fs, "writeTextFile": fs}
    capabilities["terminal"] = True
    # Terminal sign-in methods: the chat runs them (bridge/sign_in.py).
    capabilities["auth"] = {"terminal": True}
    return {**INITIALIZE_PARAMS, "clientCapabilities": capabilities}


def inherited_env(drop: frozenset[str]) -> dict[str, str]:
    """This process's environment, less the extension's secret (an agent is not a
    kernel) and what the agent's spec drops."""
    return {
        k: v for k, v in os.environ.items() if not k.startswith("ACP_NOTEBOOK_") and k not in drop
    }


def agent_env(spec: AgentSpec) -> dict[str, str]:
    """The environment ``spec``'s agent runs with: ours, as ``inherited_env`` passes it on,
    and the spec's own."""
    return {**inherited_env(spec.drop), **spec.env}
