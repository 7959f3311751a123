"""The demo agent plus behaviours that only tests use: ``crash`` (exits with code 3 mid
turn), ``garbage`` (writes lines that are not JSON-RPC), ``error`` (the turn fails) and
``longline N`` (one unbroken line, for the layout tests and benchmarks) and ``probe
PATH`` (writes the chat's ``notebook`` MCP server, as session/new gave it, to PATH, so a
benchmark can call the chat's notebook tools as the agent would)."""

from __future__ import annotations

import json
import os
import re

from acp_notebook.agent.jsonrpc import RpcError
from acp_notebook.demo import agent as demo_agent
from acp_notebook.demo.agent import COUNT, Turn, behaviour, notebook_server


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


@behaviour(rf"longline{COUNT}")
async def longline(turn: Turn, match: re.Match[str]) -> None:
    count = int(match.group(1) or 1000)
    # One unbroken line (no space, no newline): the worst case for wrapping and layout.
    await turn.chunks(f"{i % 10}abcdefgh" for i in range(count))


@behaviour(r"probe (\S+)")
async def probe(turn: Turn, match: re.Match[str]) -> None:
    path = match.group(1)
    with open(path + ".part", "w") as out:
        json.dump(notebook_server(turn), out)
    os.replace(path + ".part", path)  # the reader never sees half a file
    await turn.say("probed")


if __name__ == "__main__":
    demo_agent.main()
