// The line diff behind tool-call diffs.
import { describe, expect, it } from "vitest";
import { unifiedDiff } from "../src/diff";

function text(oldText: string | null, newText: string): string {
  return unifiedDiff(oldText, newText)
    .map((l) => ({ hunk: "", context: " ", add: "+", del: "-" })[l.op] + l.text)
    .join("\n");
}

describe("unifiedDiff", () => {
  it("treats a null old text as a new file", () => {
    expect(text(null, "a\nb\n")).toBe("@@ -0,0 +1,2 @@\n+a\n+b");
  });

  it("shows an unchanged file as no hunks", () => {
    expect(unifiedDiff("a\nb\n", "a\nb\n")).toEqual([]);
  });

  it("keeps three lines of context and splits distant changes into hunks", () => {
    const old = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join("\n");
    const changed = old.replace("l2\n", "L2\n").replace("l18\n", "");
    expect(text(old, changed)).toBe(
      [
        "@@ -1,5 +1,5 @@",
        " l1",
        "-l2",
        "+L2",
        " l3",
        " l4",
        " l5",
        "@@ -15,6 +15,5 @@",
        " l15",
        " l16",
        " l17",
        "-l18",
        " l19",
        " l20",
      ].join("\n"),
    );
  });

  it("finds the common lines between insertions and deletions", () => {
    expect(text("a\nb\nc\nd\n", "a\nx\nc\nd\ny\n")).toBe("@@ -1,4 +1,5 @@\n a\n-b\n+x\n c\n d\n+y");
  });

  it("stays bounded on huge inputs (delete all, add all)", () => {
    const big = (tag: string) => Array.from({ length: 2000 }, (_, i) => `${tag}${i}`).join("\n");
    const lines = unifiedDiff(big("a"), big("b"));
    expect(lines.filter((l) => l.op === "del")).toHaveLength(2000);
    expect(lines.filter((l) => l.op === "add")).toHaveLength(2000);
  });
});
