// @vitest-environment jsdom
// A streamed answer is rendered block by block: the DOM is the same as a full render of
// the same text, and completed blocks are never rendered again.
import { Lexer } from "marked";
import { describe, expect, it, vi } from "vitest";
import { MAX_RUN, SECTION, SECTION_MIN } from "../src/longtext";
import { MarkdownStream, renderMarkdown } from "../src/markdown";

// Completed blocks sit in boxes, and a frozen piece of a long paragraph in a box of its
// own inside a section (a render has neither <div> nor <span>).
function unboxed(html: string): string {
  return html.replace(/<\/?(?:span|div)[^>]*>/g, "");
}

/** Updates until everything is shown (a long text takes several steps). */
function show(stream: MarkdownStream, text: string): void {
  for (let step = 0; !stream.update(text); step++) expect(step).toBeLessThan(1000);
}

function full(text: string): string {
  const box = document.createElement("div");
  renderMarkdown(box, text);
  return box.innerHTML;
}

const ANSWER = [
  "# Title\n\nSome **bold** text and `code`.\n\n",
  "- one\n- two\n\n  still two\n\n- three\n\n",
  "* other bullet\n\n1. first\n2. second\n\n",
  "```py\nprint(1)\n\n\nprint(2)\n```\n\n",
  "> quote\nlazy line\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n",
  "para\n===\n\nsee [the docs][docs] and <b>raw</b> ![img](https://x.y/i.png)\n\n",
  "    indented code\n\npara\r\nwith CRLF\rand CR\n\n",
  `${"x".repeat(3 * MAX_RUN)}\n\n`,
  "[docs]: https://example.com/docs\n\nlast [docs] paragraph  \nwith a break",
].join("");

