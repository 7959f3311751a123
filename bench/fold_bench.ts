// The TypeScript half of benchmark 3 (see fold_cost.py), bundled with esbuild and run by
// node: `node fold_bench.mjs EVENTS.json RUNS BLOCK SNAPSHOT.json`. Prints the seconds per
// event of the first and the last tenth (the median of their blocks, best of RUNS after
// one warm-up run) as JSON, and writes the final snapshot for the Python side to compare.

import { readFileSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import type { StreamEvent } from "../js/src/contracts";
import { fold, initialState, snapshot } from "../js/src/fold";

const [eventsFile, runsArg, blockArg, snapshotFile] = process.argv.slice(2);
if (!eventsFile || !runsArg || !blockArg || !snapshotFile) {
  throw new Error("usage: fold_bench.mjs EVENTS.json RUNS BLOCK SNAPSHOT.json");
}
const events = JSON.parse(readFileSync(eventsFile, "utf8")) as StreamEvent[];
const block = Number(blockArg);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const upper = sorted[mid] as number;
  return sorted.length % 2 ? upper : ((sorted[mid - 1] as number) + upper) / 2;
}

let first = Number.POSITIVE_INFINITY;
let last = Number.POSITIVE_INFINITY;
let state = initialState();
for (let run = 0; run <= Number(runsArg); run++) {
  state = initialState();
  const blocks: number[] = [];
  for (let start = 0; start < events.length; start += block) {
    const begin = performance.now();
    const end = Math.min(events.length, start + block);
    for (let i = start; i < end; i++) fold(state, events[i] as StreamEvent);
    blocks.push((performance.now() - begin) / 1000 / block);
  }
  if (run > 0) {
    const tenth = Math.floor(blocks.length / 10);
    first = Math.min(first, median(blocks.slice(0, tenth)));
    last = Math.min(last, median(blocks.slice(-tenth)));
  }
}
writeFileSync(snapshotFile, JSON.stringify(snapshot(state)));
process.stdout.write(JSON.stringify({ first, last }));
