"""A minimal ACP agent for the queue-to-send benchmark (stdlib only).

``python queue_agent.py OUT``. A prompt ``hold S N`` holds its turn S seconds (the
client queues N prompts meanwhile); each prompt after it is answered at once. The agent
times, for each of those N, the gap from starting to write the previous turn's answer to reading
the next ``session/prompt`` (``time.perf_counter`` here: the whole client loop as the
agent sees it), and writes the gaps of every round so far, in seconds, to OUT as a
JSON list once a round's N have come.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

stdin = sys.stdin.buffer
stdout = sys.stdout.buffer


def reply(request_id: Any, result: Any) -> float:
    """Answers; returns when it started writing (taken after the write, the time could
    fall after a fast client's next prompt)."""
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n"
    started = time.perf_counter()
    stdout.write(line)
    stdout.flush()
    return started


def main() -> None:
    out = sys.argv[1]
    gaps: list[float] = []
    expected = 0  # prompts still to come in this round
    answered = 0.0  # when the last turn's answer was written
    for line in stdin:
        arrived = time.perf_counter()
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            reply(request_id, {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})
        elif method == "session/new":
            reply(request_id, {"sessionId": "queue"})
        elif method == "session/prompt":
            text = " ".join(b.get("text", "") for b in params.get("prompt", []))
            hold = re.search(r"hold ([\d.]+) (\d+)", text)
            if hold:
                time.sleep(float(hold.group(1)))
                expected = int(hold.group(2))
            else:
                gaps.append(arrived - answered)
                expected -= 1
                if expected == 0:
                    with open(out, "w") as f:
                        json.dump(gaps, f)
            answered = reply(request_id, {"stopReason": "end_turn"})
        elif request_id is not None and method is not None:
            error = {"code": -32601, "message": f"method not found: {method}"}
            stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode())
            stdout.write(b"\n")
            stdout.flush()


if __name__ == "__main__":
    main()
