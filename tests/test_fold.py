"""The Python fold against the shared vectors (js/test/fold.test.ts runs the same ones).

A vector is {"name", "events", "expected": <snapshot>} and may add checkpoints (parts of
the snapshot mid-stream: phases and thought timings change), the bounds of the initial
state (small ones reach dropping), a snapshot to start from (a chat continued from a
saved notebook) and a point to restore at: tests/vectors/fold_vector.schema.json.
"""

from __future__ import annotations

import gc
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.wire.contracts import fold_snapshot
from acp_notebook.wire.fold import (
    MAX_ITEMS,
    MAX_WEIGHT,
    TERMINAL_MAX,
    ChatState,
    fold,
    initial_state,
    last_agent_text,
    pending_requests,
    restore,
    snapshot,
)

VECTORS = sorted((Path(__file__).parent / "vectors" / "fold").glob("*.json"))
# The vector format, which js/test/fold.test.ts reads too.
VECTOR_FORMAT = json.loads(
    (Path(__file__).parent / "vectors" / "fold_vector.schema.json").read_text()
)
SNAPSHOT_KEYS = [
    "seq",
    "agent",
    "turn",
    "items",
    "toolCalls",
    "plan",
    "usage",
    "modes",
    "configOptions",
    "commands",
    "title",
    "permissions",
    "elicitations",
]


def run(events: list[dict[str, Any]]) -> ChatState:
    state = initial_state()
    for event in events:
        state = fold(state, event)
    return state


def chunk(
    seq: int, text: str, kind: str = "agent_message_chunk", mid: str | None = None
) -> dict[str, Any]:
    update = {"sessionUpdate": kind, "content": {"type": "text", "text": text}, "messageId": mid}
    return {"kind": "update", "seq": seq, "ts": seq, "update": update}


def test_there_are_vectors_for_every_rule() -> None:
    assert len(VECTORS) >= 12
    vectors = [json.loads(p.read_text()) for p in VECTORS]
    assert len({v["name"] for v in vectors}) == len(VECTORS)
    # Numbered uniquely, and nothing in them that a runner would pass over.
    assert len({p.name.split("_", 1)[0] for p in VECTORS}) == len(VECTORS)
    for vector in vectors:
        assert vector.keys() <= VECTOR_FORMAT["properties"].keys(), vector["name"]
        assert vector.keys() >= set(VECTOR_FORMAT["required"]), vector["name"]


def _start(vector: dict[str, Any]) -> ChatState:
    bounds = vector.get("maxItems", MAX_ITEMS), vector.get("maxWeight", MAX_WEIGHT)
    start = vector.get("restore")
    return initial_state(*bounds) if start is None else restore(start, *bounds)


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_vector(path: Path) -> None:
    vector = json.loads(path.read_text())
    checkpoints = {c["after"]: c["expected"] for c in vector.get("checkpoints", [])}
    state = _start(vector)
    for n, event in enumerate(vector["events"], 1):
        state = fold(state, event)
        if n in checkpoints:
            snap = dict(snapshot(state))
            assert {key: snap[key] for key in checkpoints[n]} == checkpoints[n], f"after {n}"
    snap = snapshot(state)
    # Plain JSON, in the spec's key order.
    assert json.loads(json.dumps(snap)) == snap
    optional = [key for key in ("acceptEdits", "access", "queue", "auth", "dropped") if key in snap]
    assert list(snap) == SNAPSHOT_KEYS + optional
    assert snap == vector["expected"]
    fold_snapshot.validate_python(snap, strict=True)  # its contract


@pytest.mark.parametrize(
    "path", [p for p in VECTORS if "restoreAfter" in p.read_text()], ids=lambda p: p.stem
)
def test_vector_restored_midway(path: Path) -> None:
    vector = json.loads(path.read_text())
    cut = vector["restoreAfter"]
    state = _start(vector)
    for event in vector["events"][:cut]:
        state = fold(state, event)
    saved = json.loads(json.dumps(snapshot(state)))
    state = restore(saved, vector.get("maxItems", MAX_ITEMS), vector.get("maxWeight", MAX_WEIGHT))
    for event in vector["events"][cut:]:
        state = fold(state, event)
    assert snapshot(state) == vector["expected"]


