"""What this client says about itself when it starts an agent, and what the agent inherits.

``session.py`` (a chat) and ``session_list.py`` (listing an agent's sessions) start agents
the same way: the same ``initialize`` and the same environment.
"""

from __future__ import annotations

import os

from .catalogue import AgentSpec

VERSION = "0.1.0"


# Our ``initialize`` request: ACP v1, form elicitation, client terminals, claude's live
# terminal output.
INITIALIZE_PARAMS = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": True,  # client terminals: agent/terminals.py
        "elicitation": {"form": {}},
        # Claude's wrapper then streams a command's output on its tool call (fold.py).
        "_meta": {"terminal_output": True, "terminal_output_delta": True},
    },
    "clientInfo": {"name": "acp_notebook", "title": "Jupyter ACP", "version": VERSION},
}


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
