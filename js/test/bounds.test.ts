// @vitest-environment jsdom
// What keeps a hostile file's rendering short: big diffs folded and built when opened,
// long plain text in pieces, agent names cut.
import { describe, expect, it } from "vitest";
import { FOLD_TERMINAL_MAX } from "../src/contracts";
import { fold, initialState, snapshot } from "../src/fold";
import { agentName } from "../src/header";
import { translator } from "../src/i18n";
import { BreakingText, SECTION } from "../src/longtext";
import { renderToolContent } from "../src/tools";

const t = translator("en");

function lines(n: number): string {
  return Array.from({ length: n }, (_, i) => `line ${i}`).join("\n");
}

function diff(oldText: string | null, newText: string): HTMLElement {
  const box = document.createElement("div");
  box.append(renderToolContent([{ type: "diff", path: "a.py", oldText, newText }], t));
  return box;
}

describe("a big diff", () => {
  it("is folded and built only when opened", () => {
    const box = diff(null, lines(999));
    expect(box.querySelector(".acpnb-diff-body")).toBeNull();
    const fold = box.querySelector("details") as HTMLDetailsElement;
    expect(fold.querySelector("summary")?.textContent).toBe("Show the diff (999 lines)");
    fold.open = true;
    fold.dispatchEvent(new Event("toggle"));
    expect(box.querySelectorAll(".acpnb-diff-add")).toHaveLength(999);
    fold.dispatchEvent(new Event("toggle"));
    expect(box.querySelectorAll(".acpnb-diff-body")).toHaveLength(1);
  });

  it("shows a bounded part of itself when opened: its first lines, each cut", () => {
    const box = diff("x\n", `${"y".repeat(2_000_000)}\n${lines(5000)}`);
    const fold = box.querySelector("details") as HTMLDetailsElement;
    fold.open = true;
    fold.dispatchEvent(new Event("toggle"));
    const body = box.querySelector(".acpnb-diff-body") as HTMLElement;
    expect(body.childElementCount).toBe(2001);
    expect(body.textContent?.length).toBeLessThan(200_000);
    expect(body.lastElementChild?.textContent).toMatch(/more lines not shown/);
  });

  it("stays as it was when small", () => {
    expect(diff("a\n", "b\n").querySelector(".acpnb-diff-body")?.textContent).toBe(
      "@@ -1,1 +1,1 @@\n-a\n+b\n",
    );
  });
});

describe("long plain text", () => {
  it("goes on in sections of at most SECTION characters, the text unchanged", () => {
    const box = document.createElement("div");
    const text = new BreakingText(box);
    // An emoji across the first section's end stays whole.
    const long = `${"a".repeat(SECTION - 1)}😀${"b c ".repeat(120_000)}`;
    for (let i = 0; i < long.length; i += 50_000) text.extend(long.slice(0, i + 50_000));
    expect(box.textContent).toBe(long);
    const sections = [...box.querySelectorAll(".acpnb-section")];
    expect(sections.length).toBeGreaterThan(long.length / SECTION - 2);
    for (const one of sections) {
      const part = one.textContent ?? "";
      expect(part.length).toBeLessThanOrEqual(SECTION);
      // No box starts or ends inside a surrogate pair.
      expect(/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(part)).toBe(false);
    }
    // The first box ends at SECTION (no space near it), with the emoji whole.
    const own = [...box.childNodes].filter((node) => !sections.includes(node as Element));
    expect(own.map((node) => node.textContent).join("")).toBe(long.slice(0, SECTION + 1));
  });

  it("is one box while short", () => {
    const box = document.createElement("div");
    new BreakingText(box).extend("hello");
    expect(box.innerHTML).toBe("hello");
  });
});

it("cuts an agent's name", () => {
  const state = initialState();
  state.agent.name = "n".repeat(2_000_000);
  expect(agentName(state, t).length).toBe(200);
});

describe("a terminal's output", () => {
  it("keeps its end and counts the cut, linear in the lines", () => {
    const state = initialState();
    const update = (seq: number, u: Record<string, unknown>): void => {
      fold(state, { kind: "update", seq, update: { toolCallId: "b", ...u } } as never);
    };
    update(1, { sessionUpdate: "tool_call", _meta: { terminal_info: { terminal_id: "t" } } });
    const started = performance.now();
    for (let n = 0; n < 100_000; n++) {
      const data = `line ${String(n).padStart(6, "0")}\n`;
      update(n + 2, {
        sessionUpdate: "tool_call_update",
        _meta: { terminal_output_delta: { data } },
      });
    }
    expect(performance.now() - started).toBeLessThan(5000);
    const term = snapshot(state).toolCalls.b?.terminal;
    expect(term?.output.length).toBe(FOLD_TERMINAL_MAX);
    expect(term?.output.endsWith("line 099999\n")).toBe(true);
    expect(term?.cut).toBe(100_000 * 12 - FOLD_TERMINAL_MAX);
    // The snapshot is a copy: later output does not change it.
    update(200_000, {
      sessionUpdate: "tool_call_update",
      _meta: { terminal_output_delta: { data: "x" } },
    });
    expect(term?.output.endsWith("line 099999\n")).toBe(true);
  });
});