def test_restore_refuses_what_is_no_snapshot() -> None:
    snap = json.loads(json.dumps(snapshot(run([chunk(1, "a")]))))
    assert snapshot(restore(snap)) == snap
    snap["items"][0]["type"] = "bogus"
    with pytest.raises(ValueError, match="not a fold snapshot"):
        restore(snap)
    with pytest.raises(ValueError, match="not a fold snapshot"):
        restore({"seq": 1})  # type: ignore[typeddict-item]


def test_both_folds_have_the_same_sections_and_functions_in_order() -> None:
    root = Path(__file__).resolve().parent.parent
    py = (root / "acp_notebook" / "wire" / "fold.py").read_text()
    ts = (root / "js" / "src" / "fold.ts").read_text()
    # The readers of fold.py's last section are the kernel's; dom.ts has str and records.
    py, readers = py.split(
        "# ---------------------------------------------------------------- readers"
    )
    assert re.findall(r"^def (\w+)", readers, re.MULTILINE) == [
        "pending_requests",
        "last_agent_text",
        "last_tool_calls",
        "sets_state",
    ]

    def camel(name: str) -> str:
        head, *rest = name.lstrip("_").split("_")
        return head + "".join(part.title() for part in rest)

    py_functions = [camel(n) for n in re.findall(r"^def (\w+)", py, re.MULTILINE)]
    ts_functions = re.findall(r"^(?:export )?function (\w+)", ts, re.MULTILINE)
    assert [n for n in py_functions if n not in ("str", "records")] == ts_functions
    sections = r"^(?:#|//) -{64} (.+)$"
    assert re.findall(sections, py, re.MULTILINE) == re.findall(sections, ts, re.MULTILINE)
    assert re.findall(sections, ts, re.MULTILINE) == [
        "session/update",
        "turns, agent, requests",
        "helpers",
    ]


def test_fold_mutates_and_returns_its_input() -> None:
    state = initial_state()
    assert fold(state, chunk(1, "x")) is state


def test_snapshot_does_not_change_with_later_events() -> None:
    state = run(
        [
            chunk(1, "a"),
            {
                "kind": "update",
                "seq": 2,
                "update": {"sessionUpdate": "tool_call", "toolCallId": "c"},
            },
        ]
    )
    before = snapshot(state)
    frozen = json.dumps(before)
    fold(
        state,
        {
            "kind": "update",
            "seq": 3,
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "status": "completed",
            },
        },
    )
    fold(state, chunk(4, "b"))
    assert json.dumps(before) == frozen
    assert snapshot(state)["toolCalls"]["c"]["status"] == "completed"


def test_pending_requests_in_arrival_order() -> None:
    options = [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]
    state = run(
        [
            {"kind": "turn_started", "seq": 1, "turn": 1, "prompt": "p"},
            {
                "kind": "elicitation_request",
                "seq": 2,
                "requestId": "e1",
                "message": "m",
                "fields": [],
            },
            {
                "kind": "permission_request",
                "seq": 3,
                "requestId": "p1",
                "toolCall": {},
                "options": options,
            },
            {
                "kind": "elicitation_request",
                "seq": 4,
                "requestId": "e2",
                "message": "n",
                "fields": [],
            },
            # The same id in the other table is another request.
            {
                "kind": "permission_request",
                "seq": 5,
                "requestId": "e1",
                "toolCall": {},
                "options": [],
            },
        ]
    )
    pending = pending_requests(state)
    assert [(r["type"], r["requestId"]) for r in pending] == [
        ("elicitation", "e1"),
        ("permission", "p1"),
        ("elicitation", "e2"),
        ("permission", "e1"),
    ]
    assert pending[1]["options"] == options and pending[1]["outcome"] is None
    fold(
        state, {"kind": "elicitation_resolved", "seq": 6, "requestId": "e1", "outcome": "declined"}
    )
    fold(
        state,
        {
            "kind": "permission_resolved",
            "seq": 7,
            "requestId": "p1",
            "outcome": "selected",
            "optionId": "ok",
        },
    )
    assert [(r["type"], r["requestId"]) for r in pending_requests(state)] == [
        ("elicitation", "e2"),
        ("permission", "e1"),
    ]
    # A copy: editing it leaves the state alone.
    pending_requests(state)[0]["outcome"] = "x"
    assert snapshot(state)["elicitations"]["e2"]["outcome"] is None


