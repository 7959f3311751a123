"""An ACP agent that hands its ``notebook`` MCP server to the test or benchmark that
started it: ``session/new``'s ``mcpServers`` are written to the file ``ACP_PROBE_FILE``
names, so the caller can call the chat's notebook tools as the agent would. Prompts end
at once. Standard library only."""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        method, reply = message["method"], {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            # HTTP MCP: the entry names the URL and the secret header, not the stdio proxy.
            caps = {"mcpCapabilities": {"http": True}}
            reply["result"] = {"protocolVersion": 1, "agentCapabilities": caps}
        elif method == "session/new":
            servers = message.get("params", {}).get("mcpServers", [])
            path = os.environ["ACP_PROBE_FILE"]
            with open(path + ".part", "w") as out:
                json.dump(servers, out)
            os.replace(path + ".part", path)  # the reader never sees half a file
            reply["result"] = {"sessionId": "probe"}
        elif method == "session/prompt":
            reply["result"] = {"stopReason": "end_turn"}
        else:
            reply["error"] = {"code": -32601, "message": f"no {method}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
