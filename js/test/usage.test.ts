// The header's usage: the context window once it fills, a cost when there is one.
import { describe, expect, it } from "vitest";
import { translator } from "../src/i18n";
import { usageText } from "../src/usage";

describe("usage", () => {
  const t = translator("en");
  const cost = (amount: number) => ({ amount, currency: "USD" });

  it.each([
    // The demo agent's: a window barely used, no cost: nothing to read past.
    [{ used: 1500, size: 200_000, cost: cost(0) }, ""],
    [{ used: 1500, size: 200_000, cost: null }, ""],
    // A real agent's bill: the cost, and the window once it is half full.
    [{ used: 1500, size: 200_000, cost: cost(0.0123) }, "$0.01"],
    [{ used: 100_000, size: 200_000, cost: null }, "context 50% full"],
    [{ used: 190_000, size: 200_000, cost: cost(1.5) }, "context 95% full · $1.50"],
    [{ used: 250_000, size: 200_000, cost: null }, "context 100% full"],
    [{ used: 10, size: 0, cost: cost(-3) }, ""],
    [{ used: null, size: null, cost: { amount: 2, currency: "EUR" } }, "2.00 \u2068EUR\u2069"],
  ])("shows %o as %j", (usage, text) => {
    expect(usageText(usage, t).text).toBe(text);
  });

  it("keeps the exact counts in the title", () => {
    const usage = { used: 1500, size: 200_000, cost: null };
    expect(usageText(usage, t).title).toBe("1,500 of 200,000 tokens of the context window used");
  });
});
