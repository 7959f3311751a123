"""The demo agent plus behaviours that only tests use: ``crash`` (exits with code 3 mid
turn), ``garbage`` (writes lines that are not JSON-RPC) and ``error`` (the turn fails)."""

from __future__ import annotations

import os
import re

from acp_notebook.agent.jsonrpc import RpcError
from acp_notebook.demo import agent as demo_agent
from acp_notebook.demo.agent import Turn, behaviour


@behaviour()
async def crash(turn: Turn, _match: re.Match[str]) -> None:
    await turn.chunks(["Crashing ", "now…"])
    demo_agent.log("crashing on purpose")
    os._exit(3)


@behaviour()
async def garbage(turn: Turn, _match: re.Match[str]) -> None:
    turn.agent.write(b"this is not json\n{broken\n[1,2\n")
    await turn.say("garbage sent")


@behaviour()
async def error(turn: Turn, _match: re.Match[str]) -> None:
    message = "API Error: 400 demo failure"
    await turn.chunks([message])
    raise RpcError(-32603, message)


if __name__ == "__main__":
    demo_agent.main()