def test_last_agent_text_spans_the_messages_since_the_last_user_item() -> None:
    assert last_agent_text(initial_state()) == ""
    tool = {"kind": "update", "seq": 6, "update": {"sessionUpdate": "tool_call", "toolCallId": "c"}}
    state = run(
        [
            {"kind": "turn_started", "seq": 1, "turn": 1, "prompt": "one"},
            chunk(2, "old answer"),
            {"kind": "turn_started", "seq": 3, "turn": 2, "prompt": "two"},
            chunk(4, "Let me ", mid="a"),
            chunk(5, "look.", mid="a"),
            tool,
            chunk(7, "hidden", kind="agent_thought_chunk"),
            chunk(8, "Found it.", mid="b"),
        ]
    )
    assert last_agent_text(state) == "Let me look.\n\nFound it."
    fold(state, chunk(9, "replayed user text", kind="user_message_chunk"))
    assert last_agent_text(state) == ""


def _one_long_message(n: int) -> list[dict[str, Any]]:
    """A single streamed answer, with tool and usage updates that must not split it."""
    events: list[dict[str, Any]] = [
        {"kind": "turn_started", "seq": 1, "ts": 0, "turn": 1, "prompt": "go"},
        {"kind": "update", "seq": 2, "update": {"sessionUpdate": "tool_call", "toolCallId": "c"}},
    ]
    for seq in range(3, n + 1):
        if seq % 1000 == 0:
            update: dict[str, Any] = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "content": [],
            }
        elif seq % 1000 == 1:
            update = {"sessionUpdate": "usage_update", "used": seq, "size": n}
        else:
            update = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "ab"},
                "messageId": "m",
            }
        events.append({"kind": "update", "seq": seq, "ts": seq, "update": update})
    return events


