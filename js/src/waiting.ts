// "1 waiting ↑": a header button shown while a card waiting for the user is out of view
// (a screen above the cell that caused it, scrolled away in the transcript); a click
// brings the oldest such card into view and focuses it. The browser says what is in view
// (IntersectionObserver, against the viewport through every scrolling box): no layout
// is read here.

import { el, setText } from "./dom";
import type { Translate } from "./i18n";

/** A card that waits for an answer: its element, and how it takes the focus. */
export interface Waiting {
  readonly el: HTMLElement;
  focus(): void;
}

/** How a card lies against the viewport: in view, or out of it above or below. */
type Where = "in" | "above" | "below";

/** Creates the observer; the default is the browser's (none under jsdom: all out of view). */
export type ObserverFactory = (
  callback: IntersectionObserverCallback,
) => Pick<IntersectionObserver, "observe" | "unobserve" | "disconnect"> | null;

const browserObserver: ObserverFactory = (callback) =>
  typeof IntersectionObserver === "undefined" ? null : new IntersectionObserver(callback);

/** The event a card's element answers by coming into view with the focus (a cell's
 * pointer to it sends it: lab/card_pointer.ts). */
export const JUMP_EVENT = "acpnb-jump";

/** Brings `card` into view and gives it the focus (a permission card: the card itself). */
export function jumpTo(card: Waiting): void {
  card.el.scrollIntoView({ block: "center" });
  card.focus();
}

export class WaitingButton {
  readonly el: HTMLButtonElement;
  private cards: readonly Waiting[] = [];
  private readonly where = new Map<Element, Where>();
  private readonly observer: ReturnType<ObserverFactory>;

  constructor(
    private readonly t: Translate,
    observe: ObserverFactory = browserObserver,
  ) {
    this.el = el("button", "acpnb-btn acpnb-waiting-jump");
    this.el.type = "button";
    this.el.hidden = true;
    this.el.title = t("waitingJumpHint");
    this.el.addEventListener("click", () => {
      const card = this.outOfView()[0];
      if (card !== undefined) jumpTo(card);
    });
    this.observer = observe((entries) => {
      for (const entry of entries) {
        const root = entry.rootBounds;
        const above = root !== null && entry.boundingClientRect.bottom <= root.top;
        this.where.set(entry.target, entry.isIntersecting ? "in" : above ? "above" : "below");
      }
      this.show();
    });
  }

  /** The cards waiting now, oldest first (called each frame the view paints). */
  update(cards: readonly Waiting[]): void {
    const now = new Set(cards.map((card) => card.el));
    for (const target of [...this.where.keys()]) {
      if (now.has(target as HTMLElement)) continue;
      this.where.delete(target);
      this.observer?.unobserve(target);
    }
    for (const card of cards) {
      if (this.where.has(card.el)) continue;
      // Out of view until the observer says otherwise (its first report comes at once).
      this.where.set(card.el, "below");
      this.observer?.observe(card.el);
    }
    this.cards = cards;
    this.show();
  }

  dispose(): void {
    this.observer?.disconnect();
  }

  private outOfView(): Waiting[] {
    return this.cards.filter((card) => this.where.get(card.el) !== "in");
  }

  private show(): void {
    const away = this.outOfView();
    const hidden = away.length === 0;
    if (this.el.hidden !== hidden) this.el.hidden = hidden;
    if (hidden) return;
    const first = away[0] as Waiting;
    const arrow = this.where.get(first.el) === "above" ? "↑" : "↓";
    setText(this.el, this.t("waitingJump", { count: away.length, arrow }));
  }
}
