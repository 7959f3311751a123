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

// What in someone else's text ends an isolate around it: a POP DIRECTIONAL ISOLATE that
// matches none of the text's own isolates (Chromium isolates a <bdi> with the same
// characters, so it ends even that), and a paragraph separator, which ends all of them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+001C-U+001E separate paragraphs
const ISOLATE_ENDS = /[\u2066-\u2069\u2029\u0085\u001c-\u001e]/g;

/**
 * `text` made safe to isolate: a stray POP DIRECTIONAL ISOLATE is dropped, isolates it
 * leaves open are closed at its end, and paragraph separators become line feeds.
 */
export function contained(text: string): string {
  let open = 0;
  const kept = text.replace(ISOLATE_ENDS, (c) => {
    if (c === "\u2069") {
      if (open === 0) return "";
      open -= 1;
      return c;
    }
    if (c >= "\u2066") {
      open += 1;
      return c;
    }
    return "\n";
  });
  return kept + "\u2069".repeat(open);
}

/**
 * Someone else's text (the agent's, a tool's) in an element of its own that isolates its
 * direction: a right-to-left override in it cannot reorder the widget's text after it.
 */
export function bdi(text: string, className?: string): HTMLElement {
  // Agent payloads are typed, not checked: a missing title comes in as undefined.
  return el("bdi", className, typeof text === "string" ? contained(text) : text);
}

/**
 * `bdi` for a one-line title that may quote code in backticks (a tool call's "Run `ls`"):
 * each `span` shows as inline code, the rest as text; nothing else is read as Markdown.
 */
export function codeTitle(text: string, className?: string): HTMLElement {
  const box = bdi("", className);
  const safe = typeof text === "string" ? contained(text) : "";
  let at = 0;
  for (const match of safe.matchAll(/`([^`\n]+)`/g)) {
    if (match.index > at) box.append(safe.slice(at, match.index));
    box.append(el("code", "acpnb-title-code", match[1]));
    at = match.index + match[0].length;
  }
  if (at < safe.length) box.append(safe.slice(at));
  return box;
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

/** The Jupyter page's config (`jupyter-config-data`); {} on a page that has none. */
export function pageConfig(): Record<string, unknown> {
  try {
    const node = document.getElementById("jupyter-config-data");
    const config: unknown = JSON.parse(node?.textContent ?? "{}");
    return typeof config === "object" && config !== null ? (config as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Whether an agent-sent value is a plain object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The object elements of a list from the agent; anything else counts as empty. */
export function records(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** `mm:ss` until `deadline` (never negative). */
export function countdown(deadline: number, now: number): string {
  const seconds = Math.max(0, Math.ceil((deadline - now) / 1000));
  const mm = String(Math.floor(seconds / 60)).padStart(2, "0");
  const ss = String(seconds % 60).padStart(2, "0");
  return `${mm}:${ss}`;
}
