"""A minimal ACP agent for the question-latency and queue benchmarks (stdlib only).

``python latency_agent.py OUT``; a prompt ``ask N`` makes it ask N form questions in
one turn, one after the other. It times each one from writing ``elicitation/create``
to reading the answer (``time.perf_counter`` in this process: the whole loop, as the
agent sees it) and writes the round trips, in seconds, to OUT as a JSON list when the
turn ends. Synchronous on purpose: nothing of its own stands between two questions.

A prompt ``hold S N`` holds its turn S seconds (the client queues N prompts meanwhile);
the N prompts after it are answered at once, each timed from starting to write the
previous turn's answer to reading it; the gaps of every round so far go to OUT once a
round's N have come (queue_latency.py).
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

FORM = {
    "type": "object",
    "properties": {"answer": {"type": "string", "title": "Answer"}},
}

stdin = sys.stdin.buffer
stdout = sys.stdout.buffer


def send(message: dict[str, Any]) -> None:
    stdout.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    stdout.flush()


def reply(request_id: Any, result: Any) -> float:
    """Answers; returns when it started writing (taken after the write, the time could
    fall after a fast client's next prompt)."""
    started = time.perf_counter()
    send({"jsonrpc": "2.0", "id": request_id, "result": result})
    return started


def ask(session_id: str, count: int) -> list[float]:
    """Asks ``count`` questions; returns each round trip in seconds."""
    trips: list[float] = []
    for n in range(count):
        request_id = f"q{n}"
        params = {
            "sessionId": session_id,
            "mode": "form",
            "message": f"Question {n}",
            "requestedSchema": FORM,
        }
        start = time.perf_counter()
        send({"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": params})
        while True:
            line = stdin.readline()
            if not line:
                raise SystemExit("the client closed stdin")
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                break
        trips.append(time.perf_counter() - start)
        if message.get("result", {}).get("action") != "accept":
            raise SystemExit(f"question {n} was not accepted: {message}")
    return trips


def main() -> None:
    out = sys.argv[1]
    gaps: list[float] = []  # the queue's, in seconds
    expected = 0  # queued prompts still to come in this round
    answered = 0.0  # when the last turn's answer started to be written
    for line in stdin:
        arrived = time.perf_counter()
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            reply(request_id, {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})
        elif method == "session/new":
            reply(request_id, {"sessionId": "latency"})
        elif method == "session/prompt":
            text = " ".join(b.get("text", "") for b in params.get("prompt", []))
            hold = re.search(r"hold ([\d.]+) (\d+)", text)
            if hold:
                time.sleep(float(hold.group(1)))
                expected = int(hold.group(2))
            elif expected > 0:
                gaps.append(arrived - answered)
                expected -= 1
                if expected == 0:
                    with open(out, "w") as f:
                        json.dump(gaps, f)
            else:
                match = re.search(r"ask (\d+)", text)
                trips = ask(params["sessionId"], int(match.group(1)) if match else 1)
                with open(out, "w") as f:
                    json.dump(trips, f)
            answered = reply(request_id, {"stopReason": "end_turn"})
        elif request_id is not None and method is not None:
            error = {"code": -32601, "message": f"method not found: {method}"}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})


if __name__ == "__main__":
    main()
