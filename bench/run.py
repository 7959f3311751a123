"""Runs every benchmark and prints one table: ``.venv/bin/python bench/run.py [--quick]``.

Each figure is printed with its reference, measured in the same run, and the ratio
between them; the exit status is 1 when any target is missed. ``bench/run.py peers``
(opt-in, never part of the default run) sets acp_notebook beside jupyter-ai-acp-client.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import (  # the repository root is importable from here on
    browser,
    concurrency,
    fold_cost,
    latency,
    many_chats,
    memory,
    notebook,
    notebook_edits,
    notebook_open,
    notebook_tools,
    peers,
    queue_latency,
    resync,
    throughput,
    tools_flood,
)
from bench.common import FULL, QUICK, Context, Row, print_table, workdir

BENCHMARKS: dict[str, Callable[[Context], list[Row]]] = {
    "throughput": throughput.run,
    "latency": latency.run,
    "fold": fold_cost.run,
    "memory": memory.run,
    "concurrency": concurrency.run,
    "browser": browser.run,
    "notebook": notebook.run,
    "many_chats": many_chats.run,
    "notebook_tools": notebook_tools.run,
    "notebook_open": notebook_open.run,
    "resync": resync.run,
    "notebook_edits": notebook_edits.run,
    "tools_flood": tools_flood.run,
    "queue": queue_latency.run,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for development")
    parser.add_argument(
        "only", nargs="*", metavar="NAME", help=f"only these: {', '.join(BENCHMARKS)}; or peers"
    )
    parser.add_argument("--chunks", type=int, help=f"peers: answer size (default {peers.CHUNKS:,})")
    parser.add_argument("--runs", type=int, default=3, help="peers: runs per system (default 3)")
    parser.add_argument(
        "--case",
        default="",
        metavar="TEXT",
        help="browser: only its rows whose name contains TEXT (e.g. 'JupyterLab, 200,000')",
    )
    args = parser.parse_args()
    unknown = set(args.only) - BENCHMARKS.keys() - {"peers"}
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    sizes = QUICK if args.quick else FULL
    if "peers" in args.only:
        if len(args.only) > 1:
            parser.error("peers runs on its own")
        chunks = args.chunks or (peers.QUICK_CHUNKS if args.quick else peers.CHUNKS)
        with workdir() as work:
            ctx = Context(sizes, work)
            try:
                return peers.run(ctx, chunks, args.runs)
            finally:
                ctx.close()
    rows: list[Row] = []
    with workdir() as work:
        ctx = Context(sizes, work, args.case)
        try:
            for name, bench in BENCHMARKS.items():
                if args.only and name not in args.only:
                    continue
                print(f"running {name}…", file=sys.stderr, flush=True)
                try:
                    rows += bench(ctx)
                except Exception as exc:
                    traceback.print_exc()
                    rows.append(
                        Row(name, "error", f"{type(exc).__name__}: {exc}"[:80], "", None, "", False)
                    )
        finally:
            ctx.close()
    print_table(rows)
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
