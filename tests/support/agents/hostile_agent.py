"""An ACP agent whose every string tries to run script or load something, for the browser tests.

Each prompt gets: a Markdown message with raw HTML, a ``javascript:`` link and a remote image;
a tool call whose title is HTML; a permission whose option names are HTML; and a question
whose message, field title, description and option labels are HTML. Anything that runs sets
``window.__acpPwned`` or fetches ``/pwned-*``; the test checks that neither happens.
Standard library only: newline-delimited JSON-RPC on stdin/stdout.
"""

from __future__ import annotations

import json
import sys
from typing import Any

Json = dict[str, Any]


def evil(n: int) -> str:
    return f'<img src="/pwned-{n}.png" onerror="window.__acpPwned={n}">'


MESSAGE = (
    f"Hostile text {evil(1)} <script>window.__acpPwned=2</script>\n\n"
    "[click me](javascript:window.__acpPwned=3) and ![tracker](/pwned-4.png)\n\n"
    '<iframe src="/pwned-5.html"></iframe>'
)
TOOL_TITLE = f"{evil(6)}Run the tool"
OPTION_NAME = f"{evil(7)}Allow it"
QUESTION = f"<script>window.__acpPwned=8</script>Pick one {evil(9)}"
FIELD_TITLE = f"{evil(10)}Colour"
FIELD_DESCRIPTION = '<b onmouseover="window.__acpPwned=11">hover me</b>'
OPTION_LABEL = f"{evil(12)}Red"


class Agent:
    def __init__(self) -> None:
        self.next_id = 0

    def send(self, message: Json) -> None:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()

    def update(self, session_id: str, update: Json) -> None:
        self.send(
            {"method": "session/update", "params": {"sessionId": session_id, "update": update}}
        )

    def call(self, method: str, params: Json) -> Any:
        """Ask the client and wait for its answer (requests don't overlap in this agent)."""
        request_id = f"hostile-{self.next_id}"
        self.next_id += 1
        self.send({"id": request_id, "method": method, "params": params})
        for line in sys.stdin:
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message.get("result")
        raise SystemExit(0)

    def turn(self, session_id: str) -> str:
        say = {"type": "text", "text": MESSAGE}
        self.update(session_id, {"sessionUpdate": "agent_message_chunk", "content": say})
        tool = {"toolCallId": "tool-1", "title": TOOL_TITLE, "kind": "execute"}
        self.update(session_id, {"sessionUpdate": "tool_call", "status": "pending", **tool})
        options = [
            {"optionId": "allow", "name": OPTION_NAME, "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]
        permission = self.call(
            "session/request_permission",
            {"sessionId": session_id, "toolCall": tool, "options": options},
        )
        schema = {
            "type": "object",
            "required": ["colour"],
            "properties": {
                "colour": {
                    "type": "string",
                    "title": FIELD_TITLE,
                    "description": FIELD_DESCRIPTION,
                    "oneOf": [{"const": "red", "title": OPTION_LABEL}],
                }
            },
        }
        answer = self.call(
            "elicitation/create",
            {
                "sessionId": session_id,
                "mode": "form",
                "message": QUESTION,
                "requestedSchema": schema,
            },
        )
        chosen = permission.get("outcome", {}).get("optionId")
        return f"hostile agent done: permission {chosen}, question {answer.get('action')}"

    def serve(self) -> None:
        for line in sys.stdin:
            message = json.loads(line)
            method, request_id = message.get("method"), message.get("id")
            if request_id is None:
                continue  # notifications: nothing to do
            if method == "initialize":
                result: Json = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
            elif method == "session/new":
                result = {"sessionId": "hostile-session"}
            elif method == "session/prompt":
                session_id = message["params"]["sessionId"]
                done = self.turn(session_id)
                say = {"type": "text", "text": done}
                self.update(session_id, {"sessionUpdate": "agent_message_chunk", "content": say})
                result = {"stopReason": "end_turn"}
            else:
                self.send(
                    {"id": request_id, "error": {"code": -32601, "message": "no such method"}}
                )
                continue
            self.send({"id": request_id, "result": result})


if __name__ == "__main__":
    Agent().serve()
