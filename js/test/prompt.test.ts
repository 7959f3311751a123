// The prompts the lab extension sends: ANSI stripped, bounded, fenced safely.
import { describe, expect, it } from "vitest";
import { translator } from "../src/i18n";
import {
  bound,
  cellsPrompt,
  errorPrompt,
  fence,
  MAX_CELLS,
  MAX_TRACEBACK,
  stripAnsi,
} from "../src/lab/prompt";

const t = translator("en");

describe("prompts", () => {
  it("strips the colours IPython puts in tracebacks", () => {
    expect(stripAnsi("\u001b[0;31mZeroDivisionError\u001b[0m: division by zero")).toBe(
      "ZeroDivisionError: division by zero",
    );
  });

  it("keeps the end of a long traceback, where the exception is named", () => {
    const traceback = `${"frame\n".repeat(10_000)}ZeroDivisionError: division by zero`;
    const prompt = errorPrompt(t, "1/0", traceback, "python");
    expect(prompt.length).toBeLessThan(MAX_TRACEBACK + 1_000);
    expect(prompt).toContain("ZeroDivisionError: division by zero");
    expect(prompt).toMatch(/characters cut/);
    expect(prompt).toContain("```python\n1/0\n```");
  });

  it("fences code holding backticks with a longer fence", () => {
    expect(fence("a ``` b")).toBe("````\na ``` b\n````");
    expect(fence("plain", "python")).toBe("```python\nplain\n```");
  });

  it("bounds from the start or the end", () => {
    expect(bound("abcdef", 3, t)).toBe("abc\n[… 3 characters cut …]");
    expect(bound("abcdef", 3, t, "end")).toBe("[… 3 characters cut …]\ndef");
    expect(bound("abc", 3, t)).toBe("abc");
  });

  it("asks about at most MAX_CELLS cells, in Chinese too", () => {
    const sources = Array.from({ length: MAX_CELLS + 5 }, (_, i) => `x = ${i}`);
    const prompt = cellsPrompt(translator("zh"), sources, "python");
    expect(prompt.startsWith("关于这些笔记本单元格：")).toBe(true);
    expect(prompt.match(/```python/g)).toHaveLength(MAX_CELLS);
  });
});
