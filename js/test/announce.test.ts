// @vitest-environment jsdom
// What a screen reader hears: agent messages once, in sentence-sized pieces, never per chunk.
import { afterEach, describe, expect, it } from "vitest";
import { BEHIND_MAX, nextPiece, PIECE_MAX, spoken } from "../src/announce";
import { translator } from "../src/i18n";
import { ChatView } from "../src/view";
import { chunk, ev, recorder } from "./helpers";

/** Every piece `nextPiece` gives for `text` read as it grows by `step` characters. */
function pieces(text: string, step: number): string[] {
  const said: string[] = [];
  let from = 0;
  for (let end = step; end < text.length + step; end += step) {
    const done = end >= text.length;
    const shown = text.slice(0, Math.min(end, text.length));
    for (let piece = nextPiece(shown, from, done); piece !== null; ) {
      said.push(shown.slice(piece[0], piece[1]));
      from = piece[1];
      piece = nextPiece(shown, from, done);
    }
  }
  return said;
}

describe("nextPiece", () => {
  it("speaks whole sentences as they complete, and the rest when the message is done", () => {
    const text =
      "The first sentence is long enough to be spoken. A second one follows it, long enough too! " +
      "And a last one without an end";
    const said = pieces(text, 3);
    expect(said.join("")).toBe(text);
    expect(said).toEqual([
      "The first sentence is long enough to be spoken. ",
      "A second one follows it, long enough too! ",
      "And a last one without an end",
    ]);
  });

  it("waits for a sentence's end (a number's point is none), or cuts a long run at a space", () => {
    expect(nextPiece("Pi is 3.14159 and more words follow here, then", 0, false)).toBeNull();
    const run = "word ".repeat(200);
    const [start, end] = nextPiece(run, 0, false) ?? [0, 0];
    expect(start).toBe(0);
    expect(end).toBeLessThanOrEqual(PIECE_MAX);
    expect(run.slice(start, end).endsWith(" ")).toBe(true);
    expect(pieces(run, 7).join("")).toBe(run);
  });

  it("skips what ran too far ahead of speech", () => {
    const text = "x ".repeat(BEHIND_MAX);
    const piece = nextPiece(text, 0, false);
    expect(piece?.[0]).toBe(text.length - PIECE_MAX);
  });

  it("reads Markdown without its markers", () => {
    expect(spoken("## Result\n\nThe answer is **42** in  `x`.\n```python\nx = 42\n```")).toEqual([
      "Result",
      "The answer is 42 in x.",
      "x = 42",
    ]);
  });
});

let view: ChatView | undefined;
afterEach(() => view?.dispose());

describe("the view's live regions", () => {
  it("add at most twice a 50-chunk answer's length while it streams, and say it once", () => {
    view = new ChatView({
      t: translator("en"),
      request: recorder().request,
      schedule: () => () => {},
    });
    document.body.append(view.el);
    view.setConnected(true);
    view.apply([ev({ kind: "agent_status", status: "ready", agent: "Demo" })], true);
    view.flush();
    const live = (node: Node | null): boolean => {
      const element = node instanceof Element ? node : node?.parentElement;
      const region = element?.closest(
        "[aria-live]:not([aria-live=off]), [role=status], [role=alert], [role=log]:not([aria-live=off])",
      );
      return region != null;
    };
    let added = 0;
    const count = (records: MutationRecord[]): void => {
      for (const record of records) {
        if (record.type === "characterData" && live(record.target)) {
          added += record.target.textContent?.length ?? 0;
        }
        for (const node of record.addedNodes)
          if (live(node)) added += node.textContent?.length ?? 0;
      }
    };
    const observer = new MutationObserver(count);
    observer.observe(view.el, { subtree: true, childList: true, characterData: true });
    view.apply([ev({ kind: "turn_started", prompt: "slow" })], false);
    view.flush();
    const text = Array.from({ length: 50 }, (_, i) => `tick ${i} `).join("");
    for (let i = 0; i < 50; i++) {
      view.apply([chunk(`tick ${i} `)], false);
      view.flush();
    }
    const transcript = view.el.querySelector(".acpnb-transcript");
    expect(transcript?.getAttribute("aria-busy")).toBe("true");
    view.apply([ev({ kind: "turn_ended", stopReason: "end_turn" })], false);
    view.flush();
    count(observer.takeRecords());
    observer.disconnect();
    expect(transcript?.getAttribute("aria-busy")).toBe("false");
    expect(added).toBeGreaterThanOrEqual(text.trim().length);
    expect(added).toBeLessThanOrEqual(2 * text.length);
    const words = view.el.querySelector("[aria-live=polite]");
    expect(words?.textContent).toBe(text.trim());
  });
});
