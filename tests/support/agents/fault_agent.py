"""A fault-injecting ACP agent: a real subprocess, standard library only.

    python fault_agent.py FAULT POINT LOG

FAULT is what goes wrong and POINT when (``FAULTS`` and ``POINTS``). The fault fires
once, at POINT; an agent that survives it behaves normally afterwards. Every
message received, every request sent and every fault is appended to LOG as one
JSON object per line, so a test can count exactly what reached the agent (even
after it died).

A normal turn depends on the prompt: ``ask`` asks a question, ``permission`` asks a
permission, ``permissions N`` asks N at once, ``stop reason N`` ends the turn with a
reason N characters long, ``flood N`` streams N chunks, ``tools N`` asks a question then makes N tool calls, ``big N`` N characters in chunks of 64 K, ``hostile`` sends markup-laden
content, ``deaf N`` sends N requests with ids of a MiB and reads no more, ``raw LINES``
writes LINES as they are (JSON it gets wrong on purpose; PROMPT_ID in them is the
prompt's id, and then they end the turn), anything else is echoed. Env: ``FAULT_FLOOD``
(chunks in a flood, default 5000), ``FAULT_HUGE_MB`` (size of the huge line, and of the
endless one, default 100), ``FAULT_NEW`` (JSON: more fields of session/new's result),
``FAULT_OBJECTS_MB`` (size of the line of ``{},{},...``, default 50), ``FAULT_DEPTHS``
(nesting depths of the deep lines, default ``65,1000,100000``), ``FAULT_CAPS`` (JSON:
its agentCapabilities). It never answers ``session/close`` (a slow agent's close).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from typing import Any

FAULTS = (
    "none",
    "crash",
    "hang",
    "garbage",
    "huge",
    "flood",
    "close_stdout",
    "orphan",
    "deep",  # lines nested thousands deep
    "objects",  # one line of millions of {}
    "endless",  # a huge line that never ends, then silence
    "spawn",  # children in its group, in a session of their own, a daemon; ignores EOF, SIGTERM
    "long_id",  # answers session/new with a session id of a megabyte
)
# When the fault fires: on `initialize`, on `session/new`, in the first turn after
# its first chunk, or in the first turn while a question / a permission is pending.
POINTS = ("initialize", "session_new", "stream", "question", "permission")

SESSION_ID = "fault-session"


def chunk_line(text: str) -> str:
    """One agent_message_chunk notification as the agent writes it (no newline)."""
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": SESSION_ID, "update": update},
        }
    )


def permission(tool_call_id: str) -> dict[str, Any]:
    """The params of a permission request to write a file."""
    return {
        "sessionId": SESSION_ID,
        "toolCall": {"toolCallId": tool_call_id, "title": "Write notes.txt", "kind": "edit"},
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ],
    }


BATCH = 2000  # lines per write in a flood: the pipe, not Python, should be the limit

# Markup that must stay text wherever it is shown.
HOSTILE = (
    '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    '<a href="javascript:window.__pwned=3">click</a> <svg onload="window.__pwned=4"></svg>'
    ' [link](javascript:window.__pwned=5) ![pic](x" onerror="window.__pwned=6)'
    " `code` **bold** \u202eevil"  # the right-to-left override never ends
)
HUGE_TITLE = 10 * 1024 * 1024

GARBAGE = [
    b"not json at all",
    b"\xff\xfe\x00\x01 binary",
    b"[1, 2, 3]",
    b'"a string"',
    b"{}",
    b"{bad json",
    b'{"jsonrpc":"2.0","id":{"no":"objects"},"method":"session/update"}',
    b'{"jsonrpc":"2.0","id":987654,"result":{"stray":true}}',
    b'{"jsonrpc":"2.0","id":987655,"error":"not an object"}',
    b'{"jsonrpc":"2.0","method":"session/update","params":"nope"}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":42}}}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"update":'
    b'{"sessionUpdate":"agent_message_chunk","content":"not a block"}}}',
    b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"nobody"}}',
    b'{"jsonrpc":"2.0","method":"no/such/notification","params":{}}',
    b'{"jsonrpc":"2.0","id":"garbage-1","method":"no/such/method","params":{}}',
    b"   ",
]


class Agent:
    def __init__(self, fault: str, point: str, log_path: str) -> None:
        self.fault = fault
        self.point = point
        self.log_file = open(log_path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
        self.out = sys.stdout.buffer
        self.silent = False  # after a hang or a closed stdout nothing more is written
        self.next_id = 100
        self.turns = 0
        self.fired = False
        self.prompt_id: Any = None  # the session/prompt being served
        self.new_id: Any = None  # the session/new being answered
        self.asked: dict[Any, str] = {}  # our request id -> what it asked
        self.cancelled = False
        self.stubborn = False  # lives on after the end of its input

    # ------------------------------------------------------------ output

    def log(self, **entry: Any) -> None:
        self.log_file.write(json.dumps(entry) + "\n")

    def write(self, data: bytes) -> None:
        if self.silent:
            return
        try:
            self.out.write(data)
            self.out.flush()
        except BrokenPipeError:  # the client is gone; nothing left to say
            os._exit(0)

    def send(self, message: dict[str, Any]) -> None:
        self.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    def update(self, update: dict[str, Any]) -> None:
        self.send(
            {"method": "session/update", "params": {"sessionId": SESSION_ID, "update": update}}
        )

    def say(self, text: str, message_id: str = "m", kind: str = "agent_message_chunk") -> None:
        self.update(
            {
                "sessionUpdate": kind,
                "content": {"type": "text", "text": text},
                "messageId": message_id,
            }
        )

    def request(self, method: str, params: dict[str, Any], what: str) -> None:
        self.next_id += 1
        self.asked[self.next_id] = what
        self.log(asked=method, id=self.next_id)
        self.send({"id": self.next_id, "method": method, "params": params})

    # ------------------------------------------------------------ faults

    def maybe_fault(self, point: str) -> None:
        if point != self.point or self.fault == "none" or self.fired:
            return
        self.fired = True
        self.log(fault=self.fault, point=point)
        getattr(self, f"fault_{self.fault}")()

    def fault_crash(self) -> None:
        sys.stderr.write(f"fault agent: crashing at {self.point}\n")
        sys.stderr.flush()
        os._exit(3)

    def fault_hang(self) -> None:
        self.silent = True  # keeps reading (and logging) stdin, never answers again

    def fault_close_stdout(self) -> None:
        self.silent = True
        os.close(1)

    def fault_orphan(self) -> None:
        # Same process group (the default): the agent exits, its child lives on.
        child = subprocess.Popen(["sleep", "300"])
        self.log(child=child.pid)
        sys.stderr.write("fault agent: exiting with a child left behind\n")
        sys.stderr.flush()
        os._exit(0)

    def fault_spawn(self) -> None:
        # Inherited by the children: only SIGKILL ends any of them.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        self.stubborn = True
        sleep = ["sleep", "300"]
        in_group = subprocess.Popen(sleep)
        own_session = subprocess.Popen(sleep, start_new_session=True)
        # A daemon: its parent exits at once, so it is nobody's child.
        daemon = subprocess.run(
            [
                sys.executable,
                "-c",
                "import subprocess; print(subprocess.Popen("
                f"{sleep!r}, start_new_session=True, stdout=subprocess.DEVNULL).pid)",
            ],
            stdout=subprocess.PIPE,
            check=True,
        )
        for pid in (in_group.pid, own_session.pid, int(daemon.stdout)):
            self.log(child=pid)

    def fault_garbage(self) -> None:
        self.write(b"\n".join(GARBAGE) + b"\n")

    def fault_huge(self) -> None:
        size = int(float(os.environ.get("FAULT_HUGE_MB", "100")) * 1024 * 1024)
        before, after = chunk_line("@").encode().split(b"@")
        piece = b"H" * (1 << 20)
        self.write(before)
        for _ in range(size // len(piece)):
            self.write(piece)
        self.write(after + b"\n")

    def fault_deep(self) -> None:
        depths = os.environ.get("FAULT_DEPTHS", "65,1000,100000")
        for depth in map(int, depths.split(",")):
            nested = b"[" * depth + b"]" * depth
            self.write(
                b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"'
                + SESSION_ID.encode()
                + b'","update":{"sessionUpdate":"agent_message_chunk","content":'
                + nested
                + b"}}}\n"
            )

    def fault_objects(self) -> None:
        size = int(float(os.environ.get("FAULT_OBJECTS_MB", "50")) * 1024 * 1024)
        piece = b"{}," * (1 << 18)
        self.write(b'{"jsonrpc":"2.0","method":"session/update","params":[')
        for _ in range(size // len(piece)):
            self.write(piece)
        self.write(b"{}]}\n")

    def fault_endless(self) -> None:
        size = int(float(os.environ.get("FAULT_HUGE_MB", "100")) * 1024 * 1024)
        head = b'{"jsonrpc":"2.0","method":"session/update","params":"'
        self.write(head)
        left = size - len(head)
        while left > 0:
            self.write(b"E" * min(left, 1 << 20))
            left -= 1 << 20
        self.log(wrote=size)
        self.silent = True  # never ends the line, never answers again

    def fault_long_id(self) -> None:
        self.send({"id": self.new_id, "result": {"sessionId": "s" * (1 << 20)}})

    def fault_flood(self) -> None:
        self.flood(int(os.environ.get("FAULT_FLOOD", "5000")), "flood")

    def flood(self, count: int, message_id: str) -> None:
        self.chunks((f"{i} " for i in range(count)), message_id)

    def chunks(self, texts: Iterable[str], message_id: str) -> None:
        """One agent_message_chunk per text, written BATCH lines at a time."""
        lines: list[bytes] = []
        for text in texts:
            update = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": text},
                "messageId": message_id,
            }
            params = {"sessionId": SESSION_ID, "update": update}
            lines.append(
                json.dumps(
                    {"jsonrpc": "2.0", "method": "session/update", "params": params}
                ).encode()
            )
            if len(lines) == BATCH:
                self.write(b"\n".join(lines) + b"\n")
                lines = []
        if lines:
            self.write(b"\n".join(lines) + b"\n")

    def tools(self, count: int, completed: bool = True) -> None:
        """``count`` tool calls, each started (then completed), BATCH lines at a time."""
        lines: list[bytes] = []
        for i in range(count):
            started = {
                "sessionUpdate": "tool_call",
                "toolCallId": f"tool-{i}",
                "title": f"Read {i}",
            }
            done = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": f"tool-{i}",
                "status": "completed",
            }
            for update in (started, done) if completed else (started,):
                params = {"sessionId": SESSION_ID, "update": update}
                message = {"jsonrpc": "2.0", "method": "session/update", "params": params}
                lines.append(json.dumps(message).encode())
            if len(lines) >= BATCH:
                self.write(b"\n".join(lines) + b"\n")
                lines = []
        if lines:
            self.write(b"\n".join(lines) + b"\n")

    # ------------------------------------------------------------ serving

    def serve(self) -> None:
        for line in sys.stdin.buffer:
            try:
                message = json.loads(line)
            except ValueError:
                self.log(bad=line[:200].decode(errors="replace"))
                continue
            self.log(recv=message)
            self.dispatch(message)
        self.log(eof=True)
        while self.silent or self.stubborn:  # a hung agent ignores the end of its input too
            time.sleep(1)

    def dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            self.answered(message)
        elif method == "initialize":
            self.maybe_fault("initialize")
            self.send(
                {
                    "id": message["id"],
                    "result": {
                        "protocolVersion": 1,
                        "agentCapabilities": json.loads(os.environ.get("FAULT_CAPS", "{}")),
                        "agentInfo": {"name": "fault-agent", "version": "1"},
                    },
                }
            )
        elif method == "session/new":
            self.new_id = message["id"]
            self.maybe_fault("session_new")
            more = json.loads(os.environ.get("FAULT_NEW", "{}"))
            self.send({"id": message["id"], "result": {"sessionId": SESSION_ID, **more}})
        elif method == "session/set_mode":
            self.send({"id": message["id"], "result": {}})
        elif method == "session/prompt":
            self.prompt(message)
        elif method == "session/cancel":
            self.cancelled = True
        elif method == "session/close":
            pass
        elif "id" in message:
            self.send({"id": message["id"], "error": {"code": -32601, "message": f"no {method}"}})

    def prompt(self, message: dict[str, Any]) -> None:
        self.turns += 1
        self.prompt_id = message["id"]
        self.cancelled = False
        blocks = message.get("params", {}).get("prompt", [])
        text = " ".join(b.get("text", "") for b in blocks if isinstance(b, dict))
        first = self.turns == 1 and self.fault != "none"
        if first and self.point == "stream":
            self.say("before the fault ")
            self.maybe_fault("stream")
            self.say("after the fault")
            self.end_turn()
        elif (first and self.point == "question") or text == "ask":
            self.ask()
            self.maybe_fault("question")
        elif (first and self.point == "permission") or text == "permission":
            self.request("session/request_permission", permission("t1"), "permission")
            self.maybe_fault("permission")
        elif text.startswith("permissions "):  # N permission requests at once
            for i in range(int(text.split()[1])):
                self.request("session/request_permission", permission(f"t{i}"), "one of many")
        elif text.startswith("stop reason "):  # ends the turn with a reason N long
            self.send({"id": self.prompt_id, "result": {"stopReason": "x" * int(text.split()[2])}})
        elif text.startswith("deaf "):  # N requests with 1 MiB ids, then never reads again
            for i in range(int(text.split()[1])):
                self.send({"id": f"{i}:" + "I" * (1 << 20), "method": "fs/read_text_file"})
            self.log(wrote=True)
            while True:
                time.sleep(1)
        elif text.startswith("big "):  # N characters, in chunks of 64 K
            self.chunks(["B" * 65536] * (int(text.split()[1]) >> 16), f"turn-{self.turns}")
            self.end_turn()
        elif text.startswith("flood "):
            self.flood(int(text.split()[1]), f"turn-{self.turns}")
            self.end_turn()
        elif text.startswith("tools "):  # a question, then N tool calls; ends when answered
            self.ask()  # "tools N running": the calls are never completed
            self.tools(int(text.split()[1]), completed=not text.endswith(" running"))
        elif text == "hostile":
            self.hostile()
        elif text.startswith("raw "):  # writes the rest as lines of its own, as they are
            lines = text[4:].replace("PROMPT_ID", json.dumps(self.prompt_id))
            self.write(lines.encode("utf-8", "surrogatepass") + b"\n")
            if "PROMPT_ID" not in text:
                self.end_turn()
        else:
            self.say(f"echo: {text}")
            self.end_turn()

    def ask(self) -> None:
        self.request(
            "elicitation/create",
            {
                "sessionId": SESSION_ID,
                "mode": "form",
                "message": "Pick one",
                "requestedSchema": {
                    "type": "object",
                    "required": ["color"],
                    "properties": {
                        "color": {"type": "string", "enum": ["red", "green"]},
                        "note": {"type": "string", "title": "Note"},
                        "count": {"type": "integer"},
                        "sure": {"type": "boolean"},
                        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}},
                    },
                },
            },
            "question",
        )

    def answered(self, message: dict[str, Any]) -> None:
        """A response to one of our requests: report it and end the turn."""
        what = self.asked.pop(message.get("id"), None)
        if what is None:
            return
        if what == "one of many":  # the turn ends with the last answer
            if "one of many" not in self.asked.values():
                self.end_turn()
            return
        self.say(f"{what} answered: {json.dumps(message.get('result', message.get('error')))}")
        if what == "hostile permission":
            self.hostile_question()
        else:
            self.end_turn()

    def end_turn(self) -> None:
        reason = "cancelled" if self.cancelled else "end_turn"
        self.send({"id": self.prompt_id, "result": {"stopReason": reason}})

    # ------------------------------------------------------------ hostile content

    def hostile(self) -> None:
        self.say(HOSTILE, "hostile")
        self.update(
            {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": HOSTILE}}
        )
        self.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "evil",
                "title": HOSTILE + "T" * HUGE_TITLE,
                "kind": "edit",
                "status": "in_progress",
                "locations": [{"path": "javascript:alert(1)"}],
                "content": [
                    {"type": "diff", "path": HOSTILE, "oldText": HOSTILE, "newText": HOSTILE},
                    {"type": "content", "content": {"type": "text", "text": HOSTILE}},
                ],
            }
        )
        self.update(
            {
                "sessionUpdate": "plan",
                "entries": [{"content": HOSTILE, "priority": "high", "status": "pending"}],
            }
        )
        self.update({"sessionUpdate": "session_info_update", "title": HOSTILE + "S" * HUGE_TITLE})
        self.request(
            "session/request_permission",
            {
                "sessionId": SESSION_ID,
                "toolCall": {"toolCallId": "evil", "title": HOSTILE, "kind": "edit"},
                "options": [
                    {"optionId": "allow", "name": HOSTILE + "N" * 4096, "kind": "allow_once"},
                    {"optionId": "reject", "name": HOSTILE, "kind": "reject_once"},
                ]
                + [
                    {"optionId": f"o{i}", "name": HOSTILE, "kind": "reject_once"}
                    for i in range(100)
                ],
            },
            "hostile permission",
        )

    def hostile_question(self) -> None:
        properties = {
            f"f{i}": {
                "type": "string",
                "title": HOSTILE + "L" * 4096,
                "description": HOSTILE + "D" * 4096,
                "enum": [f"v{j}" for j in range(100)],
                "enumNames": [HOSTILE] * 100,
            }
            for i in range(40)
        }
        self.request(
            "elicitation/create",
            {
                "sessionId": SESSION_ID,
                "mode": "form",
                "message": HOSTILE + "M" * HUGE_TITLE,
                "requestedSchema": {
                    "type": "object",
                    "title": HOSTILE + "X" * 4096,
                    "properties": properties,
                },
            },
            "hostile question",
        )


def main() -> None:
    fault, point, log_path = sys.argv[1:4]
    if fault not in FAULTS or point not in POINTS:
        sys.exit(f"usage: fault_agent.py {{{'|'.join(FAULTS)}}} {{{'|'.join(POINTS)}}} LOG")
    Agent(fault, point, log_path).serve()


if __name__ == "__main__":
    main()
