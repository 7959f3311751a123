"""The demo agent as a real subprocess, driven over raw JSON lines."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.demo.agent import (
    BEHAVIOURS,
    EDIT_NEW,
    EDIT_OLD,
    EDIT_SOURCE,
    GREETING,
    NO_NOTEBOOK_TOOLS,
)
from acp_notebook.demo.notebook_client import cell_of
from tests.support.agents import DEMO_FAULTS

ROOT = Path(__file__).resolve().parents[1]
DEMO_AGENT = [sys.executable, "-m", "acp_notebook.demo.agent"]
Json = dict[str, Any]
Answer = Callable[[Json], "Json | None"]


class AgentProcess:
    """A tiny line-level client: enough to script conversations in tests."""

    def __init__(self, sessions: Path | None = None, command: list[str] = DEMO_AGENT) -> None:
        env = {**os.environ, "ACP_DEMO_DELAY": "0", "PYTHONPATH": str(ROOT)}
        if sessions is not None:
            env["ACP_DEMO_SESSIONS"] = str(sessions)
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=ROOT,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        # Seconds to wait for the agent's next line.
        self.line_timeout = 5.0
        self._next_id = 100
        self.reader = threading.Thread(target=self._pump, daemon=True)
        self.reader.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.decode())
        self.lines.put(None)

    def send(self, message: Json) -> None:
        self.send_raw(json.dumps(message))

    def send_raw(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def line(self) -> str:
        line = self.lines.get(timeout=self.line_timeout)
        assert line is not None, "the agent closed stdout"
        return line

    def message(self) -> Json:
        message: Json = json.loads(self.line())
        return message

    def start_request(self, method: str, params: Json) -> int:
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def wait_response(
        self, request_id: int, answer: Answer | None = None
    ) -> tuple[Json, list[Json]]:
        """Read until the response to ``request_id``; answer agent requests with ``answer``."""
        seen: list[Json] = []
        while True:
            message = self.message()
            if message.get("id") == request_id and "method" not in message:
                return message, seen
            seen.append(message)
            if "id" in message and "method" in message and answer is not None:
                result = answer(message)
                if result is not None:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def call(
        self, method: str, params: Json, answer: Answer | None = None
    ) -> tuple[Json, list[Json]]:
        return self.wait_response(self.start_request(method, params), answer)

    def until(self, predicate: Callable[[Json], bool]) -> Json:
        while True:
            message = self.message()
            if predicate(message):
                return message

    def session(self, *, form: bool = True, mcp_servers: list[Json] | None = None) -> str:
        caps = {"elicitation": {"form": {}}} if form else {}
        self.call("initialize", {"protocolVersion": 1, "clientCapabilities": caps})
        params = {"cwd": "/srv/project", "mcpServers": mcp_servers or []}
        response, _ = self.call("session/new", params)
        session_id: str = response["result"]["sessionId"]
        return session_id

    def prompt(
        self, session_id: str, text: str, answer: Answer | None = None
    ) -> tuple[Json, list[Json]]:
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        return self.call("session/prompt", params, answer)

    def close(self) -> int:
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        return self.proc.wait(timeout=5)

    def stderr(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode()


# The behaviours only tests use run on the demo agent that adds them.
with_test_behaviours = pytest.mark.parametrize("agent", [DEMO_FAULTS], indirect=True)


@pytest.fixture
def agent(request: pytest.FixtureRequest) -> Iterator[AgentProcess]:
    """The demo agent; ``indirect`` parametrization gives another command line."""
    process = AgentProcess(command=getattr(request, "param", DEMO_AGENT))
    yield process
    if process.proc.poll() is None:
        process.proc.kill()
        process.proc.wait()
    process.reader.join(timeout=5)
    for stream in (process.proc.stdin, process.proc.stdout, process.proc.stderr):
        assert stream is not None
        stream.close()


def updates(messages: list[Json], kind: str | None = None) -> list[Json]:
    found = [m["params"]["update"] for m in messages if m.get("method") == "session/update"]
    return [u for u in found if kind is None or u["sessionUpdate"] == kind]


def reply_text(messages: list[Json]) -> str:
    return "".join(u["content"]["text"] for u in updates(messages, "agent_message_chunk"))


def requests(messages: list[Json]) -> list[Json]:
    return [m for m in messages if "id" in m and "method" in m]


def test_initialize_and_new_session(agent: AgentProcess) -> None:
    response, _ = agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    result = response["result"]
    assert result["protocolVersion"] == 1
    assert result["agentInfo"]["name"] == "acp-notebook-demo"
    assert result["agentCapabilities"]["loadSession"] is True
    assert set(result["agentCapabilities"]["sessionCapabilities"]) == {
        "list",
        "resume",
        "close",
        "delete",
        "fork",
    }
    assert result["authMethods"] == []
    agent.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    missing, _ = agent.call("session/new", {"mcpServers": []})
    assert missing["error"]["code"] == -32602
    response, _ = agent.call("session/new", {"cwd": "/srv/project", "mcpServers": []})
    session = response["result"]
    assert re.fullmatch(r"demo-[0-9a-f]{32}", session["sessionId"])
    assert session["modes"]["currentModeId"] == "default"
    assert [m["id"] for m in session["modes"]["availableModes"]] == [
        "default",
        "acceptEdits",
        "plan",
    ]
    [option] = session["configOptions"]
    assert (option["id"], option["currentValue"]) == ("mode", "default")
    assert [o["value"] for o in option["options"]] == ["default", "acceptEdits", "plan"]
    assert agent.close() == 0


def test_modes_and_config(agent: AgentProcess) -> None:
    sid = agent.session()
    response, seen = agent.call("session/set_mode", {"sessionId": sid, "modeId": "plan"})
    assert response["result"] == {}
    assert updates(seen, "current_mode_update") == [
        {"sessionUpdate": "current_mode_update", "currentModeId": "plan"}
    ]
    bad, _ = agent.call("session/set_mode", {"sessionId": sid, "modeId": "yolo"})
    assert bad["error"]["code"] == -32602
    params = {"sessionId": sid, "configId": "mode", "value": "acceptEdits"}
    response, seen = agent.call("session/set_config_option", params)
    assert response["result"]["configOptions"][0]["currentValue"] == "acceptEdits"
    assert updates(seen, "current_mode_update")[0]["currentModeId"] == "acceptEdits"


def test_hello_reply(agent: AgentProcess) -> None:
    sid = agent.session()
    response, seen = agent.prompt(sid, "hello")
    assert response["result"] == {"stopReason": "end_turn"}
    assert [u["content"]["text"] for u in updates(seen, "agent_thought_chunk")] == [
        "Thinking about it."
    ]
    chunks = updates(seen, "agent_message_chunk")
    assert len(chunks) > 5
    assert {c["messageId"] for c in chunks} == {"msg-1-2"}
    assert reply_text(seen) == GREETING.format(prompt="hello")
    [usage] = updates(seen, "usage_update")
    assert usage["size"] == 200000 and "cost" not in usage  # the demo is free
    assert updates(seen)[-1] == usage  # near the end of the turn


def test_the_greeting_names_every_keyword() -> None:
    # Each behaviour by its name as a prompt says it ("ask_user": `ask-user`).
    names = [function.__name__.replace("_", "-") for _, function in BEHAVIOURS]
    assert len(names) == len(set(names)) > 15
    assert [name for name in names if f"`{name}" not in GREETING] == []


def test_slow_answers_for_the_seconds_asked(agent: AgentProcess) -> None:
    # The greeting's `slow 30` is 30 seconds: time to press Stop.
    sid = agent.session()
    started = time.monotonic()
    response, seen = agent.prompt(sid, "slow 1")
    assert response["result"] == {"stopReason": "end_turn"}
    assert time.monotonic() - started >= 0.9
    assert reply_text(seen) == "".join(f"tick {i} " for i in range(10))


def test_ask_user_round_trip_and_request_ids(agent: AgentProcess) -> None:
    sid = agent.session()
    content = {"question_0": "green", "note": "hi", "confirm": True, "count": 4}
    response, seen = agent.prompt(
        sid, "please ask-user now", lambda _: {"action": "accept", "content": content}
    )
    [ask] = requests(seen)
    assert ask["id"] == 0
    assert ask["method"] == "elicitation/create"
    params = ask["params"]
    assert (params["mode"], params["sessionId"]) == ("form", sid)
    schema = params["requestedSchema"]
    assert schema["required"] == ["question_0"]
    assert set(schema["properties"]) == {"question_0", "note", "confirm", "count"}
    assert [o["const"] for o in schema["properties"]["question_0"]["oneOf"]] == [
        "red",
        "green",
        "blue",
    ]
    assert response["result"] == {"stopReason": "end_turn"}
    expected = {"action": "accept", "content": content}
    answer = json.dumps(expected, sort_keys=True, separators=(",", ":"))
    # In the form's words first (choices by their titles), then what the agent received.
    assert reply_text(seen) == (
        "You answered. Pick a color: Green; A note: hi; Confirm: yes; How many: 4."
        f"\n\nWhat the agent received: `{answer}`"
    )

    # The next agent->client request counts up; a JSON-RPC error is reported back.
    request_id = agent.start_request(
        "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "ask-user"}]}
    )
    ask = agent.until(lambda m: m.get("method") == "elicitation/create")
    assert ask["id"] == 1
    agent.send({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no"}})
    response, seen = agent.wait_response(request_id)
    assert reply_text(seen) == "The question failed (error -32602)."


def test_permission_selected_and_cancelled(agent: AgentProcess) -> None:
    sid = agent.session()
    selected = {"outcome": {"outcome": "selected", "optionId": "allow-once"}}
    response, seen = agent.prompt(sid, "permission", lambda _: selected)
    [ask] = requests(seen)
    assert ask["method"] == "session/request_permission"
    assert ask["params"]["toolCall"]["toolCallId"] == "call-1"
    assert [o["optionId"] for o in ask["params"]["options"]] == [
        "allow-once",
        "allow-always",
        "reject",
    ]
    assert updates(seen, "tool_call")[0]["kind"] == "execute"
    assert updates(seen, "tool_call_update")[-1]["status"] == "completed"
    assert reply_text(seen) == "permission: allow-once"
    assert response["result"] == {"stopReason": "end_turn"}

    cancelled = {"outcome": {"outcome": "cancelled"}}
    response, seen = agent.prompt(sid, "permission", lambda _: cancelled)
    assert requests(seen)[0]["id"] == 1
    assert updates(seen, "tool_call_update")[-1]["status"] == "failed"
    assert reply_text(seen) == "permission: cancelled"


def test_cancel_during_ask_user_withdraws_the_form(agent: AgentProcess) -> None:
    sid = agent.session()
    request_id = agent.start_request(
        "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "ask-user"}]}
    )
    ask = agent.until(lambda m: m.get("method") == "elicitation/create")
    agent.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
    response, seen = agent.wait_response(request_id)
    withdrawn = [m for m in seen if m.get("method") == "$/cancel_request"]
    assert withdrawn == [
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": ask["id"]}}
    ]
    assert response["result"] == {"stopReason": "cancelled"}
    # The late answer is ignored and the agent keeps serving.
    late = {"code": -32800, "message": "cancelled"}
    agent.send({"jsonrpc": "2.0", "id": ask["id"], "error": late})
    response, seen = agent.prompt(sid, "hello")
    assert response["result"] == {"stopReason": "end_turn"}


def test_ask_withdraw_sends_cancel_request(agent: AgentProcess) -> None:
    sid = agent.session()
    response, seen = agent.prompt(sid, "ask-withdraw")
    [ask] = requests(seen)
    cancel = [m["params"] for m in seen if m.get("method") == "$/cancel_request"]
    assert cancel == [{"requestId": ask["id"]}]
    assert reply_text(seen) == "question withdrawn"
    assert response["result"] == {"stopReason": "end_turn"}


@with_test_behaviours
def test_crash_exits_with_code_3(agent: AgentProcess) -> None:
    sid = agent.session()
    agent.start_request(
        "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "crash"}]}
    )
    chunks = [agent.message(), agent.message()]
    assert all(updates([c], "agent_message_chunk") for c in chunks)
    assert agent.lines.get(timeout=5) is None  # stdout closed without an answer
    assert agent.proc.wait(timeout=5) == 3
    assert "demo agent: crashing on purpose" in agent.stderr()


@with_test_behaviours
def test_garbage_lines_then_the_turn_ends(agent: AgentProcess) -> None:
    sid = agent.session()
    request_id = agent.start_request(
        "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "garbage"}]}
    )
    lines = [agent.line() for _ in range(3)]
    assert [line.strip() for line in lines] == ["this is not json", "{broken", "[1,2"]
    response, seen = agent.wait_response(request_id)
    assert reply_text(seen) == "garbage sent"
    assert response["result"] == {"stopReason": "end_turn"}


def test_stream_delivers_chunks_in_order(agent: AgentProcess) -> None:
    sid = agent.session()
    response, seen = agent.prompt(sid, "stream 1000")
    chunks = updates(seen, "agent_message_chunk")
    assert [c["content"]["text"] for c in chunks] == [f"{i} " for i in range(1000)]
    assert len({c["messageId"] for c in chunks}) == 1
    assert response["result"] == {"stopReason": "end_turn"}


@with_test_behaviours
def test_error_turn(agent: AgentProcess) -> None:
    sid = agent.session()
    response, seen = agent.prompt(sid, "error")
    assert reply_text(seen) == "API Error: 400 demo failure"
    assert response["error"] == {"code": -32603, "message": "API Error: 400 demo failure"}


def test_unknown_method_and_bad_input(agent: AgentProcess) -> None:
    agent.send_raw("this is not json")
    agent.send({"jsonrpc": "2.0", "method": "_vendor/notice", "params": {}})
    response, _ = agent.call("vendor/unknown", {})
    assert response["error"]["code"] == -32601
    sid = agent.session()
    assert sid.startswith("demo-")
    assert agent.close() == 0
    assert "not JSON" in agent.stderr()


def test_keyword_order(agent: AgentProcess) -> None:
    sid = agent.session()
    # "ask-user" must not match inside "ask-user-withdraw": that one withdraws its own form.
    _, seen = agent.prompt(sid, "ask-user-withdraw")
    assert requests(seen)[0]["params"]["message"] == "Still there?"
    assert reply_text(seen) == "question withdrawn"
    # Whole words only, and the earlier keyword wins.
    _, seen = agent.prompt(sid, "mainstream music")
    assert reply_text(seen).startswith("Hello from the **demo agent**. You said: mainstream")
    _, seen = agent.prompt(sid, "Think about the tool")
    assert len(updates(seen, "agent_thought_chunk")) == 3
    assert updates(seen, "tool_call") == []


def test_sessions_outlive_the_process(tmp_path: Path) -> None:
    """A second agent process lists the first one's session and replays it on load."""
    first = AgentProcess(sessions=tmp_path)
    sid = first.session()
    first.prompt(sid, "think")
    _, greeting = first.prompt(sid, "hello there")
    assert first.close() == 0
    spoken = updates(greeting)

    second = AgentProcess(sessions=tmp_path)
    second.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    listed, _ = second.call("session/list", {"cwd": "/srv/project"})
    [info] = listed["result"]["sessions"]
    assert (info["sessionId"], info["cwd"], info["title"]) == (sid, "/srv/project", "think")
    assert info["updatedAt"].endswith("+00:00")
    other, _ = second.call("session/list", {"cwd": "/elsewhere"})
    assert other["result"] == {"sessions": []}

    loaded, replay = second.call(
        "session/load", {"sessionId": sid, "cwd": "/srv/project", "mcpServers": []}
    )
    assert loaded["result"]["modes"]["currentModeId"] == "default"
    replayed = updates(replay)
    # The conversation comes back before the answer: both prompts, then what was said.
    assert [
        u["content"]["text"] for u in replayed if u["sessionUpdate"] == "user_message_chunk"
    ] == [
        "think",
        "hello there",
    ]
    assert replayed[-len(spoken) :] == spoken
    # The loaded session goes on: a new turn is stored after the old ones.
    response, _ = second.prompt(sid, "plan")
    assert response["result"]["stopReason"] == "end_turn"
    assert second.close() == 0

    third = AgentProcess(sessions=tmp_path)
    third.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    resumed, replay = third.call(
        "session/resume", {"sessionId": sid, "cwd": "/srv/project", "mcpServers": []}
    )
    assert "result" in resumed and updates(replay) == []  # resume replays nothing
    missing, _ = third.call(
        "session/load", {"sessionId": "demo-" + "0" * 32, "cwd": "/srv/project", "mcpServers": []}
    )
    assert missing["error"]["code"] == -32002
    # An id that is not ours never becomes a path.
    escape, _ = third.call(
        "session/load", {"sessionId": "../../etc/passwd", "cwd": "/srv/project", "mcpServers": []}
    )
    assert escape["error"]["code"] == -32002
    assert third.close() == 0


