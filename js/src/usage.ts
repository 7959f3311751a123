// The header's usage: how full the agent's context window is, once that matters, and
// what the session cost, when it cost something. A free agent (the demo) shows neither.

import { isRecord, str } from "./dom";
import type { ChatState } from "./fold";
import { isolate, type Translate } from "./i18n";

/**
 * The context window shows once it is this full: what is left matters then (a new chat or
 * a compaction is near); a window barely used is only a number to read past.
 */
export const CONTEXT_SHOWN_AT = 0.5;

/** The session's cost, when the agent reports one above zero (a free agent reports none). */
export function formatCost(cost: unknown): string | null {
  if (!isRecord(cost)) return null;
  const { amount, currency } = cost;
  if (typeof amount !== "number" || !(amount > 0) || !Number.isFinite(amount)) return null;
  return currency === "USD" || currency === undefined
    ? `$${amount.toFixed(2)}`
    : `${amount.toFixed(2)} ${isolate(str(currency) ?? "")}`;
}

/**
 * The header's usage: how full the context window is, once that matters
 * (CONTEXT_SHOWN_AT), and the cost, when there is one; `title` has the exact counts.
 */
export function usageText(
  usage: ChatState["usage"],
  t: Translate,
): { text: string; title: string } {
  if (usage === null) return { text: "", title: "" };
  const { used, size } = usage;
  const parts: string[] = [];
  let title = "";
  if (typeof used === "number" && typeof size === "number" && size > 0 && used >= 0) {
    title = t("usageTitle", { used: used.toLocaleString(), size: size.toLocaleString() });
    const share = used / size;
    if (share >= CONTEXT_SHOWN_AT) {
      parts.push(t("usage", { percent: Math.min(100, Math.round(share * 100)) }));
    }
  }
  const cost = formatCost(usage.cost);
  if (cost !== null) parts.push(cost);
  return { text: parts.join(" · "), title };
}
