// The composer's `@` mentions: typing `@` offers the kernel's variables (names and
// types, read by the kernel while a cell may run); picking one attaches its summary.

import type { VariableName } from "./contracts";
import { clip, el, uid } from "./dom";

const MAX_SHOWN = 20;

/** The `@word` that ends at the caret (after a space or at the start), or null. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | null {
  const match = /(?:^|\s)@([\p{L}\p{N}_]*)$/u.exec(text.slice(0, caret));
  if (match === null) return null;
  const query = match[1] ?? "";
  return { start: caret - query.length - 1, query };
}

/** The variables to offer for `query`: names starting with it first, then containing it. */
export function matching(variables: readonly VariableName[], query: string): VariableName[] {
  const q = query.toLowerCase();
  const starts = variables.filter((v) => v.name.toLowerCase().startsWith(q));
  const contains = variables.filter(
    (v) => !v.name.toLowerCase().startsWith(q) && v.name.toLowerCase().includes(q),
  );
  return [...starts, ...contains].slice(0, MAX_SHOWN);
}

/** The list of offered variables (or commands, commands.ts) under the composer's input. */
export class MentionMenu {
  readonly el = el("ul", "acpnb-mentions");
  private items: VariableName[] = [];
  private active = 0;

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly pick: (name: string) => void,
  ) {
    this.el.id = uid();
    this.el.setAttribute("role", "listbox");
    this.el.hidden = true;
    // The input stays a text box (a textarea may take no other role): it offers a list,
    // names it while shown, and its active option (mentions, or commands).
    input.setAttribute("aria-autocomplete", "list");
  }

  get open(): boolean {
    return !this.el.hidden;
  }

  show(items: VariableName[], empty: string): void {
    this.items = items;
    this.active = 0;
    const rows = items.map((item, index) => {
      const row = el("li", "acpnb-mention");
      row.id = `${this.el.id}-${index}`;
      row.setAttribute("role", "option");
      row.append(
        el("span", "acpnb-mention-name", clip(item.name, 128)),
        el("span", "acpnb-mention-type", clip(item.type, 128)),
      );
      // mousedown, not click: the input keeps the focus (and its caret).
      row.addEventListener("mousedown", (event) => {
        event.preventDefault();
        this.pick(item.name);
      });
      return row;
    });
    this.el.replaceChildren(...(rows.length > 0 ? rows : [el("li", "acpnb-mention-empty", empty)]));
    this.el.hidden = false;
    this.input.setAttribute("aria-controls", this.el.id);
    this.highlight();
  }

  hide(): void {
    if (!this.open) return; // the other menu may be the one showing
    this.el.hidden = true;
    this.input.removeAttribute("aria-controls");
    this.input.removeAttribute("aria-activedescendant");
  }

  /** Handles a key while the menu is open; true when it was the menu's. */
  key(event: KeyboardEvent): boolean {
    if (!this.open) return false;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      const step = event.key === "ArrowDown" ? 1 : -1;
      this.active = (this.active + step + this.items.length) % Math.max(1, this.items.length);
      this.highlight();
    } else if ((event.key === "Enter" || event.key === "Tab") && !event.isComposing) {
      const item = this.items[this.active];
      if (item === undefined) return false;
      this.pick(item.name);
    } else if (event.key === "Escape") {
      this.hide();
    } else {
      return false;
    }
    event.preventDefault();
    return true;
  }

  private highlight(): void {
    [...this.el.children].forEach((row, index) => {
      row.setAttribute("aria-selected", String(index === this.active));
    });
    const row = this.el.children[this.active];
    if (row?.id) this.input.setAttribute("aria-activedescendant", row.id);
  }
}
