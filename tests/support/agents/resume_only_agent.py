"""The demo agent, advertising ``sessionCapabilities.resume`` but not ``loadSession``:
the agent a chat must continue with ``session/resume`` (nothing is replayed)."""

from __future__ import annotations

from typing import Any

from acp_notebook.demo import agent as demo_agent


class ResumeOnly(demo_agent.DemoAgent):
    async def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        result = await super()._initialize(params)
        result["agentCapabilities"]["loadSession"] = False
        return result


if __name__ == "__main__":
    demo_agent.DemoAgent = ResumeOnly  # type: ignore[misc]
    demo_agent.main()
