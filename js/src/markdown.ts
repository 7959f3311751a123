// Markdown from the agent -> a sanitized DOM fragment. Nothing the agent sends may
// run script or make the browser fetch anything: raw HTML is shown as text, images
// become plain links, and DOMPurify enforces a small tag and attribute allow-list.
// A streamed answer is rendered block by block: completed blocks stay in the DOM and
// only the open last block is parsed again as text arrives.

import DOMPurify from "dompurify";
import { Lexer, Marked, Parser, type Token, type Tokens, type TokensList } from "marked";
import { breakable, breakLongRuns, endsSentence, SECTION, SECTION_MIN } from "./longtext";

const SAFE_URL = /^(?:https?:|mailto:)/i;

const ALLOWED_TAGS = [
  "a",
  "blockquote",
  "br",
  "code",
  "del",
  "em",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "hr",
  "li",
  "ol",
  "p",
  "pre",
  "strong",
  "table",
  "tbody",
  "td",
  "th",
  "thead",
  "tr",
  "ul",
];
const ALLOWED_ATTR = ["href", "title", "start", "align"];

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const marked = new Marked({
  gfm: true,
  renderer: {
    // Raw HTML in the agent's text is shown literally, never interpreted.
    html({ text }) {
      return escapeHtml(text);
    },
    // An image would load remote content: show a link to it instead.
    image({ href, text }) {
      const label = escapeHtml(text || href);
      return SAFE_URL.test(href) ? `<a href="${escapeHtml(href)}">${label}</a>` : label;
    },
  },
});

const PURIFY = {
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOWED_URI_REGEXP: SAFE_URL,
  RETURN_DOM_FRAGMENT: true,
} as const;

let purifier: ReturnType<typeof DOMPurify> | undefined;

// Created lazily against the current window, with its own hook (no global side effects).
function getPurifier(): ReturnType<typeof DOMPurify> {
  if (purifier !== undefined) return purifier;
  const instance = DOMPurify(window);
  // Parsed once: a call given its config parses it again (a third of the time of each
  // call, in a reload's build of 193 short answers). Calls then ignore their config.
  instance.setConfig(PURIFY);
  instance.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName !== "A") return;
    const href = node.getAttribute("href");
    if (href === null || !SAFE_URL.test(href.trim())) {
      node.removeAttribute("href");
      return;
    }
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  });
  purifier = instance;
  return instance;
}

function sanitize(html: string): DocumentFragment {
  // The config here (the one set) only picks the result's type.
  const fragment = getPurifier().sanitize(html, PURIFY);
  breakLongRuns(fragment);
  return fragment;
}