describe("MarkdownStream", () => {
  it("renders the same DOM as a full render at every chunk size", () => {
    for (const size of [5, 13, 64, 1000]) {
      const box = document.createElement("div");
      const stream = new MarkdownStream(box);
      for (let end = size; end < ANSWER.length + size; end += size) {
        const text = ANSWER.slice(0, end);
        stream.update(text);
        expect(unboxed(box.innerHTML), `${size} ${end}`).toBe(full(text));
      }
    }
  }, 60_000);

  it("keeps completed blocks and re-renders only the open one", () => {
    const box = document.createElement("div");
    const stream = new MarkdownStream(box);
    stream.update("first paragraph\n\n- a list\n\nopen");
    const [first, list] = [box.querySelector("p"), box.querySelector("ul")];
    stream.update("first paragraph\n\n- a list\n\nopen paragraph grows");
    stream.update("first paragraph\n\n- a list\n\nopen paragraph grows\n\nnext");
    expect(box.querySelector("p")).toBe(first);
    expect(box.querySelector("ul")).toBe(list);
    expect(box.querySelectorAll("p")).toHaveLength(3);
  });

  it("shows a long text in bounded steps that end in the full render", () => {
    const text = Array.from({ length: 1500 }, (_, i) => `Paragraph ${i} with **bold**.\n\n`).join(
      "",
    );
    const box = document.createElement("div");
    const stream = new MarkdownStream(box);
    expect(stream.update(text)).toBe(false);
    expect(box.querySelectorAll("p").length).toBeLessThan(1500);
    let steps = 1;
    while (!stream.update(text)) steps++;
    expect(steps).toBeLessThan(8);
    expect(unboxed(box.innerHTML)).toBe(full(text));
    // However much time a frame has, its steps end with one that appended blocks: their
    // layout is the frame's work.
    const timed = new MarkdownStream(document.createElement("div"));
    expect(timed.update(text, Number.POSITIVE_INFINITY)).toBe(false);
    expect(timed.el.querySelectorAll("p").length).toBeLessThan(1500);
    // One block longer than a step (not a paragraph) is shown whole at once.
    const long = `\`\`\`\n${"code line\n".repeat(4_000)}\`\`\`\n\nend`;
    const other = new MarkdownStream(document.createElement("div"));
    expect(other.update(long)).toBe(true);
    expect(unboxed(other.el.innerHTML)).toBe(full(long));
  }, 60_000);

  it("shows a long paragraph given whole in steps, never lexing it whole", () => {
    // A saved 2 MB prompt lexed at once held the page for 200 ms.
    const text = `${"lorem *ipsum* dolor sit amet ".repeat(20_000)}\n\nend`;
    const spy = vi.spyOn(Lexer.prototype, "lex");
    const stream = new MarkdownStream(document.createElement("div"));
    expect(stream.update(text)).toBe(false);
    let steps = 1;
    while (!stream.update(text)) steps++;
    expect(steps).toBeGreaterThan(10);
    expect(Math.max(...spy.mock.calls.map(([src]) => src.length))).toBeLessThanOrEqual(16_384);
    spy.mockRestore();
    expect(unboxed(stream.el.innerHTML)).toBe(full(text));
  }, 60_000);

  it("starts over when the text is replaced rather than extended", () => {
    const box = document.createElement("div");
    const stream = new MarkdownStream(box);
    stream.update("one\n\ntwo\n\nthree");
    stream.update("other\n\ntext");
    expect(unboxed(box.innerHTML)).toBe(full("other\n\ntext"));
  });

  it("keeps sanitizing: raw HTML stays text and images stay links", () => {
    const box = document.createElement("div");
    const stream = new MarkdownStream(box);
    const text =
      "a\n\n<img src=x onerror=alert(1)>\n\n![i](https://e.com/i.png)\n\n<script>x</script>";
    for (let end = 1; end <= text.length; end++) stream.update(text.slice(0, end));
    expect(box.querySelector("img, script")).toBeNull();
    expect(box.textContent).toContain("<img src=x onerror=alert(1)>");
    expect(box.querySelector("a")?.getAttribute("href")).toBe("https://e.com/i.png");
  });

  it("shows a long open paragraph in frozen pieces with the DOM of a full render", () => {
    // Words, emphasis, code spans, links, snake_case, lone stars, autolinks, soft breaks.
    const words = [
      "plain",
      "**bold words**",
      "`a * b`",
      "[link](https://e.com/x)",
      "snake_case_name",
      "5 * 3",
      "7. not a list",
      "www.example.com",
      "a@b.co",
      "*em*",
      "line\nbreak",
      "~~gone~~",
      "<b>raw</b>",
    ];
    let text = "";
    // Shorter than a section (SECTION_MIN): one block holds it all.
    for (let i = 0; text.length < 12_000; i++) text += `${words[(i * 7) % words.length]} ${i} `;
    for (const size of [211, 3001]) {
      const box = document.createElement("div");
      const stream = new MarkdownStream(box);
      let firstNode: Node | null = null;
      for (let end = size; end < text.length + size; end += size) {
        const shown = text.slice(0, end);
        expect(stream.update(shown)).toBe(true);
        expect(unboxed(box.innerHTML), `${size} ${end}`).toBe(full(shown));
        firstNode ??= end > 6000 ? (box.querySelector(".acpnb-piece") ?? null) : null;
      }
      // The first piece was rendered once and kept.
      expect(firstNode).not.toBeNull();
      expect(box.querySelector("p > .acpnb-section")?.firstChild).toBe(firstNode);
      expect(box.querySelectorAll(".acpnb-piece").length).toBeGreaterThan(1);
      // The pieces flow as one paragraph: one block holds them all, and its live tail.
      expect(box.querySelectorAll("p > *")).toHaveLength(1);
      expect(box.querySelector("p > .acpnb-section")?.textContent).toBe(
        box.querySelector("p")?.textContent,
      );
      // The paragraph ends; what follows renders as usual.
      const more = `${text}\n\n## next\n\ntail`;
      stream.update(more);
      expect(unboxed(box.innerHTML)).toBe(full(more));
    }
  }, 60_000);

  it("renders the paragraph whole again when later text changes its meaning", () => {
    const long = `${"word ".repeat(2000)}`;
    for (const after of ["\n===", "x\n\n[word]: https://e.com", "*open", "`tick"]) {
      const box = document.createElement("div");
      const stream = new MarkdownStream(box);
      for (let end = 100; end < long.length; end += 100) show(stream, long.slice(0, end));
      const text = `${long}${after}`;
      for (let end = long.length; end <= text.length; end++) show(stream, text.slice(0, end));
      expect(unboxed(box.innerHTML), after).toBe(full(text));
      show(stream, `${text} and ${long}`);
      expect(unboxed(box.innerHTML), after).toBe(full(`${text} and ${long}`));
    }
  }, 60_000);

  it("cuts one unbroken word only where no address can span the cut", () => {
    const word = "0abcdefgh".repeat(1500);
    for (const text of [word, `${word}@example.com tail`, `${word}_x_ *y*`]) {
      const box = document.createElement("div");
      const stream = new MarkdownStream(box);
      for (let end = 700; end < text.length + 700; end += 700) show(stream, text.slice(0, end));
      const expected = document.createElement("div");
      renderMarkdown(expected, text);
      // <wbr> placement may differ at a cut; the text and the elements may not.
      const strip = (html: string): string => unboxed(html).replace(/<wbr>/g, "");
      expect(strip(box.innerHTML)).toBe(strip(expected.innerHTML));
      if (text === word) expect(box.querySelectorAll(".acpnb-piece").length).toBeGreaterThan(2);
    }
  }, 60_000);

  it("freezes plain text without the lexer, with the DOM of a full render", () => {
    const numbers = Array.from({ length: 30_000 }, (_, i) => `${i} `).join("");
    const at = (text: string, index: number, insert: string): string =>
      `${text.slice(0, index)}${insert}${text.slice(index)}`;
    let mixed = numbers;
    for (const [index, insert] of [
      [150_000, " www.example.org "],
      [120_000, " a@b.co "],
      [90_000, " **bold** "],
      [60_000, "\nsoft break "],
      [30_000, ' "quoted" (aside); done? '],
    ] as const) {
      mixed = at(mixed, index, insert);
    }
    const word = "0abcdefgh".repeat(20_000);
    // <wbr> placement may differ at a cut inside a word; the text and the elements may not.
    const strip = (html: string): string => unboxed(html).replace(/<wbr>/g, "");
    for (const text of [numbers, mixed, word, `${word}@example.com tail`]) {
      const expected = strip(full(text));
      // All at once, a step a call; in one call; and growing by 5,000 characters.
      const stepped = new MarkdownStream(document.createElement("div"));
      show(stepped, text);
      expect(strip(stepped.el.innerHTML)).toBe(expected);
      // (The address at the end of the word makes all of it one link: no piece stays.)
      if (!text.endsWith("tail")) {
        expect(stepped.el.querySelectorAll(".acpnb-piece").length).toBeGreaterThan(10);
        // A block every SECTION characters or so, and only there (the last: its tail).
        const sections = [...stepped.el.querySelectorAll("p > .acpnb-section")];
        expect(sections.length).toBeGreaterThan(1);
        expect(sections.length).toBeLessThanOrEqual(Math.ceil(text.length / SECTION));
        for (const one of sections.slice(0, -1)) {
          expect(one.textContent?.length).toBeGreaterThanOrEqual(SECTION_MIN);
          expect(one.textContent?.length).toBeLessThan(SECTION + 8192 + 1);
        }
      }
      const once = new MarkdownStream(document.createElement("div"));
      expect(once.update(text, Number.POSITIVE_INFINITY)).toBe(true);
      expect(once.el.innerHTML).toBe(stepped.el.innerHTML);
      const growing = new MarkdownStream(document.createElement("div"));
      for (let end = 5000; end < text.length + 5000; end += 5000) {
        show(growing, text.slice(0, end));
        expect(strip(growing.el.innerHTML)).toBe(strip(full(text.slice(0, end))));
      }
    }
  }, 120_000);

  it("shows a short plain paragraph as a render does, then Markdown as it grows into it", () => {
    const texts = [
      "Why does this fail",
      "ends in a space ",
      "1. a list item",
      "www.example.org is a link",
      `a ${"long".repeat(3 * MAX_RUN)} word`,
      "quotes 'single' and \"double\" (aside); done? yes - ok",
      "now **bold**",
      "now **bold** and\nanother line",
    ];
    const box = document.createElement("div");
    const stream = new MarkdownStream(box);
    for (const text of texts) {
      const alone = new MarkdownStream(document.createElement("div"));
      alone.update(text);
      expect(alone.el.innerHTML, text).toBe(full(text));
    }
    // Growing from plain text into Markdown: each update is the full render of its text.
    for (const text of ["now", "now **bo", "now **bold**", "now **bold** and\nanother line"]) {
      stream.update(text);
      expect(unboxed(box.innerHTML), text).toBe(full(text));
    }
  });

  it("shows one long word that arrives whole in bounded steps", () => {
    const word = "0abcdefgh".repeat(30_000);
    const box = document.createElement("div");
    const stream = new MarkdownStream(box);
    let steps = 1;
    while (!stream.update(word)) {
      steps++;
      // Each step shows a prefix of the word, never more than a window of it live.
      expect(word.startsWith(box.querySelector("p")?.textContent ?? "")).toBe(true);
    }
    expect(steps).toBeGreaterThan(10);
    expect(box.querySelector("p")?.textContent).toBe(word);
  }, 60_000);

  it("ends a long paragraph's sections after sentences, where a new line reads as the text's", () => {
    const text = "Some *words* of a sentence that goes on for a while. ".repeat(2500);
    const stream = new MarkdownStream(document.createElement("div"));
    for (let i = 0; i < text.length; i += 1500) show(stream, text.slice(0, i + 1500));
    show(stream, text);
    expect(unboxed(stream.el.innerHTML)).toBe(full(text));
    const sections = [...stream.el.querySelectorAll("p > .acpnb-section")].map(
      (one) => one.textContent ?? "",
    );
    expect(sections.length).toBeGreaterThan(3);
    for (const one of sections.slice(0, -1)) {
      expect(one.endsWith("a while. ")).toBe(true);
      expect(one.length).toBeLessThanOrEqual(SECTION + 8192);
    }
  }, 60_000);
});