def _many_items(n: int) -> list[dict[str, Any]]:
    """Short messages and thoughts, a tool call every tenth event, a card every 100th."""
    events: list[dict[str, Any]] = [
        {"kind": "turn_started", "seq": 1, "ts": 0, "turn": 1, "prompt": "go"}
    ]
    for seq in range(2, n + 1):
        if seq % 100 == 0:
            events.append(
                {
                    "kind": "permission_request",
                    "seq": seq,
                    "requestId": f"p{seq}",
                    "toolCall": {},
                    "options": [],
                }
            )
            continue
        if seq % 100 == 1:
            events.append(
                {
                    "kind": "permission_resolved",
                    "seq": seq,
                    "requestId": f"p{seq - 1}",
                    "outcome": "cancelled",
                }
            )
            continue
        if seq % 10 == 0:
            update: dict[str, Any] = {
                "sessionUpdate": "tool_call",
                "toolCallId": f"c{seq}",
                "status": "in_progress",
            }
        else:
            kind = "agent_thought_chunk" if seq % 2 else "agent_message_chunk"
            update = {
                "sessionUpdate": kind,
                "content": {"type": "text", "text": "ab"},
                "messageId": str(seq // 3),
            }
        events.append({"kind": "update", "seq": seq, "ts": seq, "update": update})
    return events


@pytest.mark.parametrize("make", [_one_long_message, _many_items])
def test_folding_is_linear_in_the_number_of_events(make: Any) -> None:
    n = 200_000
    events = make(n)
    tenth = n // 10

    def attempt() -> tuple[float, float, ChatState]:
        state = initial_state()
        gc.disable()
        try:
            start = time.perf_counter()
            for event in events[:tenth]:
                fold(state, event)
            first = time.perf_counter() - start
            for event in events[tenth:-tenth]:
                fold(state, event)
            start = time.perf_counter()
            for event in events[-tenth:]:
                fold(state, event)
            last = time.perf_counter() - start
        finally:
            gc.enable()
        return first, last, state

    # Work that grows with the history (copying a message's text, the items or a table
    # per event) makes the last tenth many times slower than the first; the best of a
    # few tries keeps a noisy machine from failing a linear fold.
    ratios = []
    for _ in range(3):
        first, last, state = attempt()
        ratios.append(last / first)
        if ratios[-1] < 3:
            break
    assert min(ratios) < 3, ratios
    snap = snapshot(state)
    assert snap["seq"] == n
    texts = [e["update"]["content"]["text"] for e in events if _is_chunk(e)]
    kept = "".join(i.get("text", "") for i in snap["items"])
    if make is _one_long_message:
        assert kept == "go" + "".join(texts) and "dropped" not in snap
    else:  # over the item bound: the newest items, and the count of the others
        assert ("go" + "".join(texts)).endswith(kept) and snap["dropped"]["items"] > 0


def _is_chunk(event: dict[str, Any]) -> bool:
    return str(event.get("update", {}).get("sessionUpdate")).endswith("_chunk")


def test_the_state_is_bounded_in_characters() -> None:
    state = ChatState(max_weight=100_000)
    fold(state, {"kind": "turn_started", "seq": 1, "turn": 1, "prompt": "go"})
    fold(
        state, {"kind": "elicitation_request", "seq": 2, "requestId": "q", "message": "m" * 60_000}
    )
    # A tool call's output replaced a hundred times counts once.
    fold(
        state,
        {"kind": "update", "seq": 3, "update": {"sessionUpdate": "tool_call", "toolCallId": "c"}},
    )
    for seq in range(4, 104):
        output = [{"type": "content", "content": {"type": "text", "text": "o" * 500}}]
        update = {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": output}
        fold(state, {"kind": "update", "seq": seq, "update": update})
    assert "dropped" not in snapshot(state)
    for seq in range(104, 404):  # 300,000 characters of one answer
        fold(state, chunk(seq, "a" * 999 + str(seq % 10), mid="m"))
    snap = snapshot(state)
    # The pending question stays, whatever it weighs; the answer keeps its end.
    assert [i["type"] for i in snap["items"]] == ["elicitation", "agent"]
    text = snap["items"][1]["text"]
    assert text.startswith("…") and text.endswith("a" * 999 + "3") and len(text) <= 100_000
    # Each cut counts the ellipsis of the cut before it.
    assert snap["dropped"]["items"] == 2
    assert 0 <= snap["dropped"]["characters"] - (300_000 - len(text) + 1) < 100
    assert state.weight <= state.max_weight
    assert last_agent_text(state) == text


def test_a_terminals_output_keeps_its_end_and_counts_the_cut() -> None:
    state = initial_state()
    meta = {"terminal_info": {"terminal_id": "t"}}
    call = {"sessionUpdate": "tool_call", "toolCallId": "b", "_meta": meta}
    fold(state, {"kind": "update", "seq": 1, "update": call})
    started = time.perf_counter()
    for n in range(100_000):  # 100,000 lines, as a live command prints them
        delta = {"terminal_output_delta": {"terminal_id": "t", "data": f"line {n:06d}\n"}}
        update = {"sessionUpdate": "tool_call_update", "toolCallId": "b", "_meta": delta}
        fold(state, {"kind": "update", "seq": n + 2, "update": update})
    assert time.perf_counter() - started < 5  # linear: a line never copies the rest
    term = snapshot(state)["toolCalls"]["b"]["terminal"]
    assert len(term["output"]) == TERMINAL_MAX
    assert term["output"].endswith("line 099999\n")
    assert term["cut"] == 100_000 * 12 - TERMINAL_MAX
    assert state.weight <= MAX_WEIGHT
    # A snapshot restores with its terminal; more output goes on from there.
    again = restore(snapshot(state))
    update = {"terminal_output_delta": {"terminal_id": "t", "data": "end\n"}}
    fold(
        again,
        {
            "kind": "update",
            "seq": 10**6,
            "update": {"sessionUpdate": "tool_call_update", "toolCallId": "b", "_meta": update},
        },
    )
    shown = snapshot(again)["toolCalls"]["b"]["terminal"]
    assert shown["output"].endswith("line 099999\nend\n") and shown["cut"] == term["cut"] + 4