@with_test_behaviours
def test_longline_is_one_unbroken_line(agent: AgentProcess) -> None:
    sid = agent.session()
    _, seen = agent.prompt(sid, "longline 500")
    text = reply_text(seen)
    assert len(text) == 500 * 9
    assert not any(c.isspace() for c in text)


def test_agentic_turn_has_tool_calls_and_a_diff(agent: AgentProcess) -> None:
    sid = agent.session()
    _, seen = agent.prompt(sid, "agentic 30")
    calls = updates(seen, "tool_call")
    assert [c["kind"] for c in calls] == ["read", "execute", "edit"]
    assert len({c["toolCallId"] for c in calls}) == 3
    diff = calls[2]["content"][0]
    assert diff["type"] == "diff" and diff["oldText"].count("\n") == 30
    assert diff["oldText"] != diff["newText"]
    assert len(updates(seen, "agent_thought_chunk")) == 2
    assert "doubled every third value" in reply_text(seen)


def test_history_sends_events_that_do_not_merge(agent: AgentProcess) -> None:
    sid = agent.session()
    _, seen = agent.prompt(sid, "history 100")
    assert len(updates(seen, "tool_call")) == 4
    assert len(updates(seen, "tool_call_update")) == 4 * 24
    chunks = updates(seen, "agent_message_chunk")
    assert len({c["messageId"] for c in chunks}) == 4


