// @vitest-environment jsdom
// The chat view: incremental, frame-batched rendering of the folded stream.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AttachmentSummary, ElicitationField, StreamEvent } from "../src/contracts";
import { CHAT_GONE_CLOSED, CHAT_GONE_KERNEL } from "../src/contracts";
import { fold, initialState, MAX_ITEMS, snapshot } from "../src/fold";
import { isolate, type Locale, translator } from "../src/i18n";
import { ChatView, type ViewOptions } from "../src/view";
import { chunk, elicitation, ev, recorder, settle } from "./helpers";

const HOSTILE = '<img src=x onerror="alert(1)">';

function setup(locale: Locale = "en") {
  const rec = recorder();
  let frames = 0;
  const view = new ChatView({
    t: translator(locale),
    request: rec.request,
    schedule: () => {
      frames += 1;
      return () => {};
    },
  });
  document.body.append(view.el);
  view.setConnected(true);
  view.flush();
  return { view, ...rec, frames: () => frames };
}

/** A view whose frames wait in `frames` until the test runs them. */
function framed(options: Partial<ViewOptions> = {}): { view: ChatView; frames: (() => void)[] } {
  const frames: (() => void)[] = [];
  const view = new ChatView({
    t: translator("en"),
    request: recorder().request,
    schedule: (callback) => {
      frames.push(callback);
      return () => {
        const at = frames.indexOf(callback);
        if (at >= 0) frames.splice(at, 1);
      };
    },
    ...options,
  });
  current = view;
  document.body.append(view.el);
  return { view, frames };
}

function ready(): StreamEvent {
  return ev({ kind: "agent_status", status: "ready", agent: "Claude" });
}

function q<T extends Element = HTMLElement>(view: ChatView, selector: string): T {
  const found = view.el.querySelector<T>(selector);
  if (found === null) throw new Error(`no ${selector}`);
  return found;
}

let current: ChatView | undefined;

beforeEach(() => {
  document.body.replaceChildren();
});

afterEach(() => {
  current?.dispose();
  vi.useRealTimers();
});

