// How long a frame's paint may take steps of streamed text, from what frames cost. A
// frame's task is its steps plus what they cause: the layout that follows the scroll to
// the end, style, paint, layerizing. In JupyterLab that part took 10-35 ms a frame of a
// 200,000-chunk answer after 8-10 ms of steps, tasks of 50-70 ms; a fixed step budget
// cannot know it, so the budget is what a frame's task may take less what the frames
// before it cost beyond their steps.

/**
 * A frame's task, steps and all, should take about this long (ms): under half the 50 ms
 * bar, as the layout after the steps varies from frame to frame (2-25 ms in JupyterLab).
 */
export const FRAME_TASK_MS = 24;
/** The steps' budget when the frames cost little else (ms). */
export const MAX_STEPS_MS = 14;
/** The steps' budget however costly frames are (ms): an answer must still go on. */
export const MIN_STEPS_MS = 2;
/** The budget before any frame was measured (ms). */
export const FIRST_STEPS_MS = 10;

/** One frame's steps: until when they may go on, and what the frame says of its cost. */
export interface Frame {
  readonly until: number;
  /** The steps are done: what the frame does from here on is its cost beyond them. */
  stepped(): void;
  /** The frame was painted (a task queued in it runs now): its task is measured. */
  painted(): void;
}

export class FrameBudget {
  /** What a frame costs beyond its steps (ms), as the frames measured so far say. */
  private extra = FRAME_TASK_MS - FIRST_STEPS_MS;

  /** `clock`: milliseconds, read at each call (performance.now by default). */
  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** The steps' budget of the next frame (ms). */
  get ms(): number {
    return Math.min(MAX_STEPS_MS, Math.max(MIN_STEPS_MS, FRAME_TASK_MS - this.extra));
  }

  /** A frame starts now. */
  begin(): Frame {
    const start = this.clock();
    let steps = 0;
    return {
      until: start + this.ms,
      stepped: () => {
        steps = this.clock() - start;
      },
      painted: () => this.measured(Math.max(0, this.clock() - start - steps)),
    };
  }

  /**
   * A frame cost `extra` ms beyond its steps. A costlier frame counts at once, a cheaper
   * one half, so one cheap frame does not undo the budget a costly one set.
   */
  private measured(extra: number): void {
    this.extra = extra >= this.extra ? extra : (this.extra + extra) / 2;
  }
}
