"""3. Fold cost: the Python and TypeScript folds over the same N mixed events.

The figure is the per-event cost of the last 10% of the events, the reference that of
the first 10%, folded into one growing state: a ratio near 1 means no growth with the
length of the chat. Each fold runs once to warm up (the JIT, caches), then the best of
three timed runs counts, each on a fresh state.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acp_notebook.wire import fold as folding

from .common import REPO, Context, Row, fmt

TARGET = 1.5
RUNS = 3
# Events are timed in blocks; a tenth's cost is the median of its blocks, so that one
# garbage collection does not decide the figure (steady growth would show in every block).
BLOCK = 500
ESBUILD = REPO / "js" / "node_modules" / ".bin" / "esbuild"
TS_BENCH = Path(__file__).with_name("fold_bench.ts")


def _turn(n: int) -> Iterator[dict[str, Any]]:
    """One turn of a busy chat: thoughts, tools, a plan, questions and a long answer."""
    tool = f"tool-{n}"
    yield {"kind": "turn_started", "turn": n, "prompt": f"prompt {n}"}
    for i in range(20):
        yield _chunk("agent_thought_chunk", f"t-{n}", f"thinking {i} ")
    yield _update(sessionUpdate="tool_call", toolCallId=tool, title=f"Edit {n}", kind="edit")
    yield _update(sessionUpdate="tool_call_update", toolCallId=tool, status="in_progress")
    entries = [
        {"content": f"step {i}", "priority": "medium", "status": "pending"} for i in range(3)
    ]
    yield _update(sessionUpdate="plan", entries=entries)
    permission = f"perm-{n}"
    options = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]
    yield {
        "kind": "permission_request",
        "requestId": permission,
        "toolCall": {"toolCallId": tool},
        "options": options,
    }
    yield {"kind": "permission_resolved", "requestId": permission, "outcome": "selected"}
    output = {"type": "content", "content": {"type": "text", "text": f"done {n}"}}
    yield _update(
        sessionUpdate="tool_call_update", toolCallId=tool, status="completed", content=[output]
    )
    if n % 4 == 0:
        question = f"ask-{n}"
        fields = [{"name": "answer", "type": "text", "title": "Answer", "required": False}]
        yield {
            "kind": "elicitation_request",
            "requestId": question,
            "message": "Which one?",
            "fields": fields,
        }
        yield {"kind": "elicitation_resolved", "requestId": question, "outcome": "accepted"}
    for i in range(100):
        yield _chunk("agent_message_chunk", f"m-{n}", f"word{i} ")
    yield _update(sessionUpdate="usage_update", used=1000 * n, size=200_000)
    yield {"kind": "turn_ended", "turn": n, "stopReason": "end_turn"}


def _chunk(kind: str, message_id: str, text: str) -> dict[str, Any]:
    content = {"type": "text", "text": text}
    return _update(sessionUpdate=kind, messageId=message_id, content=content)


def _update(**update: Any) -> dict[str, Any]:
    return {"kind": "update", "update": update}


def mixed_events(count: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    n = 0
    while len(events) < count:
        n += 1
        events.extend(_turn(n))
    del events[count:]
    for seq, event in enumerate(events, 1):
        event["seq"] = seq
        event["ts"] = 1_700_000_000_000 + seq
    return events


def _python_costs(events: list[dict[str, Any]]) -> tuple[float, float]:
    """Seconds per event of the first and the last tenth, best of RUNS."""
    first = last = float("inf")
    for run in range(RUNS + 1):
        state = folding.initial_state()
        fold = folding.fold
        blocks = []
        for start in range(0, len(events), BLOCK):
            begin = time.perf_counter()
            for event in events[start : start + BLOCK]:
                fold(state, event)
            blocks.append((time.perf_counter() - begin) / BLOCK)
        if run:  # the first run warms up
            tenth = len(blocks) // 10
            first = min(first, statistics.median(blocks[:tenth]))
            last = min(last, statistics.median(blocks[-tenth:]))
    return first, last


def _typescript_costs(events_file: Path, work: Path) -> tuple[float, float, Any]:
    """Like ``_python_costs``, and the TypeScript fold's final snapshot."""
    bundle, snapshot_file = work / "fold_bench.mjs", work / "fold-snapshot.json"
    subprocess.run(
        [
            *(str(ESBUILD), str(TS_BENCH), "--bundle", "--platform=node", "--format=esm"),
            *("--log-level=warning", f"--outfile={bundle}"),
        ],
        check=True,
    )
    out = subprocess.run(
        ["node", str(bundle), str(events_file), str(RUNS), str(BLOCK), str(snapshot_file)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    costs = json.loads(out)
    return costs["first"], costs["last"], json.loads(snapshot_file.read_text())


def _row(name: str, figure: str, first: float, last: float) -> Row:
    ratio = last / first
    return Row(
        name,
        figure,
        f"last 10%: {fmt(last * 1e6, 'µs/event')}",
        f"first 10%: {fmt(first * 1e6, 'µs/event')}",
        ratio,
        f"ratio <= {TARGET}",
        ratio <= TARGET,
    )


def run(ctx: Context) -> list[Row]:
    events = mixed_events(ctx.sizes.fold_events)
    events_file = ctx.work / "fold-events.json"
    events_file.write_text(json.dumps(events))
    ts_first, ts_last, ts_snapshot = _typescript_costs(events_file, ctx.work)
    py_first, py_last = _python_costs(events)
    # Both folds must agree before their speed means anything.
    state = folding.initial_state()
    for event in events:
        folding.fold(state, event)
    assert ts_snapshot == folding.snapshot(state), "the two folds disagree"
    name = f"3 fold cost, {len(events):,} mixed events"
    return [
        _row(name, "TypeScript fold (node)", ts_first, ts_last),
        _row(name, "Python fold", py_first, py_last),
    ]
