// The TypeScript fold against the shared vectors (tests/test_fold.py runs the same ones).
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { FoldSnapshot, StreamEvent } from "../src/contracts";
import {
  type ChatState,
  fold,
  initialState,
  MAX_ITEMS,
  MAX_WEIGHT,
  restore,
  snapshot,
} from "../src/fold";

/** tests/vectors/fold_vector.schema.json */
interface Vector {
  name: string;
  events: StreamEvent[];
  expected: Record<string, unknown>;
  /** Parts of the snapshot after the first `after` events. */
  checkpoints?: { after: number; expected: Record<string, unknown> }[];
  /** The bounds of the initial state. */
  maxItems?: number;
  maxWeight?: number;
  /** A snapshot to start from instead of the initial state. */
  restore?: FoldSnapshot;
  /** Fold this many events, restore their snapshot, fold the rest: the same expected. */
  restoreAfter?: number;
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

/** The vector format (its keys are those of Vector). */
const format = JSON.parse(readFileSync(`${dir}../fold_vector.schema.json`, "utf8")) as {
  properties: Record<string, unknown>;
};

function start(vector: Vector): ChatState {
  const bounds = [vector.maxItems ?? MAX_ITEMS, vector.maxWeight ?? MAX_WEIGHT] as const;
  // restore() keeps the snapshot's objects: a copy leaves the vector as read.
  const from = vector.restore === undefined ? undefined : structuredClone(vector.restore);
  return from === undefined ? initialState(...bounds) : restore(from, ...bounds);
}

describe("fold vectors", () => {
  it("has a vector for every rule", () => {
    expect(vectors.length).toBeGreaterThanOrEqual(12);
  });

  it("reads every key of every vector", () => {
    // Every key of Vector, which tsc holds to the interface, is every key of the format.
    const read: Record<keyof Vector, true> = {
      name: true,
      events: true,
      expected: true,
      checkpoints: true,
      maxItems: true,
      maxWeight: true,
      restore: true,
      restoreAfter: true,
    };
    expect(Object.keys(read).sort()).toEqual(Object.keys(format.properties).sort());
    const known = new Set(Object.keys(format.properties));
    for (const [file, vector] of vectors) {
      expect(
        Object.keys(vector).filter((key) => !known.has(key)),
        file,
      ).toEqual([]);
    }
  });

  it.each(vectors.filter(([, v]) => v.restoreAfter !== undefined))(
    "%s, restored midway",
    (_file, vector) => {
      const cut = vector.restoreAfter as number;
      let state = start(vector);
      for (const event of vector.events.slice(0, cut)) state = fold(state, event);
      const saved = JSON.parse(JSON.stringify(snapshot(state))) as FoldSnapshot;
      state = restore(saved, vector.maxItems ?? MAX_ITEMS, vector.maxWeight ?? MAX_WEIGHT);
      for (const event of vector.events.slice(cut)) state = fold(state, event);
      expect(JSON.parse(JSON.stringify(snapshot(state)))).toStrictEqual(vector.expected);
    },
  );

  it.each(vectors)("%s", (_file, vector) => {
    const checkpoints = new Map((vector.checkpoints ?? []).map((c) => [c.after, c.expected]));
    let state = start(vector);
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

function chunkEvent(seq: number, text: string, messageId: string): StreamEvent {
  const content = { type: "text", text };
  return {
    kind: "update",
    seq,
    update: { sessionUpdate: "agent_message_chunk", messageId, content },
  };
}

describe("fold bounds (as acp_notebook/fold.py)", () => {
  it("keeps at most MAX_ITEMS items, the newest, and says how many went", () => {
    const state = initialState();
    let seq = 0;
    fold(state, {
      kind: "permission_request",
      seq: ++seq,
      requestId: "open",
      toolCall: {},
      options: [],
    });
    for (let n = 0; n < MAX_ITEMS; n++) {
      const update = { sessionUpdate: "tool_call", toolCallId: `t${n}`, title: "x" };
      fold(state, { kind: "update", seq: ++seq, update });
      fold(state, chunkEvent(++seq, `answer ${n}`, `m${n}`));
    }
    expect(state.items.length).toBeLessThanOrEqual(MAX_ITEMS);
    const snap = snapshot(state);
    // The pending question stays first; the rest are the newest items.
    expect(snap.items[0]).toEqual({ type: "permission", requestId: "open" });
    expect(snap.items.at(-1)).toEqual({
      type: "agent",
      messageId: `m${MAX_ITEMS - 1}`,
      text: `answer ${MAX_ITEMS - 1}`,
    });
    const dropped = 2 * MAX_ITEMS + 1 - snap.items.length;
    expect(snap.dropped).toEqual({ items: dropped, characters: 0 });
    // A dropped item's tool call goes with it.
    expect(Object.keys(snap.toolCalls)).toHaveLength(
      snap.items.filter((i) => i.type === "tool").length,
    );
    expect(state.toolCalls.has("t0")).toBe(false);
    expect(Object.keys(snapshot(initialState()))).not.toContain("dropped");
  });

  it("is bounded in characters: a pending card stays, a long message keeps its end", () => {
    const state = initialState(MAX_ITEMS, 100_000);
    fold(state, { kind: "turn_started", seq: 1, turn: 1, prompt: "go" });
    fold(state, {
      kind: "elicitation_request",
      seq: 2,
      requestId: "q",
      message: "m".repeat(60_000),
      fields: [],
    });
    fold(state, {
      kind: "update",
      seq: 3,
      update: { sessionUpdate: "tool_call", toolCallId: "c" },
    });
    // A tool call's output replaced a hundred times counts once.
    for (let seq = 4; seq < 104; seq++) {
      const content = [{ type: "content", content: { type: "text", text: "o".repeat(500) } }];
      const update = { sessionUpdate: "tool_call_update", toolCallId: "c", content };
      fold(state, { kind: "update", seq, update });
    }
    expect(snapshot(state).dropped).toBeUndefined();
    for (let seq = 104; seq < 404; seq++) {
      fold(state, chunkEvent(seq, "a".repeat(999) + String(seq % 10), "m")); // 300,000 characters
    }
    const snap = snapshot(state);
    expect(snap.items.map((i) => i.type)).toEqual(["elicitation", "agent"]);
    const text = (snap.items[1] as { text: string }).text;
    expect(text.startsWith("…")).toBe(true);
    expect(text.endsWith(`${"a".repeat(999)}3`)).toBe(true);
    expect(text.length).toBeLessThanOrEqual(100_000);
    expect(snap.dropped?.items).toBe(2);
    // Each cut counts the ellipsis of the cut before it.
    const cut = (snap.dropped?.characters ?? 0) - (300_000 - text.length + 1);
    expect(cut).toBeGreaterThanOrEqual(0);
    expect(cut).toBeLessThan(100);
    expect(state.internal.weight).toBeLessThanOrEqual(100_000);
    expect(snap.elicitations.q?.outcome).toBeNull();
  });

  it("never drops a pending card, whatever it weighs, until it settles", () => {
    const state = initialState(MAX_ITEMS, 10_000);
    const options = [{ optionId: "a", name: "x".repeat(20_000), kind: "allow_once" }];
    fold(state, { kind: "permission_request", seq: 1, requestId: "p", toolCall: {}, options });
    for (let seq = 2; seq < 40; seq++) fold(state, chunkEvent(seq, "b".repeat(1000), `m${seq}`));
    expect(state.items[0]).toEqual({ type: "permission", requestId: "p" });
    fold(state, { kind: "permission_resolved", seq: 40, requestId: "p", outcome: "selected" });
    fold(state, chunkEvent(41, "c", "last"));
    expect(state.permissions.has("p")).toBe(false);
    expect(state.items.map((i) => i.type)).not.toContain("permission");
  });

  it("restores a snapshot's weight and dropped count, and goes on counting", () => {
    const events: StreamEvent[] = [
      { kind: "permission_request", seq: 1, requestId: "p", toolCall: {}, options: [] },
      { kind: "permission_request", seq: 2, requestId: "s", toolCall: {}, options: [] },
      { kind: "permission_resolved", seq: 3, requestId: "s", outcome: "selected" },
    ];
    for (let seq = 4; seq <= 30; seq++) events.push(chunkEvent(seq, "d".repeat(1000), `m${seq}`));
    const bounded = initialState(MAX_ITEMS, 20_000);
    for (const event of events) fold(bounded, event);
    const before = snapshot(bounded);
    expect(before.dropped?.items).toBeGreaterThan(0);
    const state = restore(JSON.parse(JSON.stringify(before)));
    expect(state.dropped).toEqual(before.dropped);
    expect(state.internal.weight).toBe(bounded.internal.weight);
    expect([...state.internal.pending]).toEqual(["permission:p"]);
    // A saved snapshot is anyone's: what is not an item, or bookkeeping, is left out.
    const odd = { ...before, items: [null, 3, ...before.items], internal: null } as unknown;
    expect(restore(odd as typeof before).internal.weight).toBe(bounded.internal.weight);
  });
});
