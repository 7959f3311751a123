// The steps' budget of a frame, from what the frames before it cost beyond their steps.
import { describe, expect, it } from "vitest";
import {
  FIRST_STEPS_MS,
  FRAME_TASK_MS,
  FrameBudget,
  MAX_STEPS_MS,
  MIN_STEPS_MS,
} from "../src/frame_budget";

/** A budget on a clock that moves only when told. */
function setup() {
  let now = 1000;
  const budget = new FrameBudget(() => now);
  /** One frame: `steps` ms of steps, then `extra` ms of the rest of its task and paint. */
  const frame = (steps: number, extra: number): number => {
    const f = budget.begin();
    const until = f.until - now;
    now += steps;
    f.stepped();
    now += extra;
    f.painted();
    now += 5; // idle until the next frame: not the frame's cost
    return until;
  };
  return { budget, frame };
}

describe("frame budget", () => {
  it("starts at its first budget and gives each frame until its start plus the budget", () => {
    const { budget, frame } = setup();
    expect(budget.ms).toBe(FIRST_STEPS_MS);
    expect(frame(FIRST_STEPS_MS, FRAME_TASK_MS - FIRST_STEPS_MS)).toBe(FIRST_STEPS_MS);
    expect(budget.ms).toBe(FIRST_STEPS_MS);
  });

  it("leaves the steps what a frame's task may take less what frames cost beyond them", () => {
    const { budget, frame } = setup();
    frame(10, 18);
    expect(budget.ms).toBe(FRAME_TASK_MS - 18);
    // Costly frames (a long layout after the steps): the least budget, at once.
    frame(7, 40);
    expect(budget.ms).toBe(MIN_STEPS_MS);
  });

  it("grows the budget again over cheap frames, up to its most, half the way a frame", () => {
    const { budget, frame } = setup();
    frame(10, 40);
    expect(budget.ms).toBe(MIN_STEPS_MS);
    frame(2, 0);
    // One cheap frame after a costly one: half the way, not all of it.
    expect(budget.ms).toBe(FRAME_TASK_MS - 20);
    frame(2, 0);
    expect(budget.ms).toBe(FRAME_TASK_MS - 10);
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) seen.push(frame(budget.ms, 1));
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(budget.ms).toBe(MAX_STEPS_MS);
  });

  it("counts a frame's cost from its own start, whatever frames began in between", () => {
    let now = 0;
    const budget = new FrameBudget(() => now);
    const first = budget.begin();
    now += 3;
    first.stepped();
    // A second frame starts before the first one's paint is measured.
    const second = budget.begin();
    now += 20;
    first.painted();
    expect(budget.ms).toBe(FRAME_TASK_MS - 20);
    // The second one's 20 ms were all steps: it cost nothing beyond them.
    second.stepped();
    second.painted();
    expect(budget.ms).toBe(FRAME_TASK_MS - 10);
  });
});