// marked reads "\r\n" and "\r" as "\n"; offsets into the source are taken after that.
function normalize(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/** A lexer that knows the link definitions `links` (those of the completed blocks). */
function lexer(links: TokensList["links"]): Lexer {
  const made = new Lexer(marked.defaults);
  Object.assign(made.tokens.links, links);
  return made;
}

function render(tokens: Token[]): DocumentFragment {
  return sanitize(marked.parser(tokens));
}

/** Inline Markdown (the inside of a paragraph), rendered and sanitized. */
function renderInline(tokens: Token[]): DocumentFragment {
  return sanitize(Parser.parseInline(tokens, marked.defaults));
}

/** Replaces the children of `el` with the rendered, sanitized Markdown of `text`. */
export function renderMarkdown(el: HTMLElement, text: string): void {
  el.replaceChildren(render(lexer({}).lex(normalize(text))));
}

/**
 * Characters of completed blocks parsed per update, at most (bar one longer block): in
 * JupyterLab, 32 K of Markdown blocks took 80-240 ms to lay out in one frame.
 */
const STEP = 8192;
/** An open paragraph longer than this is shown in frozen pieces plus a live tail. */
const FREEZE_AT = 4096;
/** About this much of an open paragraph stays live (parsed again on each update). */
const LIVE = 1024;
/** How far back from the ideal cut a space may be looked for. */
const SEARCH = 2048;
/**
 * Text inside a paragraph that Markdown shows as it is: no line break, no character that
 * starts inline syntax, an entity, an address or an autolink (checked apart: `www.`).
 * Its render is its text, so a piece of it is frozen without the lexer and DOMPurify.
 */
const PLAIN = /^[A-Za-z0-9][A-Za-z0-9 .,;?()'"-]*$/;

function isPlain(text: string): boolean {
  return PLAIN.test(text) && !/www\./i.test(text);
}

/**
 * A whole text that Markdown shows as one paragraph of itself: plain (isPlain), short, not
 * starting like a list item, not ending in a space (a render drops it).
 */
function isPlainParagraph(text: string): boolean {
  return text.length <= FREEZE_AT && restStartsText(text, 0) && !/\s$/.test(text) && isPlain(text);
}

/** Where the open blocks start: the last block that is not blank may still change. */
function openBlock(tokens: Token[]): number {
  let last = tokens.length - 1;
  while (last > 0 && tokens[last]?.type === "space") last--;
  return Math.max(0, last);
}

const ALNUM = /[A-Za-z0-9]/;
/** A line starting so would be an ordered list item, not a paragraph's text. */
const LIST_ITEM = /^\d{1,9}[.)]/;

function restStartsText(text: string, i: number): boolean {
  return ALNUM.test(text[i] ?? "") && !LIST_ITEM.test(text.slice(i, i + 11));
}

/**
 * A place to cut a paragraph's inline source at or before `target`: before a letter or
 * digit that follows a space, or inside a run of letters and digits only (no URL,
 * address or entity can span it). The rest then starts like no block construct does.
 */
function cutBefore(text: string, target: number): number | null {
  for (let i = target; i > 0 && i > target - SEARCH; i--) {
    if (text[i - 1] === " " && restStartsText(text, i)) return i;
  }
  if (!restStartsText(text, target)) return null;
  let i = target - 1;
  while (i >= 0 && ALNUM.test(text[i] ?? "")) i--;
  return i < 0 || /\s/.test(text[i] ?? "") ? target : null;
}

/**
 * The last cut in `text` at or before `to` (and after LIVE) that follows a sentence's end,
 * before a letter or digit as cutBefore's; null when the window holds none.
 */
function sentenceCut(text: string, to: number): number | null {
  for (let i = to; i > LIVE && i > to - SEARCH; i--) {
    if (endsSentence(text, i) && restStartsText(text, i)) return i;
  }
  return null;
}

/**
 * The cuts to try for the next piece of `text`, best first: where a sentence ends when
 * `sentence` (the section is about full), then near STEP, half of it, and so on.
 */
function* cuts(text: string, sentence: boolean): Generator<number> {
  const first = Math.min(text.length - LIVE, STEP);
  if (sentence) {
    const cut = sentenceCut(text, first);
    if (cut !== null) yield cut;
  }
  for (let target = first; target > LIVE; target = Math.floor(target / 2)) {
    const cut = cutBefore(text, target);
    if (cut !== null) yield cut;
  }
}

/** The cut settledPiece finds in plain text (isPlain), where every prefix is settled. */
function plainCut(text: string, sentence: boolean): number | null {
  for (const cut of cuts(text, sentence)) return cut;
  return null;
}

// Delimiters that can no longer pair: inside a word (_), or with space on both sides.
const INERT = /(?<=[A-Za-z0-9])_+(?=[A-Za-z0-9])|(?<=\s)[*_~]+(?=\s)/g;
const OPENER = /[*_~`[\]<\\]/;

/** Whether no delimiter in `tokens` was left unpaired (text after them cannot change them). */
function settled(tokens: Token[]): boolean {
  let ok = true;
  marked.walkTokens(tokens, (token) => {
    if (token.type === "text" && OPENER.test(token.raw.replace(INERT, ""))) ok = false;
  });
  return ok;
}

/**
 * Markdown that grows: `update(text)` renders the same DOM as `renderMarkdown(el, text)`,
 * but a block that is complete (another block follows it) is parsed and rendered once;
 * each update parses only the last block onwards. A long open paragraph (an answer with
 * no blank line) is cut into pieces whose inline Markdown is settled: each is rendered
 * once into an inline box of its own, and only the paragraph's last kilobyte or so is
 * parsed again. The pieces flow on as one paragraph (a cut shows nowhere) in sections of
 * SECTION characters, blocks that the browser lays out on their own.
 */
export class MarkdownStream {
  /** A prefix of the text shown, and its normalized source. */
  private seen = "";
  private normalized = "";
  /** The source of the completed blocks, and the link definitions they hold. */
  private done = "";
  private links: TokensList["links"] = {};
  /** The nodes of the open blocks, replaced on each update. */
  private open: ChildNode[] = [];
  /** The box the last completed blocks went to, and how much source it holds. */
  private run: HTMLElement | null = null;
  private runSize = 0;
  /** The open paragraph shown in pieces, the source of its frozen pieces, its live nodes. */
  private para: HTMLElement | null = null;
  /** The paragraph's last section (see SECTION), and how much frozen source it holds. */
  private section: HTMLElement | null = null;
  private sectionSize = 0;
  /** Whether the section ended: the next piece starts one (see freeze). */
  private sectionClosed = false;
  private frozen = "";
  private live: ChildNode[] = [];
  /** Whether the last piece ended inside a word. */
  private midWord = false;
  /**
   * Whether the last step appended completed blocks. Their layout ends the frame's steps:
   * a 600 KB answer of headings, lists and code took tasks of 100 ms and more in
   * JupyterLab when a frame laid out several steps of blocks.
   */
  private appended = false;

  /** `decorate` adds the widget's own controls to each newly rendered run of blocks. */
  constructor(
    readonly el: HTMLElement,
    private readonly decorate: (blocks: DocumentFragment) => void = () => {},
  ) {}

  /**
   * Shows `text`, or as much of it as steps parse until the time `until` (performance.now();
   * one step at least, of about STEP characters of completed blocks, so a frame's work
   * stays bounded); false while more steps remain. A step that appends completed blocks
   * is the call's last (see `appended`); of the steps through a long open paragraph, only
   * the last renders the paragraph's live tail: the next step would replace it at once.
   */
  update(text: string, until = Number.NEGATIVE_INFINITY): boolean {
    if (!text.startsWith(this.seen)) this.reset();
    return this.extend(text, until);
  }

  /**
   * `update` for a text that extends the one shown before (the caller knows: a streamed
   * item's text only grows), so only its new part is read: checking that a 1 MB answer
   * starts with the text before took V8 several milliseconds a frame (its text is a rope).
   */
  extend(text: string, until = Number.NEGATIVE_INFINITY): boolean {
    const source = this.normalizeGrown(text);
    for (;;) {
      const last = performance.now() >= until;
      this.appended = false;
      const shown = this.step(source, last);
      if (shown || last || this.appended) return shown;
    }
  }

  /** One step; `last`: the open text is rendered even when more steps remain. */
  private step(source: string, last: boolean): boolean {
    if (this.done === "" && this.para === null && isPlainParagraph(source)) {
      this.showPlain(source);
      return true;
    }
    const pieces = this.para !== null;
    const grown = pieces ? this.growParagraph(source, last) : null;
    if (grown !== null) return grown;
    let end = Math.min(source.length, this.done.length + STEP);
    let tokens = this.lexTail(source, end);
    let open = openBlock(tokens);
    // A paragraph longer than a step (a saved 2 MB prompt) goes to pieces from its first
    // window, not lexed whole (200 ms); null: it ended or was dropped, lexed on below.
    if (end < source.length && !pieces && tokens.length === 1 && tokens[0]?.type === "paragraph") {
      const shown = this.toPieces(source, last);
      if (shown !== null) return shown;
    }
    // One block longer than a step is parsed whole: there is no smaller step to take.
    if (end < source.length && open === 0) {
      end = source.length;
      tokens = this.lexTail(source, end);
      open = openBlock(tokens);
    }
    for (const node of this.open) node.remove();
    this.open = [];
    const complete = tokens.slice(0, open);
    if (complete.length > 0) {
      this.appended = true;
      const blocks = render(complete);
      this.decorate(blocks);
      const raw = complete.map((token) => token.raw).join("");
      this.runOf(raw.length).append(blocks);
      this.done += raw;
      // Only the completed blocks' definitions: one in the open block may still grow.
      marked.walkTokens(complete, (token) => {
        if (token.type === "def" && !Object.hasOwn(this.links, token.tag)) {
          this.links[token.tag] = { href: token.href, title: token.title };
        }
      });
    }
    const rest = tokens.slice(open);
    const head = rest[0];
    // Not again right after the pieces were dropped: the same cut would be found again.
    if (!pieces && end === source.length && rest.length === 1 && head?.type === "paragraph") {
      if ((head as Tokens.Paragraph).text.length > FREEZE_AT) {
        const shown = this.toPieces(source, last);
        if (shown !== null) return shown;
      }
    }
    const fragment = render(rest);
    this.decorate(fragment);
    this.open = [...fragment.childNodes];
    this.el.append(fragment);
    return end === source.length;
  }

  /**
   * A short plain paragraph (most prompts; an answer's first words) as a render shows it,
   * without the lexer and DOMPurify: a reload of a long chat renders every prompt. Text that
   * grows into Markdown is rendered as such by the next update (these are its open nodes).
   */
  private showPlain(source: string): void {
    for (const node of this.open) node.remove();
    const para = document.createElement("p");
    para.append(breakable(source));
    const newline = document.createTextNode("\n");
    this.el.append(para, newline);
    this.open = [para, newline];
  }

  /** `text`, which extends the text seen before, normalized: only its new part scanned. */
  private normalizeGrown(text: string): string {
    // A "\r" at the end may be the start of a "\r\n": it is held back until the next text.
    const end = text.endsWith("\r") ? text.length - 1 : text.length;
    this.normalized += normalize(text.slice(this.seen.length, end));
    this.seen = text.slice(0, end);
    return end < text.length ? `${this.normalized}\n` : this.normalized;
  }

  /**
   * The box that takes the next `size` characters of completed blocks: the last one,
   * until it holds about STEP characters. Finished boxes skip style, layout and paint
   * while off-screen (a 600 KB answer holds some 50,000 elements); a box per block
   * would cost as much again in visibility checks.
   */
  private runOf(size: number): HTMLElement {
    if (this.run === null || this.run !== this.el.lastChild || this.runSize >= STEP) {
      this.run = document.createElement("div");
      this.run.className = "acpnb-run";
      this.runSize = 0;
      this.el.append(this.run);
    }
    this.runSize += size;
    return this.run;
  }

  /** The open paragraph, shown so far as open nodes, goes on in pieces (growParagraph). */
  private toPieces(source: string, last: boolean): boolean | null {
    for (const node of this.open) node.remove();
    this.startParagraph();
    return this.growParagraph(source, last);
  }

  /** The open paragraph goes to pieces: an empty <p> (and the newline a render puts after it). */
  private startParagraph(): void {
    this.para = document.createElement("p");
    const newline = document.createTextNode("\n");
    this.el.append(this.para, newline);
    this.open = [this.para, newline];
    this.section = null;
    this.sectionSize = 0;
    this.sectionClosed = false;
    this.frozen = "";
    this.live = [];
    this.midWord = false;
  }

  /**
   * Shows the open paragraph's new text, freezing a settled piece (of STEP characters at
   * most) when the live part is long; true when everything is shown, false while more
   * steps remain. Null when the paragraph ended (its nodes stay) or was dropped to be
   * rendered whole: the text after the frozen pieces no longer reads as their
   * continuation (a setext underline made it a heading, a new link definition appeared).
   */
  private growParagraph(source: string, last: boolean, windowed = true): boolean | null {
    const start = this.done.length + this.frozen.length;
    // A window of the text: one frame's work stays bounded when a long word arrives whole.
    const end = windowed ? Math.min(source.length, start + 2 * STEP) : source.length;
    const window = source.slice(start, end);
    const cut =
      this.para !== null && end < source.length && isPlain(window)
        ? plainCut(window, this.sectionFull())
        : null;
    if (typeof cut === "number") return this.growPlain(window, cut, last);
    const tokens = lexer(this.links).lex(window);
    const first = tokens[0];
    const fresh = Object.keys(tokens.links).some((key) => !Object.hasOwn(this.links, key));
    const paragraph = first?.type === "paragraph" ? (first as Tokens.Paragraph) : null;
    if (
      this.para === null ||
      paragraph === null ||
      fresh ||
      (this.midWord && paragraph.tokens[0]?.type !== "text")
    ) {
      for (const node of this.open) node.remove();
      this.endParagraph();
      return null;
    }
    const piece = tokens.length === 1 ? this.settledPiece(paragraph.text, source, start) : null;
    // Nothing to freeze in the window: the paragraph is shown whole, as it is.
    if (piece === null && end < source.length) return this.growParagraph(source, last, false);
    let live = paragraph.tokens;
    let shown = end === source.length;
    if (piece !== null) {
      this.freeze(piece.text, renderInline(piece.tokens));
      live = piece.rest;
      shown = piece.whole && end === source.length;
    }
    this.setLive(shown || last || tokens.length > 1 ? renderInline(live) : null);
    if (tokens.length > 1) {
      // Another block follows: the paragraph is complete, its nodes stay.
      this.done += this.frozen + paragraph.raw;
      this.endParagraph();
      return null;
    }
    return shown;
  }

  /** No open blocks, nor a paragraph shown in pieces (their nodes stay or are gone). */
  private endParagraph(): void {
    this.open = [];
    this.para = null;
    this.section = null;
    this.frozen = "";
    this.live = [];
  }

  /**
   * A piece of the open paragraph, rendered once, goes on in the paragraph's last section:
   * the browser lays out a paragraph's lines all again when any of its text changes
   * (600 KB took 300-750 ms a frame), so a full section (SECTION) is left as it is and the
   * text goes on in a new one, whose layout is its own.
   */
  private freeze(text: string, rendered: DocumentFragment): void {
    const box = document.createElement("span");
    box.className = "acpnb-piece";
    // A cut inside a word (one over SEARCH characters: see cutBefore) keeps the break
    // opportunities of its runs (longtext.ts MAX_RUN) where the pieces meet.
    if (this.midWord) box.append(document.createElement("wbr"));
    box.append(rendered);
    this.liveBox().append(box);
    this.sectionSize += text.length;
    this.frozen += text;
    this.midWord = !/\s$/.test(text);
    // A section about full ends after a sentence (the next one starts a line, as it
    // might), or at SECTION whatever the text.
    if (this.sectionSize >= SECTION_MIN) {
      this.sectionClosed = endsSentence(text, text.length) || this.sectionSize >= SECTION;
    }
  }

  /** Whether the next piece may end the section: cut it after a sentence if one is near. */
  private sectionFull(): boolean {
    return this.sectionSize >= SECTION_MIN - STEP;
  }

  /** Where the paragraph's text goes on: its last section, or a new one once that ended. */
  private liveBox(): HTMLElement {
    if (this.section === null || this.sectionClosed) {
      this.section = document.createElement("span");
      this.section.className = "acpnb-section";
      this.sectionSize = 0;
      this.sectionClosed = false;
      this.para?.append(this.section);
    }
    return this.section;
  }

  /**
   * The step of growParagraph for a window of plain text (isPlain) with more text after
   * it, cut at `cut` (plainCut), rendered as the lexer would (the text, its long runs
   * broken). False: more steps remain.
   */
  private growPlain(window: string, cut: number, last: boolean): boolean {
    this.freeze(window.slice(0, cut), breakable(window.slice(0, cut)));
    this.setLive(last ? breakable(window.slice(cut, cut + STEP)) : null);
    return false;
  }

  /** The open paragraph's live tail becomes `fragment` (nothing, with null) after its pieces. */
  private setLive(fragment: DocumentFragment | null): void {
    for (const node of this.live) node.remove();
    this.live = fragment === null ? [] : [...fragment.childNodes];
    if (fragment !== null) this.liveBox().append(fragment);
  }

  /** A settled prefix of the open paragraph's live text, if it is long enough to cut. */
  private settledPiece(
    text: string,
    source: string,
    start: number,
  ): { text: string; tokens: Token[]; rest: Token[]; whole: boolean } | null {
    if (text.length <= FREEZE_AT) return null;
    // An unpaired delimiter blocks later cuts, not earlier ones: try nearer the start.
    for (const cut of cuts(text, this.sectionFull())) {
      const piece = text.slice(0, cut);
      if (!source.startsWith(piece, start)) return null;
      const tokens = lexer(this.links).inlineTokens(piece);
      if (!settled(tokens)) continue;
      // Shown live: the rest, or its first step (the next update freezes on from there).
      const whole = text.length - cut <= STEP;
      const rest = lexer(this.links).inlineTokens(text.slice(cut, cut + STEP));
      // Inside a word, the rest must start as plain text (not an address the cut split).
      if (/\s$/.test(piece) || rest[0]?.type === "text") {
        return { text: piece, tokens, rest, whole };
      }
    }
    return null;
  }

  /** The tokens of `source` from the completed blocks to `end`. */
  private lexTail(source: string, end: number): TokensList {
    const tokens = lexer(this.links).lex(source.slice(this.done.length, end));
    // A new link definition can change a completed block: render everything again.
    const defined = Object.keys(tokens.links).some((key) => !Object.hasOwn(this.links, key));
    if (!defined || this.done === "") return tokens;
    this.reset();
    return lexer({}).lex(source.slice(0, end));
  }

  private reset(): void {
    this.seen = "";
    this.normalized = "";
    this.done = "";
    this.links = {};
    this.endParagraph();
    this.run = null;
    this.el.replaceChildren();
  }
}
