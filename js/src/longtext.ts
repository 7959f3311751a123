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

/** Plain text that only grows, shown with its long runs broken; chunks are appended. */
export class BreakingText {
  private shown = "";
  private last: Text | null = null;
  private run = 0;
  /** Where text goes now: the parent, then a section of it once SECTION characters are in. */
  private box: ParentNode;
  private boxSize = 0;

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
    }
    this.extend(text);
  }

  /** `set` for a text that extends the one shown (see MarkdownStream.extend): only its new part is read. */
  extend(text: string): void {
    let start = this.shown.length;
    this.shown = text;
    while (start < text.length) {
      if (this.boxSize >= SECTION) {
        const section = document.createElement("span");
        section.className = "acpnb-section";
        this.parent.append(section);
        this.box = section;
        this.boxSize = 0;
        this.last = null;
        this.run = 0;
      }
      let end = Math.min(text.length, start + SECTION - this.boxSize);
      // Not between the two halves of a surrogate pair: the pair starts the next piece.
      const code = text.charCodeAt(end - 1);
      const split = end < text.length && code >= 0xd800 && code <= 0xdbff;
      if (split) end--;
      if (end > start) this.append(text.slice(start, end));
      this.boxSize = split ? SECTION : this.boxSize + end - start;
      start = end;
    }
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
