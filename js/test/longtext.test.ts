// @vitest-environment jsdom
// Long unbroken runs get a <wbr> every MAX_RUN characters; the text itself is unchanged.
import { describe, expect, it } from "vitest";
import {
  BreakingText,
  breakable,
  breakLongRuns,
  MAX_RUN,
  naturalBreak,
  SECTION,
  SECTION_MIN,
  splitRuns,
} from "../src/longtext";
import { renderMarkdown } from "../src/markdown";

/** The longest run of text between two break opportunities (<wbr> or white space). */
function longestRun(root: Node): number {
  let longest = 0;
  let run = 0;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ALL);
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    const block = ["WBR", "P", "PRE"].includes(node.nodeName);
    // A section of a long text is a block of its own (see SECTION).
    if (block || (node as Element).classList?.contains("acpnb-section")) run = 0;
    if (node.nodeType !== Node.TEXT_NODE) continue;
    for (const char of (node as Text).data) {
      run = /\s/.test(char) ? 0 : run + 1;
      longest = Math.max(longest, run);
    }
  }
  return longest;
}

const WORD = "QUJD".repeat(16_384); // 64 K characters, no break opportunity

describe("long runs", () => {
  it("cuts runs at MAX_RUN, never inside a surrogate pair", () => {
    const text = `${"a".repeat(MAX_RUN - 1)}😀${"b".repeat(10)} short`;
    const { pieces } = splitRuns(text);
    expect(pieces.join("")).toBe(text);
    expect(pieces[0]).toBe(`${"a".repeat(MAX_RUN - 1)}😀`);
    expect(splitRuns("short words only").pieces).toEqual(["short words only"]);
  });

  it("breaks a 64 K word in plain text, and the text stays the same", () => {
    const box = document.createElement("div");
    box.append(breakable(`before ${WORD} after`));
    expect(box.textContent).toBe(`before ${WORD} after`);
    expect(longestRun(box)).toBeLessThanOrEqual(MAX_RUN);
    expect(box.querySelectorAll("wbr").length).toBeGreaterThan(WORD.length / MAX_RUN - 2);
  });

  it("breaks long runs in Markdown (messages, links, inline code), not in code blocks", () => {
    const box = document.createElement("div");
    renderMarkdown(
      box,
      `${WORD}\n\n\`${WORD}\`\n\n[${WORD}](https://e.com)\n\n\`\`\`\n${WORD}\n\`\`\``,
    );
    const [para, code, link] = [...box.querySelectorAll("p")];
    for (const node of [para, code, link]) {
      expect(node?.textContent).toBe(WORD);
      expect(longestRun(node as Node)).toBeLessThanOrEqual(MAX_RUN);
    }
    expect(box.querySelector("pre")?.textContent).toBe(`${WORD}\n`);
    expect(box.querySelector("pre wbr")).toBeNull();
  });

  it("keeps runs bounded while text streams in chunks", () => {
    const box = document.createElement("div");
    const text = new BreakingText(box);
    let shown = "";
    for (let i = 0; i < WORD.length; i += 4096) {
      shown = `you: ${WORD.slice(0, i + 4096)}`;
      text.set(shown);
    }
    expect(box.textContent).toBe(shown);
    expect(longestRun(box)).toBeLessThanOrEqual(MAX_RUN);
    text.set("replaced");
    expect(box.innerHTML).toBe("replaced");
  });

  it("leaves <pre> text alone when breaking a tree in place", () => {
    const box = document.createElement("div");
    box.innerHTML = `<pre>${WORD}</pre><span>${WORD}</span>`;
    breakLongRuns(box);
    expect(box.querySelector("pre")?.childNodes).toHaveLength(1);
    expect(longestRun(box.querySelector("span") as Node)).toBeLessThanOrEqual(MAX_RUN);
  });

  it("ends a section where a line or a sentence ends, else at a space by SECTION", () => {
    expect(naturalBreak("one. Two", 0, 8)).toBe(5);
    expect(naturalBreak("a\nb", 0, 3)).toBe(2);
    expect(naturalBreak("3.5 km", 0, 6)).toBeNull();
    // Prose streamed in chunks: each box but the last ends after a sentence.
    const prose = "The agent read the file and found the bug. ".repeat(2000);
    const box = document.createElement("div");
    const text = new BreakingText(box);
    for (let i = 0; i < prose.length; i += 997) text.set(prose.slice(0, i + 997));
    expect(box.textContent).toBe(prose);
    const boxes = sections(box);
    expect(boxes.length).toBeGreaterThan(3);
    for (const one of boxes.slice(0, -1)) {
      expect(one.endsWith("bug. ")).toBe(true);
      expect(one.length).toBeGreaterThanOrEqual(SECTION_MIN);
      expect(one.length).toBeLessThanOrEqual(SECTION);
    }
    // Numbers have no sentence: a box ends at a space, no later than SECTION.
    const numbers = Array.from({ length: 20_000 }, (_, i) => `${i} `).join("");
    const other = document.createElement("div");
    new BreakingText(other).set(numbers);
    expect(other.textContent).toBe(numbers);
    for (const one of sections(other).slice(0, -1)) {
      expect(one.endsWith(" ")).toBe(true);
      expect(one.length).toBeLessThanOrEqual(SECTION);
    }
  });
});

/** The text of each box of a long text: the parent's own, then each section's. */
function sections(box: HTMLElement): string[] {
  const own = [...box.childNodes].filter(
    (n) => !(n as Element).classList?.contains("acpnb-section"),
  );
  const rest = [...box.querySelectorAll(".acpnb-section")].map((s) => s.textContent ?? "");
  return [own.map((n) => n.textContent).join(""), ...rest];
}
