// An answered question's note: labels and chosen values in words, bounded.
import { describe, expect, it } from "vitest";
import { answerSummary } from "../src/answer_summary";
import type { ElicitationField } from "../src/contracts";
import { translator } from "../src/i18n";

const t = translator("en");

const FIELDS: ElicitationField[] = [
  {
    name: "color",
    type: "enum",
    title: "Color",
    options: [
      { value: "red", label: "Red" },
      { value: "blue", label: "Blue" },
    ],
    custom: "color_custom",
  },
  { name: "color_custom", type: "text", title: "Other", customOf: "color" },
  { name: "langs", type: "multi", options: [{ value: "py", label: "Python" }, { value: "rs" }] },
  { name: "ok", type: "boolean", title: "Confirm" },
  { name: "n", type: "integer", title: "Count" },
];

describe("answerSummary", () => {
  it("names the fields answered, in the form's order, with the options' labels", () => {
    const values = { n: 3, ok: false, langs: ["py", "rs"], color: "red" };
    expect(answerSummary(FIELDS, values, t)).toBe(
      "Color: Red · langs: Python, rs · Confirm: no · Count: 3",
    );
  });

  it("counts an Other text as its question's answer", () => {
    expect(answerSummary(FIELDS, { color_custom: "mauve" }, t)).toBe("Color: mauve");
  });

  it("says nothing for an empty answer", () => {
    expect(answerSummary(FIELDS, {}, t)).toBe("");
  });

  it("stays one short line for a long form of long answers", () => {
    const fields: ElicitationField[] = Array.from({ length: 64 }, (_, i) => ({
      name: `f${i}`,
      type: "text",
      title: "T".repeat(1000),
    }));
    const values = Object.fromEntries(fields.map((f) => [f.name, "v".repeat(10_000)]));
    const summary = answerSummary(fields, values, t);
    expect(summary.endsWith(" · 60 more")).toBe(true);
    expect(summary.length).toBeLessThan(600);
  });

  it("ignores values the form has no field for", () => {
    expect(answerSummary(FIELDS, { __proto__x: "x", n: 1 }, t)).toBe("Count: 1");
  });
});
