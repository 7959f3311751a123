// A tool call's terminal in its card: the output as it comes, in its ANSI colours
// (ansi_up: it keeps colour state across chunks and escapes the text), scrolled to its
// end unless the reader scrolled up, and bounded: past PANE_MAX characters the oldest go,
// and a line says how many went (here or in the fold, which keeps FOLD_TERMINAL_MAX).

import { AnsiUp } from "ansi_up";
import type { TerminalView } from "./contracts";
import { el } from "./dom";
import type { Translate } from "./i18n";

/**
 * Characters of output the page keeps per terminal: the tail that fits the pane with some
 * lines to scroll back to (a frame lays out and paints what is kept, not only what came).
 */
export const PANE_MAX = 8_000;
/**
 * Characters drawn in one update at most: output that comes faster than a frame can draw
 * shows its end, and what it skipped is counted with what went before.
 */
export const STEP_MAX = 2_000;
/**
 * Output longer than this many characters is drawn at most every DRAW_EVERY ms: reading
 * it copies it whole once it has grown (a string appended to is flattened when read), and
 * a copy that large a frame makes the page collect garbage in long pauses.
 */
export const LONG_OUTPUT = 32_768;
const DRAW_EVERY = 100;
/** Within this many pixels of the end counts as at the end. */
const AT_END = 8;
const LAST = 16;

function converter(): AnsiUp {
  const ansi = new AnsiUp();
  ansi.url_allowlist = {}; // no links from an agent's output
  return ansi;
}

export class TerminalPane {
  readonly el = el("div", "acpnb-terminal");
  private readonly note = el("div", "acpnb-terminal-note");
  private readonly screen = el("pre", "acpnb-terminal-screen");
  private readonly exit = el("div", "acpnb-terminal-exit");
  private ansi = converter();
  /** Where what is shown ends, counted from the output's start (the fold's cut included). */
  private end = 0;
  /** The last characters shown: output that no longer has them there was replaced. */
  private last = "";
  /** The chunks shown, oldest first, with their characters. */
  private readonly chunks: [HTMLElement, number][] = [];
  private held = 0;
  /** Characters before the first one shown. */
  private hidden = 0;
  private follow = true;
  /** Whether the last block's line has not ended. */
  private open = false;
  /** The newest terminal given, when it waits for its draw; and when the last draw was. */
  private pending: TerminalView | null = null;
  private drawn = Number.NEGATIVE_INFINITY;

  constructor(private readonly t: Translate) {
    this.note.hidden = this.exit.hidden = true;
    this.screen.addEventListener("scroll", () => {
      const s = this.screen;
      this.follow = s.scrollHeight - s.scrollTop - s.clientHeight <= AT_END;
    });
    this.el.append(this.note, this.screen, this.exit);
  }

  update(term: TerminalView): void {
    const wait = this.drawn + DRAW_EVERY - performance.now();
    if (term.exited || term.output.length <= LONG_OUTPUT || wait <= 0) {
      this.pending = null;
      this.draw(term);
      return;
    }
    if (this.pending === null) {
      setTimeout(() => {
        if (this.pending !== null) this.draw(this.pending);
        this.pending = null;
      }, wait);
    }
    this.pending = term;
  }

  private draw(term: TerminalView): void {
    this.drawn = performance.now();
    const total = term.cut + term.output.length;
    const at = this.end - term.cut;
    let text: string;
    if (
      total < this.end ||
      at < this.last.length ||
      term.output.slice(at - this.last.length, at) !== this.last
    ) {
      // Replaced (terminal_output), or more came since the last frame than the fold kept.
      this.clear(term.cut);
      text = term.output;
    } else {
      text = term.output.slice(at);
    }
    this.end = total;
    this.last = term.output.slice(-LAST);
    if (text.length > STEP_MAX) {
      // Starting mid-stream: the colours of what is skipped no longer apply.
      this.clear(this.hidden + this.held + text.length - STEP_MAX);
      text = text.slice(-STEP_MAX);
    }
    if (text.length > 0) this.append(text);
    this.note.hidden = this.hidden === 0;
    if (this.hidden > 0) this.note.textContent = this.t("terminalCut", { count: this.hidden });
    this.exit.hidden = !term.exited;
    if (term.exited) this.exit.textContent = this.exitText(term);
  }

  private append(text: string): void {
    // Whole lines go in blocks of their own, so that a frame lays out only the lines it
    // adds: one run of inline text for the whole pane is laid out again at every change.
    // A line not ended yet stays open, in the last block, for the rest of it (up to
    // STEP_MAX: a longer line goes on in a new block, so that the old ones can go).
    let rest = text;
    const last = this.chunks[this.chunks.length - 1];
    if (this.open && last !== undefined && last[1] < STEP_MAX) {
      const head = rest.slice(0, rest.indexOf("\n") + 1 || rest.length);
      const piece = el("span");
      piece.innerHTML = this.ansi.ansi_to_html(head);
      last[0].append(piece);
      last[1] += head.length;
      this.held += head.length;
      rest = rest.slice(head.length);
    }
    const lines = rest.lastIndexOf("\n") + 1;
    if (lines > 0) this.block(rest.slice(0, lines));
    if (lines < rest.length) this.block(rest.slice(lines));
    this.open = !text.endsWith("\n");
    while (this.held > PANE_MAX && this.chunks.length > 1) {
      const [oldest, size] = this.chunks.shift() as [HTMLElement, number];
      oldest.remove();
      this.held -= size;
      this.hidden += size;
    }
    if (this.follow) this.screen.scrollTop = this.screen.scrollHeight;
  }

  private block(text: string): void {
    const chunk = el("div", "acpnb-terminal-lines");
    // ansi_up's output: the text escaped, in spans that carry only colour styles.
    chunk.innerHTML = this.ansi.ansi_to_html(text);
    this.screen.append(chunk);
    this.chunks.push([chunk, text.length]);
    this.held += text.length;
  }

  private clear(hidden: number): void {
    this.screen.replaceChildren();
    this.chunks.length = 0;
    this.held = 0;
    this.hidden = hidden;
    this.open = false;
    this.ansi = converter();
  }

  private exitText(term: TerminalView): string {
    if (term.exitCode !== null) return this.t("terminalExitCode", { code: term.exitCode });
    if (term.signal !== null) return this.t("terminalSignal", { signal: term.signal });
    return this.t("terminalEnded");
  }
}
