"""A stdio MCP server whose one tool asks the user through MCP elicitation.

Mounted by the tests through ``Chat(..., mcp_servers=[...])`` as server ``picker``, so
Claude Code names the tool ``mcp__picker__pick_color``. The tool reports what the user
answered in its result text (which the mocked model receives) and, when
``PICKER_LOG`` names a file, appends it there as one JSON line per call.

The question goes through the SDK's resolver (``Resolve`` + ``Elicit``): under the
CLI's MCP protocol (2026-07-28) a tool cannot send a request mid-call (``ctx.elicit``
raises ``NoBackChannelError``), so the SDK returns an input-required result and the
CLI calls the tool again with the answer (reference/acp-protocol.md §12).
"""

from __future__ import annotations

import json
import os
from typing import Annotated, Literal

from mcp.server.mcpserver import (
    AcceptedElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from pydantic import BaseModel, Field

MESSAGE = "Pick a color for the picker tool."


class ColorChoice(BaseModel):
    color: Literal["Red", "Blue"] = Field(title="Color", description="Which color?")
    confirm: bool = Field(title="Confirm", description="Confirm the choice")


server = MCPServer("picker")


def ask_color() -> Elicit[ColorChoice]:
    return Elicit(MESSAGE, ColorChoice)


@server.tool()
def pick_color(
    choice: Annotated[ElicitationResult[ColorChoice], Resolve(ask_color)],
) -> str:
    """Ask the user for a color."""
    if isinstance(choice, AcceptedElicitation):
        record = {"action": "accept", "content": choice.data.model_dump()}
    elif isinstance(choice, DeclinedElicitation):
        record = {"action": "decline"}
    else:
        record = {"action": "cancel"}
    log = os.environ.get("PICKER_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
    return "picker received " + json.dumps(record, sort_keys=True)


if __name__ == "__main__":
    server.run("stdio")
