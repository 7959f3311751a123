// DOM helpers. Text always goes in through textContent, never innerHTML.

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== undefined) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * Someone else's text (the agent's, a tool's) in an element of its own that isolates its
 * direction: a right-to-left override in it cannot reorder the widget's text after it.
 */
export function bdi(text: string, className?: string): HTMLElement {
  return el("bdi", className, text);
}

/** Sets `node`'s text only when it differs (no DOM mutation for an unchanged frame). */
export function setText(node: Node, text: string): void {
  if (node.textContent !== text) node.textContent = text;
}

let nextId = 0;

/** A document-unique id for label/aria wiring. */
export function uid(): string {
  nextId += 1;
  return `acpnb-${nextId}`;
}

/**
 * A one-line label cut to `max` characters. The bridge bounds strings to 256 KiB, but
 * laying out a quarter-megabyte "word" with overflow-wrap freezes the page for seconds.
 */
export function clip(text: string, max = 500): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A string field of an agent-sent object, or null when absent or not a string. */
export function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** Whether an agent-sent value is a plain object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `mm:ss` until `deadline` (never negative). */
export function countdown(deadline: number, now: number): string {
  const seconds = Math.max(0, Math.ceil((deadline - now) / 1000));
  const mm = String(Math.floor(seconds / 60)).padStart(2, "0");
  const ss = String(seconds % 60).padStart(2, "0");
  return `${mm}:${ss}`;
}
