// The agent's plan as a todo panel above the composer: counts, then an expandable list.

import { bdi, el, str } from "./dom";
import type { StringKey, Translate } from "./i18n";

type PlanStatus = "completed" | "in_progress" | "pending";

const MARKS: Record<PlanStatus, { mark: string; key: StringKey }> = {
  completed: { mark: "✓", key: "planCompleted" },
  in_progress: { mark: "◐", key: "planInProgress" },
  pending: { mark: "○", key: "planPending" },
};

function planStatus(value: unknown): PlanStatus {
  return value === "completed" || value === "in_progress" ? value : "pending";
}

export class PlanPanel {
  readonly el: HTMLDetailsElement;
  private readonly summary: HTMLElement;
  private readonly list: HTMLOListElement;

  constructor(private readonly t: Translate) {
    this.el = el("details", "acpnb-plan");
    this.summary = el("summary", "acpnb-plan-summary");
    this.list = el("ol", "acpnb-plan-list");
    this.el.append(this.summary, this.list);
    this.el.hidden = true;
  }

  /** Replaces the shown plan (every plan update carries the whole list). */
  update(entries: readonly Record<string, unknown>[]): void {
    this.el.hidden = entries.length === 0;
    const done = entries.filter((e) => e.status === "completed").length;
    this.summary.replaceChildren(
      el("span", "acpnb-plan-title", this.t("plan")),
      el(
        "span",
        "acpnb-plan-counts",
        `${this.t("planSummary", { done, pending: entries.length - done })} (${done}/${entries.length})`,
      ),
    );
    this.list.replaceChildren(
      ...entries.map((entry) => {
        const status = planStatus(entry.status);
        const item = el("li", `acpnb-plan-item acpnb-plan-${status}`);
        const mark = el("span", "acpnb-plan-mark", MARKS[status].mark);
        // A symbol with a name: an aria-label needs a role (a plain span may not have one).
        mark.setAttribute("role", "img");
        mark.setAttribute("aria-label", this.t(MARKS[status].key));
        item.append(mark, bdi(str(entry.content) ?? "", "acpnb-plan-content"));
        return item;
      }),
    );
  }
}
