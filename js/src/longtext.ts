// Long unbroken runs of text (base64, minified code, long log lines) get a break
// opportunity, a <wbr>, every MAX_RUN characters. Laid out with an "anywhere" wrap, one
// 64 K-character word froze the page for seconds; bounded runs keep layout cheap,
// and the text stays the same when read or copied (a <wbr> adds no character).

/** The longest run of non-space characters laid out without a break opportunity. */
export const MAX_RUN = 200;

/**
 * `text` cut where a run of non-space characters reaches MAX_RUN (never inside a
 * surrogate pair); `run` is the length of the run that `text` continues.
 */
export function splitRuns(text: string, run = 0): { pieces: string[]; run: number } {
  const pieces: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code <= 32) {
      run = 0;
      continue;
    }
    // Not before a low surrogate: that would split its pair.
    if (run >= MAX_RUN && !(code >= 0xdc00 && code <= 0xdfff)) {
      pieces.push(text.slice(start, i));
      start = i;
      run = 0;
    }
    run++;
  }
  pieces.push(text.slice(start));
  return { pieces, run };
}

/** The pieces as text nodes with a <wbr> between each two. */
function appendPieces(parent: ParentNode, pieces: readonly string[]): Text {
  let node = document.createTextNode(pieces[0] ?? "");
  parent.append(node);
  for (const piece of pieces.slice(1)) {
    node = document.createTextNode(piece);
    parent.append(document.createElement("wbr"), node);
  }
  return node;
}

/** `text` as a fragment with its long runs broken. */
export function breakable(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  appendPieces(fragment, splitRuns(text).pieces);
  return fragment;
}

/** Breaks the long runs of the text under `root` in place (not inside a <pre>). */
export function breakLongRuns(root: Node): void {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const long: Text[] = [];
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    // A <pre> does not wrap: its long lines scroll sideways.
    if ((node as Text).length > MAX_RUN && node.parentElement?.closest("pre") == null) {
      long.push(node as Text);
    }
  }
  for (const node of long) {
    const { pieces } = splitRuns(node.data);
    if (pieces.length < 2) continue;
    const fragment = document.createDocumentFragment();
    appendPieces(fragment, pieces);
    node.replaceWith(fragment);
  }
}

/**
 * Long text goes on in boxes of about this many characters (`.acpnb-section`): the browser
 * lays out a box's lines on their own and skips the boxes off-screen, where one 2 MB
 * message in one box held the page for 10 s. A box is a block, so where one ends the line
 * breaks: as big as layout allows, so that text a person reads holds no second box. In
 * headless Chromium on a loaded 2-core box, a 1.3 MB paragraph appended 6,000 characters
 * a frame took a median 9-12 ms a frame in 8 K blocks (a line break every 8 K), 11-16 ms
 * in 16 K boxes of inline text, and 25-62 ms in 24-32 K ones.
 */
export const SECTION = 16384;
/**
 * From this size on a box ends at the next natural break (see naturalBreak), where a new
 * line reads as the text's own; at SECTION it ends anyway, at a space if one is near.
 */
export const SECTION_MIN = SECTION - 4096;

const SENTENCE_END = /(?:[.!?]["')\]]? |[。！？])$/;

/** Whether `text` up to `at` ends a sentence: ". " (a quote or bracket may close it), "。". */
export function endsSentence(text: string, at: number): boolean {
  return SENTENCE_END.test(text.slice(Math.max(0, at - 3), at));
}

/**
 * The first place in `text[from, to)` after a line's end or a sentence's end (its space
 * included), where a box can end unseen: the next box starts a line as the text would.
 */
export function naturalBreak(text: string, from: number, to: number): number | null {
  for (let i = Math.max(from, 1); i <= to; i++) {
    if (text[i - 1] === "\n" || endsSentence(text, i)) return i;
  }
  return null;
}

/** Where a full box must end by `to` at the latest: after the last space before it. */
function forcedBreak(text: string, from: number, to: number): number {
  const space = text.lastIndexOf(" ", to - 1);
  return space >= from && space > to - 512 ? space + 1 : to;
}

/** Plain text that only grows, shown with its long runs broken; chunks are appended. */
export class BreakingText {
  private shown = "";
  private last: Text | null = null;
  private run = 0;
  /** Where text goes now: the parent, then a section of it once that one ended. */
  private box: ParentNode;
  private boxSize = 0;
  /** Whether the box ended: the next text starts a section. */
  private closed = false;

  constructor(readonly parent: HTMLElement) {
    this.box = parent;
  }

  set(text: string): void {
    if (text === this.shown) return;
    if (!text.startsWith(this.shown)) {
      this.parent.replaceChildren();
      this.shown = "";
      this.last = null;
      this.run = 0;
      this.box = this.parent;
      this.boxSize = 0;
      this.closed = false;
    }
    this.extend(text);
  }

  /** `set` for a text that extends the one shown (see MarkdownStream.extend): only its new part is read. */
  extend(text: string): void {
    let start = this.shown.length;
    this.shown = text;
    while (start < text.length) {
      if (this.closed) this.openSection();
      let end = Math.min(text.length, start + SECTION_MIN - this.boxSize);
      if (this.boxSize >= SECTION_MIN) {
        // About full: it ends at a natural break, or by SECTION (at a space if it can).
        const limit = start + SECTION - this.boxSize;
        const at = naturalBreak(text, start, Math.min(text.length, limit));
        end = at ?? (limit <= text.length ? forcedBreak(text, start, limit) : text.length);
        this.closed = at !== null || limit <= text.length;
      }
      // Not between the two halves of a surrogate pair: the low half goes with it.
      const code = text.charCodeAt(end - 1);
      if (end > start && end < text.length && code >= 0xd800 && code <= 0xdbff) end++;
      end = Math.max(end, start);
      if (end > start) this.append(text.slice(start, end));
      this.boxSize += end - start;
      start = end;
    }
  }

  private openSection(): void {
    const section = document.createElement("span");
    section.className = "acpnb-section";
    this.parent.append(section);
    this.box = section;
    this.boxSize = 0;
    this.last = null;
    this.run = 0;
    this.closed = false;
  }

  private append(part: string): void {
    const { pieces, run } = splitRuns(part, this.run);
    this.run = run;
    const [first, ...rest] = pieces;
    if (this.last === null) {
      this.last = appendPieces(this.box, pieces);
      return;
    }
    this.last.appendData(first ?? "");
    if (rest.length > 0) {
      this.box.append(document.createElement("wbr"));
      this.last = appendPieces(this.box, rest);
    }
  }
}