def edit_tools(refuse: str = "") -> Json:
    """The stand-in edit tools as the chat's ``notebook`` server (stdio); the tools named
    in ``refuse`` refuse."""
    return {
        "name": "notebook",
        "command": sys.executable,
        "args": ["-m", "tests.support.fake_edit_tools"],
        "env": [{"name": "FAKE_EDIT_TOOLS_REFUSE", "value": refuse}],
    }


@pytest.fixture
def tools_agent(agent: AgentProcess) -> AgentProcess:
    """The demo agent, patient while it starts the stdio tools (a Python process that
    imports the MCP SDK takes seconds on a busy machine)."""
    agent.line_timeout = 60.0
    return agent


def allow(request: Json) -> Json:
    return {"outcome": {"outcome": "selected", "optionId": "allow-once"}}


def ended_calls(messages: list[Json]) -> list[tuple[str, str, str]]:
    """Each tool call's end: (toolCallId, status, the tool's answer)."""
    return [
        (u["toolCallId"], u["status"], u["content"][0]["content"]["text"] if "content" in u else "")
        for u in updates(messages, "tool_call_update")
        if u["status"] in ("completed", "failed")
    ]


def test_edit_inserts_a_cell_edits_it_and_runs_it(tools_agent: AgentProcess) -> None:
    sid = tools_agent.session(mcp_servers=[edit_tools()])
    response, seen = tools_agent.prompt(sid, "edit", allow)
    assert response["result"] == {"stopReason": "end_turn"}
    calls = updates(seen, "tool_call")
    assert [(c["title"], c["rawInput"]) for c in calls] == [
        ("mcp__notebook__insert_cell", {"source": EDIT_SOURCE, "cell_type": "code"}),
        ("mcp__notebook__edit_cell", {"cell_id": "cell-1", "old": EDIT_OLD, "new": EDIT_NEW}),
        ("mcp__notebook__run_cell", {"cell_id": "cell-1", "timeout": 30}),
    ]
    # Only the run is asked for: each edit is reviewed by the tool itself.
    [asked] = requests(seen)
    assert asked["method"] == "session/request_permission"
    assert asked["params"]["toolCall"]["toolCallId"] == "call-1-run"
    source = EDIT_SOURCE.replace(EDIT_OLD, EDIT_NEW)
    assert ended_calls(seen) == [
        (
            "call-1-insert",
            "completed",
            f"Inserted code cell id=cell-1 index=1 rev=r{len(EDIT_SOURCE)}",
        ),
        ("call-1-edit", "completed", f"Edited cell id=cell-1 index=1 rev=r{len(source)}"),
        (
            "call-1-run",
            "completed",
            f"Ran cell id=cell-1 index=1 rev=r{len(source)}\nwarmest: Cairo at 28 C\n",
        ),
    ]
    assert reply_text(seen) == (
        "I added a cell, changed its last line and ran it: warmest: Cairo at 28 C"
    )


