"""An ACP agent that refuses with JSON-RPC error data, as claude's wrapper does with
its validation report: ``session/new`` when ``REFUSE_NEW`` is set, else every
``session/set_mode``. Standard library only."""

from __future__ import annotations

import json
import os
import sys

REPORT = {"issues": [{"path": ["cwd"], "message": "must be a directory you own"}]}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        method, reply = message["method"], {"jsonrpc": "2.0", "id": message["id"]}
        refused = method == "session/set_mode" or (
            method == "session/new" and os.environ.get("REFUSE_NEW")
        )
        if refused:
            reply["error"] = {"code": -32602, "message": "Invalid params", "data": REPORT}
        elif method == "initialize":
            reply["result"] = {"protocolVersion": 1, "agentCapabilities": {}}
        elif method == "session/new":
            reply["result"] = {"sessionId": "refusing"}
        else:
            reply["error"] = {"code": -32601, "message": f"no {method}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