describe("streaming", () => {
  it("folds 20,000 chunks into one frame and grows the same nodes in place", () => {
    const { view, frames } = setup();
    current = view;
    view.apply([ready(), ev({ kind: "turn_started", prompt: "count" })], false);
    const before = frames();
    let expected = "";
    for (let i = 0; i < 20_000; i++) {
      expected += `${i % 10}`;
      view.apply([chunk(`${i % 10}`)], false);
    }
    expect(frames()).toBe(before);
    // One unbroken word of 20,000 characters is shown in a few steps, a frame each.
    for (let step = 0; step < 10; step++) view.flush();
    const agent = q(view, ".acpnb-agent");
    const user = q(view, ".acpnb-user");
    expect(agent.textContent?.trim()).toBe(expected);

    const observer = new MutationObserver(() => {});
    observer.observe(view.el, {
      childList: true,
      subtree: true,
      characterData: true,
      attributes: true,
    });
    for (let i = 0; i < 100; i++) view.apply([chunk("!")], false);
    for (let step = 0; step < 10; step++) view.flush();
    const changed = observer.takeRecords().map((r) => r.target);
    observer.disconnect();
    // Only the growing message was touched: no other item, header or composer node.
    expect(changed.length).toBeGreaterThan(0);
    expect(
      changed
        .filter((node) => !agent.contains(node))
        .map((n) => (n as Element).className ?? n.nodeName),
    ).toEqual([]);
    expect(q(view, ".acpnb-agent")).toBe(agent);
    expect(q(view, ".acpnb-user")).toBe(user);
    expect(agent.textContent?.trim()).toBe(expected + "!".repeat(100));
  });

  it("takes as many steps of a long answer in a frame as its time budget allows", () => {
    // About 110 KB of one paragraph: more than ten steps of the Markdown stream.
    const text = Array.from({ length: 20_000 }, (_, i) => `${i} `).join("");
    const answer = (): string | undefined => q(view, ".acpnb-agent").textContent?.trim();
    const { view } = setup();
    current = view;
    const clock = vi.spyOn(performance, "now");
    try {
      // Every reading of the clock is past the budget: one step a frame, as before.
      let now = 0;
      clock.mockImplementation(() => (now += 1000));
      view.apply([ready(), ev({ kind: "turn_started", prompt: "count" }), chunk(text)], false);
      view.flush();
      expect(answer()?.length).toBeLessThan(text.length / 4);
      // No time passes: the rest is shown in the next frame.
      clock.mockImplementation(() => now);
      view.flush();
      expect(answer()).toBe(text.trim());
    } finally {
      clock.mockRestore();
    }
  });

  it("cuts a long answer at each frame's budget, goes on in the next, loses and reorders nothing", () => {
    // About 1 MB of one paragraph: some 130 steps of the Markdown stream.
    const text = Array.from({ length: 150_000 }, (_, i) => `${i} `).join("");
    const painted: (() => void)[] = [];
    const { view, frames } = framed({ afterPaint: (callback) => painted.push(callback) });
    view.setConnected(true);
    view.flush();
    // Every reading of the clock takes a millisecond: a step (one reading) costs one.
    let now = 0;
    const clock = vi.spyOn(performance, "now").mockImplementation(() => (now += 1));
    const shown = (): string => view.el.querySelector(".acpnb-agent")?.textContent?.trim() ?? "";
    /** Runs the next frame, then its paint taking `paint` ms; returns the characters it added. */
    const frame = (paint: number): number => {
      const before = shown().length;
      frames.shift()?.();
      now += paint;
      for (const callback of painted.splice(0)) callback();
      const after = shown();
      // Always the answer's start, whole and in order.
      expect(text.startsWith(after)).toBe(true);
      return after.length - before;
    };
    try {
      view.apply([ready(), ev({ kind: "turn_started", prompt: "count" }), chunk(text)], false);
      const first = frame(0);
      expect(first).toBeGreaterThan(0);
      // A costly paint: the next frame takes fewer steps.
      frame(40);
      const afterCostly = frame(0);
      expect(afterCostly).toBeLessThan(first / 2);
      // Cheap frames: more steps again, more than the first frame's.
      const cheap: number[] = [];
      while (frames.length > 0 && shown().length < text.trim().length) cheap.push(frame(0));
      expect(Math.max(...cheap)).toBeGreaterThan(first);
      expect(shown()).toBe(text.trim());
      // Done: no frame waits, no paint is measured.
      frames.shift()?.();
      expect(frames).toHaveLength(0);
      expect(painted).toHaveLength(0);
    } finally {
      clock.mockRestore();
    }
  });

  it("reads only the new part of a growing answer or thought, never the text before it", () => {
    // Checking that a 1 MB answer starts with the text shown before took V8 milliseconds a
    // frame (the fold's text is a rope): a growing item's text is trusted to only grow.
    const { view } = setup();
    current = view;
    view.apply([ready(), ev({ kind: "turn_started", prompt: "count" })], false);
    const startsWith = vi.spyOn(String.prototype, "startsWith");
    try {
      let text = "";
      for (const kind of ["agent_thought_chunk", "agent_message_chunk"]) {
        text = "";
        for (let i = 0; i < 100; i++) {
          const words = Array.from({ length: 100 }, (_, j) => `${i * 100 + j} `).join("");
          text += words;
          view.apply([chunk(words, kind)], false);
          view.flush();
        }
      }
      for (let step = 0; step < 100; step++) view.flush();
      const compared = startsWith.mock.calls.map(([prefix]) => String(prefix).length);
      expect(Math.max(0, ...compared)).toBeLessThan(20_000);
      expect(q(view, ".acpnb-thought-text").textContent).toBe(text);
      expect(q(view, ".acpnb-agent").textContent?.trim()).toBe(text.trim());
    } finally {
      startsWith.mockRestore();
    }
  }, 30_000);

  it("paints a resync from the server's snapshot as it paints the events it folds", () => {
    const tool = (id: string, status: string) =>
      ev({ kind: "update", update: { sessionUpdate: "tool_call_update", toolCallId: id, status } });
    const ended = [
      ready(),
      ev({ kind: "turn_started", prompt: "run" }),
      ev({ kind: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "ls" } }),
      tool("t1", "in_progress"),
      tool("t1", "completed"),
      chunk("done"),
      ev({ kind: "turn_ended", stopReason: "end_turn" }),
    ];
    const after = [
      ev({ kind: "turn_started", prompt: "more" }),
      chunk("still ", "agent_message_chunk", "m2"),
    ];
    let state = initialState();
    for (const event of ended) state = fold(state, event);
    const folded = setup().view;
    folded.apply(after, true, snapshot(state));
    folded.apply([chunk("going", "agent_message_chunk", "m2")], false);
    folded.flush();
    const replayed = setup().view;
    replayed.apply([...ended, ...after], true);
    replayed.apply([chunk("going", "agent_message_chunk", "m2")], false);
    replayed.flush();
    const transcript = (view: ChatView) => q(view, ".acpnb-transcript").innerHTML;
    expect(transcript(folded)).toBe(transcript(replayed));
    expect(folded.el.querySelectorAll(".acpnb-agent")).toHaveLength(2);
    expect(q(folded, ".acpnb-status").dataset.status).toBe("ready");
    folded.dispose();
    replayed.dispose();
  });

  it("appends new items without touching the old ones", () => {
    const { view } = setup();
    current = view;
    view.apply([ready(), ev({ kind: "turn_started", prompt: "hi" }), chunk("first")], false);
    view.flush();
    const first = q(view, ".acpnb-agent");
    view.apply([ev({ kind: "turn_ended", stopReason: "end_turn" })], false);
    view.apply(
      [ev({ kind: "turn_started", prompt: "again" }), chunk("second", "agent_message_chunk", "m2")],
      false,
    );
    view.flush();
    const agents = view.el.querySelectorAll(".acpnb-agent");
    expect(agents).toHaveLength(2);
    expect(agents[0]).toBe(first);
    expect(agents[1]?.textContent).toBe("second\n");
  });

  it("puts the items of a long chat into pages, in order, and starts over on a resync", () => {
    const { view } = setup();
    current = view;
    const turns = (count: number): StreamEvent[] =>
      Array.from({ length: count }, (_, i) => [
        ev({ kind: "turn_started", prompt: `q${i}` }),
        chunk(`a${i}`, "agent_message_chunk", `m${i}`),
        ev({ kind: "turn_ended", stopReason: "end_turn" }),
      ]).flat();
    view.apply([ready(), ...turns(30)], false);
    view.flush();
    const transcript = q(view, ".acpnb-transcript");
    const pages = [...transcript.children];
    // 60 items: two full pages and the rest in a third; nothing outside a page.
    expect(pages.map((page) => [page.className, page.children.length])).toEqual([
      ["acpnb-page", 24],
      ["acpnb-page", 24],
      ["acpnb-page", 12],
    ]);
    const texts = [...transcript.querySelectorAll(".acpnb-item")].map((n) => n.textContent?.trim());
    expect(texts).toEqual(Array.from({ length: 30 }, (_, i) => [`q${i}`, `a${i}`]).flat());
    view.apply([ready(), ...turns(1)], true);
    view.flush();
    expect([...transcript.children].map((page) => page.children.length)).toEqual([2]);
  });

  it("shows a %%agent cell's turn only, by its place in the whole chat, and the rest on a click", () => {
    const { view, frames } = framed({ fromItem: 2 });
    const turn = (n: number): StreamEvent[] => [
      ev({ kind: "turn_started", prompt: `q${n}` }),
      ev({ kind: "agent_error", message: `a${n}` }),
    ];
    const texts = (): (string | undefined)[] =>
      [...view.el.querySelectorAll(".acpnb-transcript .acpnb-item")].map((n) =>
        n.textContent?.trim(),
      );
    // A page reload: the whole history comes as a reset, the cell's turn after the first.
    view.apply([ready(), ...turn(1), ...turn(2)], true);
    view.setConnected(true);
    for (const frame of frames.splice(0)) frame();
    expect(texts()).toEqual(["q2", "a2"]);
    const earlier = q(view, ".acpnb-earlier");
    expect(earlier.hidden).toBe(false);
    expect(earlier.textContent).toContain("other messages are not shown here");
    view.apply(turn(3), false);
    view.flush();
    expect(texts()).toEqual(["q2", "a2", "q3", "a3"]);
    // Its turn ended after its fourth item: the next turn is not its.
    view.endAt(4);
    view.apply(turn(4), false);
    view.flush();
    expect(texts()).toEqual(["q2", "a2"]);
    q<HTMLButtonElement>(view, ".acpnb-whole-chat").click();
    view.flush();
    expect(texts()).toEqual(["q1", "a1", "q2", "a2", "q3", "a3", "q4", "a4"]);
    expect(earlier.hidden).toBe(true);
  });

  it("counts the items the fold dropped when it finds a turn's place", () => {
    const { view } = framed({ fromItem: 4 });
    let state = initialState(4, 1_000_000);
    for (const event of [
      ev({ kind: "turn_started", prompt: "q1" }),
      ev({ kind: "agent_error", message: "a1" }),
      ev({ kind: "turn_started", prompt: "q2" }),
      ev({ kind: "agent_error", message: "a2" }),
      ev({ kind: "turn_started", prompt: "q3" }),
      ev({ kind: "agent_error", message: "a3" }),
    ]) {
      state = fold(state, event);
    }
    // The fold kept the last 4 of 6 items: the view's fifth item is the third kept.
    const kept = snapshot(state);
    expect(kept.dropped?.items).toBe(2);
    view.apply([], true, kept);
    view.flush();
    const texts = [...view.el.querySelectorAll(".acpnb-transcript .acpnb-item")].map((n) =>
      n.textContent?.trim(),
    );
    expect(texts).toEqual(["q3", "a3"]);
  });

  it("removes the items the bounded fold dropped, keeps a pending card, and says so", () => {
    const { view } = setup();
    current = view;
    const permission = ev({
      kind: "permission_request",
      requestId: "p1",
      toolCall: { title: "Run ls" },
      options: [{ optionId: "y", name: "Allow", kind: "allow_once" }],
    });
    view.apply([ready(), permission], false);
    view.flush();
    const turns = 2600; // 5,200 items: over MAX_ITEMS
    // The view has built most items when the fold drops the first ones.
    for (const [start, end] of [
      [0, 2400],
      [2400, turns],
    ] as const) {
      const events = [];
      for (let i = start; i < end; i++) {
        events.push(ev({ kind: "turn_started", prompt: `q${i}` }));
        // Plain items: building thousands of Markdown views is slow in jsdom.
        events.push(ev({ kind: "agent_error", message: `a${i}` }));
      }
      view.apply(events, false);
      view.flush();
    }
    const transcript = q(view, ".acpnb-transcript");
    const items = [...transcript.querySelectorAll(".acpnb-item")];
    expect(items.length).toBeLessThanOrEqual(MAX_ITEMS);
    expect(items[0]?.querySelector(".acpnb-card-permission")).not.toBeNull();
    const texts = items.slice(1).map((n) => n.textContent?.trim());
    const all = Array.from({ length: turns }, (_, i) => [`q${i}`, `a${i}`]).flat();
    const dropped = all.length - texts.length;
    expect(dropped).toBeGreaterThan(0);
    expect(texts).toEqual(all.slice(dropped));
    expect([...transcript.children].every((page) => page.childElementCount > 0)).toBe(true);
    const note = q(view, ".acpnb-dropped");
    expect(note.hidden).toBe(false);
    expect(note.textContent).toContain(`${dropped.toLocaleString()} earlier items`);
    // New items still go at the end.
    view.apply([ev({ kind: "turn_started", prompt: "last" })], false);
    view.flush();
    expect(transcript.querySelectorAll(".acpnb-item")[items.length]?.textContent?.trim()).toBe(
      "last",
    );
  }, 30_000); // 5,200 items in jsdom: seconds on a loaded machine

  it("shows the end of a message the bounded fold cut, from its start", () => {
    const { view } = setup();
    current = view;
    view.apply([ready(), ev({ kind: "turn_started", prompt: "go" })], false);
    // A thought, not an answer: a Markdown view of megabytes is slow in jsdom.
    const part = (n: number) =>
      chunk(`${"x".repeat(1 << 20)}part${n} `, "agent_thought_chunk", "t");
    view.apply([part(0)], false);
    view.flush();
    view.apply([1, 2, 3, 4, 5, 6, 7, 8].map(part), false);
    view.flush();
    const text = q(view, ".acpnb-thought-text").textContent ?? "";
    expect(text.startsWith("…")).toBe(true);
    expect(text.endsWith("part8 ")).toBe(true);
    expect(text).not.toContain("part0");
    expect(view.el.querySelectorAll(".acpnb-thought")).toHaveLength(1);
    expect(q(view, ".acpnb-dropped").textContent).toContain("1 earlier items");
  }, 30_000); // 9 MiB of text through jsdom: 4 s alone, over 5 s on a loaded box

  it("builds a resync's last pages in its frame and the earlier ones in the frames after", () => {
    const { view, frames } = framed();
    const turn = (i: number): StreamEvent[] => [
      ev({ kind: "turn_started", prompt: `q${i}` }),
      chunk(`a${i}`, "agent_message_chunk", `m${i}`),
      ev({ kind: "turn_ended", stopReason: "end_turn" }),
    ];
    const start = ready();
    const turns = Array.from({ length: 50 }, (_, i) => turn(i)).flat();
    const runFrame = (): void => frames.shift()?.();
    const transcript = q(view, ".acpnb-transcript");
    const texts = (): (string | undefined)[] =>
      [...transcript.querySelectorAll(".acpnb-item")].map((n) => n.textContent?.trim());
    const sizes = (): number[] => [...transcript.children].map((page) => page.children.length);
    const all = Array.from({ length: 50 }, (_, i) => [`q${i}`, `a${i}`]).flat();

    view.apply([start, ...turns], true);
    runFrame();
    // 100 items: the last 32 from the start of their page (48), then the rest.
    expect(texts()).toEqual(all.slice(48));
    expect(sizes()).toEqual([24, 24, 4]);
    for (let n = 0; n < 10 && frames.length > 0; n++) runFrame();
    expect(frames).toHaveLength(0);
    expect(texts()).toEqual(all);
    expect(sizes()).toEqual([24, 24, 24, 24, 4]);

    // A question still open far up the history is built in the first frame too.
    const again = [ready(), ...Array.from({ length: 16 }, (_, i) => turn(i)).flat()];
    again.push(
      ev({
        kind: "permission_request",
        requestId: "p1",
        toolCall: { title: "Run ls" },
        options: [{ optionId: "y", name: "Allow", kind: "allow_once" }],
      }),
    );
    for (let i = 16; i < 50; i++) again.push(...turn(i));
    view.apply(again, true);
    runFrame();
    // The card is item 32 (after turn 15): built from item 24 on.
    expect(view.el.querySelectorAll(".acpnb-card-permission")).toHaveLength(1);
    expect(transcript.querySelectorAll(".acpnb-item")).toHaveLength(101 - 24);
    // flush() paints every item at once.
    view.flush();
    expect(transcript.querySelectorAll(".acpnb-item")).toHaveLength(101);
  });

  it("skips an update that is not an object, as the fold does, and keeps going", () => {
    const { view } = setup();
    current = view;
    const bad = ev({ kind: "update", update: null }) as unknown as StreamEvent;
    view.apply([ready(), ev({ kind: "turn_started", prompt: "hi" }), bad, chunk("after")], false);
    view.flush();
    expect(q(view, ".acpnb-agent").textContent).toBe("after\n");
  });

  it("renders agent and user Markdown sanitized, and error and tool text as text", () => {
    const { view } = setup();
    current = view;
    view.apply(
      [
        ready(),
        ev({ kind: "turn_started", prompt: HOSTILE }),
        chunk(`**bold** ${HOSTILE} [x](javascript:alert(1))`),
        ev({
          kind: "update",
          update: { sessionUpdate: "tool_call", toolCallId: "t1", title: HOSTILE, kind: "read" },
        }),
        ev({ kind: "turn_ended", error: HOSTILE }),
      ],
      false,
    );
    view.flush();
    expect(view.el.querySelector("img")).toBeNull();
    expect(q(view, ".acpnb-agent strong").textContent).toBe("bold");
    expect(q(view, ".acpnb-agent a").hasAttribute("href")).toBe(false);
    expect(q(view, ".acpnb-user").textContent?.trim()).toBe(HOSTILE);
    expect(q(view, ".acpnb-tool-title").textContent).toBe(HOSTILE);
    expect(q(view, ".acpnb-error").textContent).toBe(HOSTILE);
  });
});

