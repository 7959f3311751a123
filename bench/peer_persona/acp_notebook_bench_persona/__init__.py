"""jupyter-ai-acp-client's persona for acp_notebook's demo agent, for the side-by-side
benchmark. The agent's command comes from the server's environment (the benchmark sets it),
so the same agent runs under both clients."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jupyter_ai_acp_client
from jupyter_ai_acp_client.base_acp_persona import BaseAcpPersona
from jupyter_ai_persona_manager import PersonaDefaults

# A JSON list: the argv of the agent (bench/peers.py sets it).
AGENT_ENV = "ACP_BENCH_AGENT"


class DemoAcpPersona(BaseAcpPersona):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, executable=json.loads(os.environ[AGENT_ENV]), **kwargs)

    @property
    def defaults(self) -> PersonaDefaults:
        avatar = Path(jupyter_ai_acp_client.__file__).parent / "static" / "claude.svg"
        return PersonaDefaults(
            name="Demo",
            description="acp_notebook's demo agent",
            avatar_path=str(avatar),
            system_prompt="unused",
        )

    async def is_authed(self) -> bool:
        return True
