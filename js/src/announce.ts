// What a screen reader hears of the chat. The transcript itself is not a live region: it
// changes with every chunk (a 389-character answer in 50 chunks made 151 updates of 9,709
// characters). The agent's messages are spoken from a region of their own instead, once,
// in sentence-sized pieces as they complete; outcomes (an answer given, a question waiting)
// go through a status region.

import { bdi, el } from "./dom";

/** A piece is spoken at a sentence's end once it holds this many characters… */
export const PIECE_MIN = 40;
/** …and at most this many (cut at a space when no sentence ends sooner). */
export const PIECE_MAX = 400;
/** Text further behind than this is skipped: a long answer streams faster than speech. */
export const BEHIND_MAX = 2000;

const SENTENCE_END = /[.!?…]\s+|[。！？]|\n\s*\n/g;

/**
 * The next piece of `text` to speak, from `from` on: `[start, end)` (`start` past `from`
 * when the text ran too far ahead), or null while no piece is due. `done`: the text is
 * complete, so its rest is due.
 */
export function nextPiece(text: string, from: number, done: boolean): [number, number] | null {
  let start = Math.min(from, text.length);
  if (text.length - start > BEHIND_MAX) start = text.length - PIECE_MAX;
  const rest = text.length - start;
  if (rest === 0) return null;
  if (done && rest <= PIECE_MAX) return [start, text.length];
  const window = text.slice(start, start + PIECE_MAX);
  let sentence = -1;
  for (const match of window.matchAll(SENTENCE_END)) sentence = match.index + match[0].length;
  if (sentence >= PIECE_MIN) return [start, start + sentence];
  if (rest < PIECE_MAX && !done) return null;
  const space = window.lastIndexOf(" ");
  return [start, start + (space > 0 ? space + 1 : window.length)];
}

/** Markdown read aloud, a line each: its markers dropped (fences, emphasis, code ticks,
 * headings) and its blank lines. */
export function spoken(markdown: string): string[] {
  return markdown
    .replace(/^\s*(```|~~~).*$/gm, "")
    .replace(/^\s{0,3}(#{1,6}|>)\s+/gm, "")
    .replace(/(\*\*|__|`)/g, "")
    .split("\n")
    .map((line) => line.replace(/[^\S\u2029]+/g, " ").trim())
    .filter((line) => line !== "");
}

/** How many spoken pieces the message region keeps (older ones are removed, unspoken). */
const KEPT = 4;

/** Two visually hidden live regions: the agent's words (polite) and outcomes (status). */
export class Announcer {
  readonly el = el("div", "acpnb-sr-only");
  private readonly words = el("div");
  private readonly status = el("div");

  constructor() {
    this.words.setAttribute("aria-live", "polite");
    this.words.setAttribute("aria-relevant", "additions");
    this.status.setAttribute("role", "status");
    this.el.append(this.words, this.status);
  }

  /** Speaks a piece of the agent's text (its lines, each isolated: they are the agent's). */
  say(lines: readonly string[]): void {
    if (lines.length === 0) return;
    const piece = el("p");
    piece.append(...lines.flatMap((line, i) => (i > 0 ? [" ", bdi(line)] : [bdi(line)])));
    this.words.append(piece);
    while (this.words.childElementCount > KEPT) this.words.firstElementChild?.remove();
  }

  /** Says what just happened (a question answered, a question waiting). */
  tell(what: string | Node): void {
    this.status.replaceChildren(what);
  }
}