def test_edit_stops_at_the_first_refusal(tools_agent: AgentProcess) -> None:
    sid = tools_agent.session(mcp_servers=[edit_tools(refuse="edit_cell")])
    _, seen = tools_agent.prompt(sid, "edit", allow)
    assert [c["toolCallId"] for c in updates(seen, "tool_call")] == ["call-1-insert", "call-1-edit"]
    assert [end[:2] for end in ended_calls(seen)] == [
        ("call-1-insert", "completed"),
        ("call-1-edit", "failed"),
    ]
    assert requests(seen) == []
    assert reply_text(seen).startswith("I added a cell but could not change it: ")
    assert "the user rejected the change" in reply_text(seen)
    sid = tools_agent.session(mcp_servers=[edit_tools(refuse="insert_cell")])
    _, seen = tools_agent.prompt(sid, "edit", allow)
    assert [end[:2] for end in ended_calls(seen)] == [("call-2-insert", "failed")]
    assert "no notebook document is reachable" in reply_text(seen)


def test_edit_asks_before_the_run(tools_agent: AgentProcess) -> None:
    sid = tools_agent.session(mcp_servers=[edit_tools()])
    reject = {"outcome": {"outcome": "selected", "optionId": "reject"}}
    _, seen = tools_agent.prompt(sid, "edit", lambda _: reject)
    assert [end[:2] for end in ended_calls(seen)][-1] == ("call-1-run", "failed")
    assert reply_text(seen) == (
        "I added a cell and changed its last line; I did not run it: you declined."
    )


def test_edit_without_notebook_tools_says_so(agent: AgentProcess) -> None:
    _, seen = agent.prompt(agent.session(), "edit")
    assert updates(seen, "tool_call") == []
    assert reply_text(seen) == NO_NOTEBOOK_TOOLS


@pytest.mark.parametrize(
    ("answer", "cell"),
    [
        ("Inserted code cell id=a1-B_2 index=3 rev=9f", {"cell_id": "a1-B_2"}),
        ("Inserted markdown cell (cell_id=xyz, index=0)", {"cell_id": "xyz"}),
        ("Inserted a cell at index=4", {"index": 4}),
        ("Inserted, hidden=1 and a video=2", None),
        ("", None),
    ],
)
def test_the_cell_an_answer_names(answer: str, cell: Json | None) -> None:
    assert cell_of(answer) == cell
