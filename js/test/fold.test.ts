// The TypeScript fold against the shared vectors (tests/test_fold.py runs the same ones).
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { StreamEvent } from "../src/contracts";
import { type ChatState, fold, initialState, snapshot } from "../src/fold";

interface Vector {
  name: string;
  events: StreamEvent[];
  expected: Record<string, unknown>;
  /** Parts of the snapshot after the first `after` events. */
  checkpoints?: { after: number; expected: Record<string, unknown> }[];
}

const dir = fileURLToPath(new URL("../../tests/vectors/fold/", import.meta.url));
const files = readdirSync(dir)
  .filter((name) => name.endsWith(".json"))
  .sort();
const vectors = files.map(
  (name) => [name, JSON.parse(readFileSync(dir + name, "utf8")) as Vector] as const,
);

function run(events: StreamEvent[]): ChatState {
  let state = initialState();
  for (const event of events) state = fold(state, event);
  return state;
}

describe("fold vectors", () => {
  it("has a vector for every rule", () => {
    expect(vectors.length).toBeGreaterThanOrEqual(12);
  });

  it.each(vectors)("%s", (_file, vector) => {
    const checkpoints = new Map((vector.checkpoints ?? []).map((c) => [c.after, c.expected]));
    let state = initialState();
    vector.events.forEach((event, index) => {
      state = fold(state, event);
      const want = checkpoints.get(index + 1);
      if (want !== undefined) {
        const snap = snapshot(state) as unknown as Record<string, unknown>;
        const part = Object.fromEntries(Object.keys(want).map((key) => [key, snap[key]]));
        expect(part, `after ${index + 1}`).toEqual(want);
      }
    });
    const json = JSON.parse(JSON.stringify(snapshot(state)));
    // Plain JSON (nothing undefined, no Map), in the spec's key order.
    expect(snapshot(state)).toStrictEqual(json);
    expect(Object.keys(json)).toEqual(Object.keys(vector.expected));
    expect(json).toStrictEqual(vector.expected);
  });
});

describe("fold", () => {
  it("mutates and returns its input", () => {
    const state = initialState();
    const event: StreamEvent = {
      kind: "update",
      seq: 1,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } },
    };
    expect(fold(state, event)).toBe(state);
  });

  it("keeps request ids like __proto__ as plain data", () => {
    const snap = snapshot(
      run([
        { kind: "permission_request", seq: 1, requestId: "__proto__", toolCall: {}, options: [] },
      ]),
    );
    expect(Object.keys(snap.permissions)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(snap.permissions)).toBe(Object.prototype);
  });

  it("stays linear over 200,000 chunks of one message", () => {
    const n = 200_000;
    const events: StreamEvent[] = [];
    for (let seq = 1; seq <= n; seq++) {
      const update =
        seq % 1000 === 0
          ? { sessionUpdate: "usage_update", used: seq, size: n }
          : {
              sessionUpdate: "agent_message_chunk",
              content: { type: "text", text: "ab" },
              messageId: "m",
            };
      events.push({ kind: "update", seq, ts: seq, update });
    }
    const started = performance.now();
    const state = run(events);
    const text = (state.items[0] as { text: string }).text;
    expect(state.items).toHaveLength(1);
    expect(text.length).toBe(2 * (n - n / 1000));
    // Generous: a copy per chunk would take tens of seconds here.
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
