// @vitest-environment jsdom
// A tool call's terminal in its card: colours through ansi_up, output appended as it
// comes, bounded to its end with a line saying what went, the exit said.
import { describe, expect, it } from "vitest";
import type { TerminalView } from "../src/contracts";
import { translator } from "../src/i18n";
import { LONG_OUTPUT, PANE_MAX, TerminalPane } from "../src/terminal";

const t = translator("en");

function term(output: string, more: Partial<TerminalView> = {}): TerminalView {
  return { terminalId: "b", output, cut: 0, exited: false, exitCode: null, signal: null, ...more };
}

describe("a terminal pane", () => {
  it("shows colours and escapes the text", () => {
    const pane = new TerminalPane(t);
    pane.update(term("\x1b[31m<b>red</b>\x1b[0m plain\n"));
    const screen = pane.el.querySelector(".acpnb-terminal-screen") as HTMLElement;
    expect(screen.textContent).toBe("<b>red</b> plain\n");
    expect(screen.querySelector("span[style*='color']")?.textContent).toBe("<b>red</b>");
    expect(screen.querySelector("b")).toBeNull();
  });

  it("appends only what is new, and a colour goes on across chunks", () => {
    const pane = new TerminalPane(t);
    const screen = pane.el.querySelector(".acpnb-terminal-screen") as HTMLElement;
    pane.update(term("\x1b[32mone\n"));
    const first = screen.firstElementChild;
    pane.update(term("\x1b[32mone\ntwo\n"));
    expect(screen.firstElementChild).toBe(first);
    expect(screen.textContent).toBe("one\ntwo\n");
    expect(screen.querySelectorAll("span[style*='color']")).toHaveLength(2);
  });

  it("keeps its end and says what went, here or in the fold", () => {
    const pane = new TerminalPane(t);
    const line = "0123456789\n";
    let output = "";
    for (let n = 0; n < (2 * PANE_MAX) / line.length; n += 100) {
      output += line.repeat(100);
      pane.update(term(output));
    }
    const screen = pane.el.querySelector(".acpnb-terminal-screen") as HTMLElement;
    const shown = screen.textContent?.length ?? 0;
    expect(shown).toBeLessThanOrEqual(PANE_MAX);
    const note = pane.el.querySelector(".acpnb-terminal-note") as HTMLElement;
    expect(note.hidden).toBe(false);
    expect(note.textContent).toBe(`${output.length - shown} earlier characters not shown`);
    // The fold cut more than came since: what it kept is shown, the rest counted.
    pane.update(term("x".repeat(10), { cut: 10 * PANE_MAX }));
    expect(screen.textContent).toBe("x".repeat(10));
    expect(note.textContent).toBe(`${10 * PANE_MAX} earlier characters not shown`);
  });

  it("shows replaced output and the exit", () => {
    const pane = new TerminalPane(t);
    pane.update(term("old output\n"));
    pane.update(term("new\n", { exited: true, exitCode: 2 }));
    const screen = pane.el.querySelector(".acpnb-terminal-screen") as HTMLElement;
    expect(screen.textContent).toBe("new\n");
    const exit = pane.el.querySelector(".acpnb-terminal-exit") as HTMLElement;
    expect(exit.hidden).toBe(false);
    expect(exit.textContent).toBe("exit code 2");
    pane.update(term("a longer output, replaced\n"));
    expect(screen.textContent).toBe("a longer output, replaced\n");
  });

  it("keeps a line that comes in pieces in one block, whole lines in blocks of their own", () => {
    const pane = new TerminalPane(t);
    const screen = pane.el.querySelector(".acpnb-terminal-screen") as HTMLElement;
    pane.update(term("one\ntw"));
    pane.update(term("one\ntwo\nthr"));
    pane.update(term("one\ntwo\nthree\n"));
    const blocks = [...screen.children].map((block) => block.textContent);
    expect(blocks).toEqual(["one\n", "two\n", "three\n"]);
  });

  it("draws long output at most every so often, and its end once it has exited", async () => {
    const pane = new TerminalPane(t);
    const screen = pane.el.querySelector(".acpnb-terminal-screen") as HTMLElement;
    const long = `${"x".repeat(LONG_OUTPUT)}\n`;
    pane.update(term(`${long}first\n`));
    pane.update(term(`${long}first\nsecond\n`));
    expect(screen.textContent?.endsWith("first\n")).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(screen.textContent?.endsWith("second\n")).toBe(true);
    pane.update(term(`${long}first\nsecond\nthird\n`));
    pane.update(term(`${long}first\nsecond\nthird\nlast\n`, { exited: true, exitCode: 0 }));
    expect(screen.textContent?.endsWith("third\nlast\n")).toBe(true);
  });
});