describe("transcript items", () => {
  it("labels a thought with its duration and keeps it collapsed", () => {
    const { view } = setup();
    current = view;
    view.apply([ready(), ev({ kind: "turn_started", prompt: "p" })], false);
    view.apply([{ ...chunk("hmm", "agent_thought_chunk", "t"), ts: 10_000 } as StreamEvent], false);
    view.flush();
    const thought = q<HTMLDetailsElement>(view, "details.acpnb-thought");
    expect(thought.open).toBe(false);
    expect(thought.querySelector("summary")?.textContent).toBe("Thinking…");
    view.apply([{ ...chunk("answer"), ts: 13_000 } as StreamEvent], false);
    view.flush();
    expect(thought.querySelector("summary")?.textContent).toBe("Thought for 3s");
    expect(thought.querySelector(".acpnb-thought-text")?.textContent).toBe("hmm");
  });

  it("renders a prompt's Markdown: a code fence as code, its typed line breaks kept", () => {
    const { view } = setup();
    current = view;
    const prompt = "Why does this fail?\nSee below.\n\n```python\nx = 1 / 0\n```";
    view.apply([ready(), ev({ kind: "turn_started", prompt })], false);
    view.flush();
    const user = q(view, ".acpnb-user");
    expect(user.querySelector("pre code")?.textContent).toBe("x = 1 / 0\n");
    expect(user.querySelector("p")?.textContent).toBe("Why does this fail?\nSee below.");
    expect(user.textContent).not.toContain("```");
    // No widget buttons on a prompt's code (they are for the agent's code).
    expect(user.querySelector("button")).toBeNull();
  });

  it("shows a prompt's attachments under its text: thumbnails and chips, live and saved", () => {
    const thumbnail = "data:image/jpeg;base64,/9j/4AAQ";
    const attachments: AttachmentSummary[] = [
      { type: "image", label: "plot.png · PNG 40x30", mimeType: "image/png", thumbnail },
      { type: "resource", label: "df · DataFrame 2x2", mimeType: "text/csv" },
    ];
    const begun = ready();
    const started = ev({ kind: "turn_started", prompt: "look", attachments });
    const { view, request } = setup();
    current = view;
    view.apply([begun, started], false);
    view.flush();
    const user = q(view, ".acpnb-user");
    expect(user.querySelector("img.acpnb-thumbnail")?.getAttribute("src")).toBe(thumbnail);
    expect(user.querySelectorAll(".acpnb-attachment")).toHaveLength(2);
    expect(user.textContent).toBe("look\nplot.png · PNG 40x30📎df · DataFrame 2x2");
    view.flush(); // a later frame updates the text again: the chips stay
    expect(user.querySelectorAll(".acpnb-attachment")).toHaveLength(2);

    // A saved snapshot keeps the labels without the image data: icon and label.
    const saved = new ChatView({ t: translator("en"), request });
    const labels = attachments.map(({ thumbnail: _, ...rest }) => rest);
    const restarted = ev({ kind: "turn_started", prompt: "look", attachments: labels });
    saved.paint(snapshot(fold(fold(initialState(), begun), restarted)));
    saved.flush();
    saved.dispose();
    const chips = saved.el.querySelectorAll(".acpnb-user .acpnb-attachment");
    expect([...chips].map((chip) => chip.textContent)).toEqual([
      "🖼plot.png · PNG 40x30",
      "📎df · DataFrame 2x2",
    ]);
  });

  it("shows a tool call's status, kind, locations, unified diff and raw output", () => {
    const { view } = setup();
    current = view;
    view.apply(
      [
        ready(),
        ev({
          kind: "update",
          update: {
            sessionUpdate: "tool_call",
            toolCallId: "t1",
            title: "Edit a.py",
            kind: "edit",
            status: "pending",
            locations: [{ path: "/w/a.py", line: 3 }],
          },
        }),
      ],
      false,
    );
    view.flush();
    const tool = q(view, ".acpnb-tool");
    expect(tool.querySelector(".acpnb-badge")?.textContent).toBe("pending");
    view.apply(
      [
        ev({
          kind: "update",
          update: {
            sessionUpdate: "tool_call_update",
            toolCallId: "t1",
            status: "completed",
            content: [
              { type: "diff", path: "/w/a.py", oldText: "a\nb\nc\n", newText: "a\nB\nc\n" },
              { type: "diff", path: "/w/new.py", oldText: null, newText: "x\n" },
              { type: "content", content: { type: "text", text: "done" } },
            ],
            rawOutput: { ok: true },
          },
        }),
      ],
      false,
    );
    view.flush();
    expect(q(view, ".acpnb-tool")).toBe(tool);
    expect(tool.querySelector(".acpnb-badge")?.textContent).toBe("completed");
    expect(tool.querySelector(".acpnb-tool-kind")?.textContent).toBe("edit");
    expect(tool.querySelector(".acpnb-tool-locations")?.textContent).toBe("/w/a.py:3");
    const diffs = tool.querySelectorAll(".acpnb-diff-body");
    expect(diffs[0]?.textContent).toBe("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    expect(diffs[1]?.textContent).toBe("@@ -0,0 +1,1 @@\n+x\n");
    expect(tool.querySelectorAll(".acpnb-diff-path .acpnb-badge")[0]?.textContent).toBe("new file");
    expect(tool.querySelector(".acpnb-tool-text")?.textContent).toBe("done");
    const raw = tool.querySelector("details.acpnb-raw") as HTMLDetailsElement;
    expect(raw.open).toBe(false);
    expect(raw.querySelector("pre")?.textContent).toBe('{\n  "ok": true\n}');
  });

  it("folds a tool's text output, and keeps the fold as the user left it", () => {
    const { view } = setup();
    current = view;
    const call = (status: string, text: string, first = false): StreamEvent =>
      ev({
        kind: "update",
        update: {
          sessionUpdate: first ? "tool_call" : "tool_call_update",
          toolCallId: "t1",
          title: "Run `ls`",
          kind: "execute",
          status,
          content: [{ type: "content", content: { type: "text", text } }],
        },
      });
    view.apply([ready(), call("in_progress", "a.txt\n", true)], false);
    view.flush();
    const tool = q(view, ".acpnb-tool");
    // One short line: shown as it is.
    expect(tool.querySelector(".acpnb-tool-output")).toBeNull();
    expect(tool.querySelector(".acpnb-tool-text")?.textContent).toBe("a.txt\n");
    expect(tool.querySelector(".acpnb-tool-title code")?.textContent).toBe("ls");
    view.apply([call("in_progress", "a.txt\nb.txt\nc.txt\n")], false);
    view.flush();
    const fold = tool.querySelector(".acpnb-tool-output") as HTMLDetailsElement;
    expect(fold.open).toBe(false);
    expect(fold.querySelector("summary")?.textContent).toBe("Output (3 lines)");
    expect(fold.querySelector(".acpnb-tool-text")?.textContent).toBe("a.txt\nb.txt\nc.txt\n");
    fold.open = true;
    view.apply([call("completed", "a.txt\nb.txt\nc.txt\nd.txt\n")], false);
    view.flush();
    const again = tool.querySelector(".acpnb-tool-output") as HTMLDetailsElement;
    expect(again.open).toBe(true);
    expect(again.querySelector("summary")?.textContent).toBe("Output (4 lines)");
  });

  it("shows the plan as a todo panel with counts", () => {
    const { view } = setup("zh");
    current = view;
    const plan = q(view, ".acpnb-plan");
    expect(plan.hidden).toBe(true);
    view.apply(
      [
        ev({
          kind: "update",
          update: {
            sessionUpdate: "plan",
            entries: [
              { content: "alpha", priority: "high", status: "completed" },
              { content: "beta", priority: "low", status: "pending" },
            ],
          },
        }),
      ],
      false,
    );
    view.flush();
    expect(plan.hidden).toBe(false);
    expect(plan.querySelector("summary")?.textContent).toBe("计划已完成 1 · 待办 1 (1/2)");
    // The mark is hidden from screen readers; words say the status instead.
    expect([...plan.querySelectorAll("li")].map((li) => li.textContent)).toEqual([
      "✓已完成: alpha",
      "○待办: beta",
    ]);
    for (const mark of plan.querySelectorAll(".acpnb-plan-mark")) {
      expect(mark.getAttribute("aria-hidden")).toBe("true");
    }
  });
});

describe("header and composer", () => {
  it("shows status, usage and cost, and a Stop button while a turn runs", async () => {
    const { view, bodies } = setup();
    current = view;
    view.apply(
      [
        ready(),
        ev({ kind: "turn_started", prompt: "p" }),
        ev({
          kind: "update",
          update: {
            sessionUpdate: "usage_update",
            used: 122_000,
            size: 200_000,
            cost: { amount: 0.0123, currency: "USD" },
          },
        }),
      ],
      false,
    );
    view.flush();
    expect(q(view, ".acpnb-agent-name").textContent).toBe("Claude");
    expect(q(view, ".acpnb-status").textContent).toBe("thinking");
    expect(q(view, ".acpnb-usage").textContent).toBe("context 61% full · $0.01");
    expect(q(view, ".acpnb-usage").title).toBe(
      "122,000 of 200,000 tokens of the context window used",
    );
    const stop = q<HTMLButtonElement>(view, ".acpnb-stop");
    expect(stop.hidden).toBe(false);
    stop.click();
    await settle();
    expect(bodies).toEqual([{ type: "chat:cancel" }]);
    view.apply([elicitation("q1", [])], false);
    view.flush();
    expect(q(view, ".acpnb-status").textContent).toBe("waiting for you");
    view.apply([ev({ kind: "elicitation_resolved", requestId: "q1", outcome: "declined" })], false);
    view.apply([ev({ kind: "turn_ended", stopReason: "end_turn" })], false);
    view.flush();
    expect(q(view, ".acpnb-status").textContent).toBe("idle");
    expect(stop.hidden).toBe(true);
  });

  it("offers the modes and config options as selectors", async () => {
    const { view, bodies } = setup();
    current = view;
    view.apply(
      [
        ev({
          kind: "agent_status",
          status: "ready",
          modes: {
            currentModeId: "default",
            availableModes: [
              { id: "default", name: "Manual" },
              { id: "plan", name: HOSTILE },
            ],
          },
          configOptions: [
            {
              id: "mode",
              name: "Mode",
              category: "mode",
              type: "select",
              currentValue: "default",
              options: [],
            },
            {
              id: "model",
              name: "Model",
              type: "select",
              currentValue: "a",
              options: [
                { value: "a", name: "Model A" },
                { value: "b", name: "Model B" },
              ],
            },
          ],
        }),
      ],
      false,
    );
    view.flush();
    const selects = view.el.querySelectorAll<HTMLSelectElement>(".acpnb-select");
    expect(selects).toHaveLength(2);
    const [mode, model] = selects as unknown as [HTMLSelectElement, HTMLSelectElement];
    expect(mode.value).toBe("default");
    expect(mode.options[1]?.textContent).toBe(HOSTILE);
    mode.value = "plan";
    mode.dispatchEvent(new Event("change"));
    model.value = "b";
    model.dispatchEvent(new Event("change"));
    await settle();
    expect(bodies).toEqual([
      { type: "chat:set_mode", modeId: "plan" },
      { type: "chat:set_config", configId: "model", value: "b" },
    ]);
  });

  it("sends on Enter, keeps Shift+Enter for newlines, and disables once the agent exits", async () => {
    const { view, bodies, results } = setup();
    current = view;
    view.apply([ready()], false);
    view.flush();
    const input = q<HTMLTextAreaElement>(view, "textarea");
    input.value = "line 1";
    const shift = new KeyboardEvent("keydown", { key: "Enter", shiftKey: true, cancelable: true });
    input.dispatchEvent(shift);
    expect(shift.defaultPrevented).toBe(false);
    expect(bodies).toEqual([]);
    input.value = "line 1\nline 2";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", cancelable: true }));
    await settle();
    expect(bodies).toEqual([{ type: "chat:prompt", text: "line 1\nline 2" }]);
    expect(input.value).toBe("");
    results.push({ ok: false, code: "BUSY", detail: null });
    input.value = "again";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", cancelable: true }));
    await settle();
    expect(input.value).toBe("again");
    expect(q(view, ".acpnb-composer-error").textContent).toBe("Failed: the agent is busy");
    view.apply([ev({ kind: "agent_status", status: "exited", detail: "code 1" })], false);
    view.flush();
    expect(input.disabled).toBe(true);
    expect(q(view, ".acpnb-status").textContent).toBe(`exited: ${isolate("code 1")}`);
  });
});

describe("cards in the transcript", () => {
  const FIELD: ElicitationField = {
    name: "c",
    type: "enum",
    title: "C",
    options: [{ value: "a" }, { value: "b" }],
  };

  it("focuses a live card's first control, but not one re-sent by a resync", () => {
    const { view } = setup();
    current = view;
    q<HTMLTextAreaElement>(view, "textarea").focus();
    view.apply([ready(), elicitation("q1", [FIELD])], true);
    view.flush();
    expect(document.activeElement).toBe(q(view, "textarea"));
    view.apply([elicitation("q2", [FIELD])], false);
    view.flush();
    const cards = view.el.querySelectorAll(".acpnb-card-elicitation");
    expect(cards).toHaveLength(2);
    expect(document.activeElement).toBe(cards[1]?.querySelector("input"));
  });

  it("focuses a live permission card itself, never one of its buttons", () => {
    const { view } = setup();
    current = view;
    q<HTMLTextAreaElement>(view, "textarea").focus();
    view.apply(
      [
        ev({
          kind: "permission_request",
          requestId: "p9",
          toolCall: { title: "Run rm" },
          options: [{ optionId: "y", name: "Allow", kind: "allow_once" }],
        }),
      ],
      false,
    );
    view.flush();
    expect(document.activeElement).toBe(q(view, ".acpnb-card-permission"));
  });

  it("leaves the focus alone when it is outside the chat", () => {
    const { view } = setup();
    current = view;
    const elsewhere = document.createElement("input");
    document.body.append(elsewhere);
    elsewhere.focus();
    view.apply([elicitation("q5", [FIELD])], false);
    view.flush();
    expect(document.activeElement).toBe(elsewhere);
  });

  it("leaves a one-line remnant for a settled question and a settled permission", () => {
    const { view } = setup();
    current = view;
    view.apply(
      [
        ready(),
        elicitation("q1", [FIELD]),
        ev({
          kind: "permission_request",
          requestId: "p1",
          toolCall: { title: "Run ls" },
          options: [{ optionId: "y", name: "Allow", kind: "allow_once" }],
        }),
      ],
      false,
    );
    view.flush();
    expect(view.el.querySelectorAll(".acpnb-card")).toHaveLength(2);
    view.apply(
      [
        ev({ kind: "elicitation_resolved", requestId: "q1", outcome: "accepted" }),
        ev({ kind: "permission_resolved", requestId: "p1", outcome: "selected", optionId: "y" }),
      ],
      false,
    );
    view.flush();
    expect(view.el.querySelector(".acpnb-card-elicitation")).toBeNull();
    expect(view.el.querySelector(".acpnb-card")).toBeNull();
    const remnants = [...view.el.querySelectorAll(".acpnb-card-remnant")];
    expect(remnants.map((r) => r.textContent)).toEqual(["Answered", "Allowed"]);
  });

  it("keeps a pending card, and what the user entered, across a resync", () => {
    const { view } = setup();
    current = view;
    const history = [ready(), elicitation("q1", [FIELD])];
    view.apply(history, true);
    view.flush();
    const radio = q<HTMLInputElement>(view, "input[type=radio]");
    radio.click();
    view.apply(history, true);
    view.flush();
    expect(q(view, "input[type=radio]")).toBe(radio);
    expect(radio.checked).toBe(true);
  });

  it("counts down every second", () => {
    vi.useFakeTimers({ now: 0 });
    const { view } = setup();
    current = view;
    view.apply([elicitation("q1", [FIELD], { deadline: 120_000 })], false);
    view.flush();
    const timer = q(view, "[role=timer]");
    expect(timer.textContent).toBe("02:00 left");
    vi.advanceTimersByTime(1000);
    expect(timer.textContent).toBe("01:59 left");
    vi.advanceTimersByTime(60_000);
    expect(timer.textContent).toBe("00:59 left");
  });
});

describe("saved snapshot", () => {
  it("paints a snapshot until the live stream connects", () => {
    const rec = recorder();
    const view = new ChatView({
      t: translator("en"),
      request: rec.request,
      schedule: () => () => {},
    });
    current = view;
    let state = initialState();
    for (const e of [ready(), ev({ kind: "turn_started", prompt: "saved q" }), chunk("saved a")]) {
      state = fold(state, e);
    }
    view.paint(JSON.parse(JSON.stringify(snapshot(state))));
    view.flush();
    expect(q(view, ".acpnb-user").textContent).toBe("saved q\n");
    expect(q(view, ".acpnb-agent").textContent).toBe("saved a\n");
    expect(q(view, ".acpnb-status").textContent).toBe("connecting…");
    view.paint({ not: "a snapshot" });
    view.flush();
    expect(q(view, ".acpnb-user").textContent).toBe("saved q\n");
  });
});

describe("endedWithServer", () => {
  it("shows open questions as cancelled and the chat as exited, never silently lost", () => {
    const view = new ChatView({
      t: translator("en"),
      request: recorder().request,
      schedule: () => () => {},
    });
    view.apply(
      [
        { kind: "agent_status", seq: 1, status: "ready", agent: "demo" },
        { kind: "turn_started", seq: 2, turn: 1, prompt: "ask-user" },
        { kind: "elicitation_request", seq: 3, requestId: "r1", message: "Pick", fields: [] },
        {
          kind: "permission_request",
          seq: 4,
          requestId: "p1",
          toolCall: { title: "ls" },
          options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
        },
      ] as StreamEvent[],
      false,
    );
    view.flush();
    expect(view.el.querySelectorAll(".acpnb-card-elicitation")).toHaveLength(1);
    view.endedWithServer();
    view.flush();
    expect(view.el.querySelectorAll(".acpnb-card-elicitation")).toHaveLength(0);
    expect(view.el.textContent).toContain("questions still open were cancelled");
    expect(view.el.querySelector(".acpnb-status")?.textContent).toMatch(/^exited/);
    expect(view.el.querySelector("textarea")?.disabled).toBe(true);
  });
});

describe("how a chat ended, in words", () => {
  const open = (): ChatView => {
    const view = new ChatView({
      t: translator("en"),
      request: recorder().request,
      schedule: () => () => {},
    });
    view.apply(
      [
        { kind: "agent_status", seq: 1, status: "ready", agent: "demo" },
        { kind: "elicitation_request", seq: 2, requestId: "r1", message: "Pick", fields: [] },
      ] as StreamEvent[],
      false,
    );
    view.flush();
    return view;
  };
  const status = (view: ChatView) => view.el.querySelector(".acpnb-status")?.textContent;

  it("says closed for a chat someone closed, with no alarm", () => {
    const view = open();
    view.endedWithServer(CHAT_GONE_CLOSED);
    view.flush();
    expect(status(view)).toBe("closed");
    expect(view.el.querySelector(".acpnb-error")).toBeNull();
    expect(view.el.querySelector(".acpnb-card-remnant")?.textContent).toBe("Cancelled");
    expect(view.el.querySelector("textarea")?.disabled).toBe(true);
  });

  it.each([
    [CHAT_GONE_KERNEL, "this chat ended with its kernel; questions still open were cancelled"],
    [null, "this chat is no longer running; questions still open were cancelled"],
    ["something else", "this chat is no longer running; questions still open were cancelled"],
  ])("says what it knows of another end (%s)", (why, text) => {
    const view = open();
    view.endedWithServer(why);
    view.flush();
    expect(status(view)).toBe(`exited: \u2068${text}\u2069`);
    expect(view.el.querySelector(".acpnb-error")?.textContent).toBe(text);
  });
});

describe("a turn cut short", () => {
  it("says so at its end: Stopped, or the limit the agent met", () => {
    const { view } = setup();
    current = view;
    view.apply(
      [
        ready(),
        ev({ kind: "turn_started", prompt: "stream 2000" }),
        chunk("0 1 2", "agent_message_chunk", "m1"),
        ev({ kind: "turn_ended", stopReason: "cancelled" }),
        ev({ kind: "turn_started", prompt: "go on" }),
        chunk("3 4", "agent_message_chunk", "m2"),
        ev({ kind: "turn_ended", stopReason: "max_tokens" }),
        ev({ kind: "turn_started", prompt: "odd" }),
        ev({ kind: "turn_ended", stopReason: HOSTILE }),
        ev({ kind: "turn_started", prompt: "done" }),
        chunk("5", "agent_message_chunk", "m3"),
        ev({ kind: "turn_ended", stopReason: "end_turn" }),
      ],
      false,
    );
    view.flush();
    const items = [...view.el.querySelectorAll(".acpnb-item")].map((item) =>
      item.textContent?.trim(),
    );
    expect(items).toEqual([
      "stream 2000",
      "0 1 2",
      "Stopped",
      "go on",
      "3 4",
      "Stopped: the answer reached the agent's length limit",
      "odd",
      `Stopped (${HOSTILE})`,
      "done",
      "5",
    ]);
    expect(view.el.querySelector("img")).toBeNull();
  });
});

describe("URL question in the view", () => {
  const asked = (): StreamEvent =>
    ev({
      kind: "elicitation_request",
      requestId: "u1",
      message: "Sign in",
      fields: [],
      url: "https://example.com/login",
      host: "example.com",
    });
  const resolved = (outcome: string): StreamEvent =>
    ev({ kind: "elicitation_resolved", requestId: "u1", outcome });

  it("keeps an accepted card until the agent completes it", () => {
    const { view } = setup();
    current = view;
    view.apply([ready(), ev({ kind: "turn_started", prompt: "login" }), asked()], false);
    view.flush();
    expect(q(view, ".acpnb-link-host").textContent).toContain("example.com");
    view.apply([resolved("accepted")], false);
    view.flush();
    expect(q(view, ".acpnb-card-elicitation").textContent).toContain("Waiting for Claude");
    view.apply([resolved("completed")], false);
    view.flush();
    expect(view.el.querySelectorAll(".acpnb-card-elicitation")).toHaveLength(0);
  });

  it("shows an accepted card rebuilt from history, and ends it when the server is gone", () => {
    const { view } = setup();
    current = view;
    view.apply([ready(), asked(), resolved("accepted")], true);
    view.flush();
    expect(q(view, ".acpnb-card-elicitation").textContent).toContain("Waiting for Claude");
    view.endedWithServer();
    view.flush();
    expect(view.el.querySelectorAll(".acpnb-card-elicitation")).toHaveLength(0);
  });
});

describe("who may act", () => {
  const access = (share: "anyone" | null = null): StreamEvent =>
    ev({ kind: "access", owner: "alice", ownerName: "Alice", share });
  const card = (): StreamEvent =>
    ev({
      kind: "permission_request",
      requestId: "p1",
      toolCall: { title: "Run ls" },
      options: [{ optionId: "y", name: "Allow", kind: "allow_once" }],
    });

  it("tells a page that is not the owner, before any click, and offers it nothing", () => {
    const { view, bodies } = setup();
    current = view;
    const bob = { id: "bob", name: "Bob" };
    view.apply(
      [access(), ready(), ev({ kind: "turn_started", prompt: "ls" }), card()],
      true,
      undefined,
      bob,
    );
    view.flush();
    const allow = q<HTMLButtonElement>(view, ".acpnb-card-permission .acpnb-allow");
    expect(allow.disabled).toBe(true);
    expect(q(view, ".acpnb-card-locked").hidden).toBe(false);
    expect(q(view, ".acpnb-card-locked").textContent).toContain("Only Alice can answer");
    expect(q<HTMLTextAreaElement>(view, ".acpnb-composer-input").disabled).toBe(true);
    expect(q(view, ".acpnb-composer-locked").textContent).toContain("Only Alice");
    expect(q(view, ".acpnb-stop").hidden).toBe(true);
    expect(q(view, ".acpnb-share").hidden).toBe(true); // only the owner shares
    allow.click();
    expect(bodies).toHaveLength(0);

    // Shared: the same card is answerable, the notes go.
    view.apply([access("anyone")], false);
    view.flush();
    expect(allow.disabled).toBe(false);
    expect(q(view, ".acpnb-card-locked").hidden).toBe(true);
    expect(q<HTMLTextAreaElement>(view, ".acpnb-composer-input").disabled).toBe(false);
    expect(q(view, ".acpnb-stop").hidden).toBe(false);
  });

  it("gives the owner the share toggle, and a page nobody named (local mode) every control", () => {
    const owner = setup();
    current = owner.view;
    owner.view.apply([access(), ready()], true, undefined, { id: "alice", name: "Alice" });
    owner.view.flush();
    const toggle = q<HTMLInputElement>(owner.view, ".acpnb-share input");
    expect(q(owner.view, ".acpnb-share").hidden).toBe(false);
    expect(toggle.checked).toBe(false);
    toggle.checked = true;
    toggle.dispatchEvent(new Event("change"));
    expect(owner.bodies).toEqual([{ type: "chat:share", share: "anyone" }]);
    owner.view.dispose();

    const local = setup();
    current = local.view;
    local.view.apply([access(), ready(), ev({ kind: "turn_started", prompt: "ls" }), card()], true);
    local.view.flush();
    expect(q<HTMLButtonElement>(local.view, ".acpnb-allow").disabled).toBe(false);
    expect(q(local.view, ".acpnb-card-locked").hidden).toBe(true);
    expect(q(local.view, ".acpnb-share").hidden).toBe(true);
  });
});
