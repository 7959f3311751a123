// Markdown from the agent -> a sanitized DOM fragment. Nothing the agent sends may
// run script or make the browser fetch anything: raw HTML is shown as text, images
// become plain links, and DOMPurify enforces a small tag and attribute allow-list.
// A streamed answer is rendered block by block: completed blocks stay in the DOM and
// only the open last block is parsed again as text arrives.

import DOMPurify from "dompurify";
import { Lexer, Marked, type Token, type TokensList } from "marked";
import { breakLongRuns } from "./longtext";

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

let purifier: ReturnType<typeof DOMPurify> | undefined;

// Created lazily against the current window, with its own hook (no global side effects).
function getPurifier(): ReturnType<typeof DOMPurify> {
  if (purifier !== undefined) return purifier;
  const instance = DOMPurify(window);
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
  const fragment = getPurifier().sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOWED_URI_REGEXP: SAFE_URL,
    RETURN_DOM_FRAGMENT: true,
  });
  breakLongRuns(fragment);
  return fragment;
}

// marked reads "\r\n" and "\r" as "\n"; offsets into the source are taken after that.
function normalize(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

function lex(source: string, links: TokensList["links"]): TokensList {
  const lexer = new Lexer(marked.defaults);
  Object.assign(lexer.tokens.links, links);
  return lexer.lex(source);
}

function render(tokens: Token[]): DocumentFragment {
  return sanitize(marked.parser(tokens));
}

/** Replaces the children of `el` with the rendered, sanitized Markdown of `text`. */
export function renderMarkdown(el: HTMLElement, text: string): void {
  el.replaceChildren(render(lex(normalize(text), {})));
}

/** Characters of completed blocks parsed per update, at most (bar one longer block). */
const STEP = 32_768;

/** Where the open blocks start: the last block that is not blank may still change. */
function openBlock(tokens: Token[]): number {
  let last = tokens.length - 1;
  while (last > 0 && tokens[last]?.type === "space") last--;
  return Math.max(0, last);
}

/**
 * Markdown that grows: `update(text)` renders the same DOM as `renderMarkdown(el, text)`,
 * but a block that is complete (another block follows it) is parsed and rendered once;
 * each update parses only the last block onwards.
 */
export class MarkdownStream {
  /** The source of the completed blocks, and the link definitions they hold. */
  private done = "";
  private links: TokensList["links"] = {};
  /** The nodes of the open blocks, replaced on each update. */
  private open: ChildNode[] = [];

  /** `decorate` adds the widget's own controls to each newly rendered run of blocks. */
  constructor(
    readonly el: HTMLElement,
    private readonly decorate: (blocks: DocumentFragment) => void = () => {},
  ) {}

  /**
   * Shows `text`, or as much of it as one step parses (about STEP characters of
   * completed blocks, so a frame's work stays bounded); false while more steps remain.
   */
  update(text: string): boolean {
    const source = normalize(text);
    if (!source.startsWith(this.done)) this.reset();
    let end = Math.min(source.length, this.done.length + STEP);
    let tokens = this.lexTail(source, end);
    let open = openBlock(tokens);
    // One block longer than a step is parsed whole: there is no smaller step to take.
    if (end < source.length && open === 0) {
      end = source.length;
      tokens = this.lexTail(source, end);
      open = openBlock(tokens);
    }
    for (const node of this.open) node.remove();
    const complete = tokens.slice(0, open);
    if (complete.length > 0) {
      const blocks = render(complete);
      this.decorate(blocks);
      this.el.append(blocks);
      this.done += complete.map((token) => token.raw).join("");
      // Only the completed blocks' definitions: one in the open block may still grow.
      marked.walkTokens(complete, (token) => {
        if (token.type === "def" && !Object.hasOwn(this.links, token.tag)) {
          this.links[token.tag] = { href: token.href, title: token.title };
        }
      });
    }
    const fragment = render(tokens.slice(open));
    this.decorate(fragment);
    this.open = [...fragment.childNodes];
    this.el.append(fragment);
    return end === source.length;
  }

  /** The tokens of `source` from the completed blocks to `end`. */
  private lexTail(source: string, end: number): TokensList {
    const tokens = lex(source.slice(this.done.length, end), this.links);
    // A new link definition can change a completed block: render everything again.
    const defined = Object.keys(tokens.links).some((key) => !Object.hasOwn(this.links, key));
    if (!defined || this.done === "") return tokens;
    this.reset();
    return lex(source.slice(0, end), {});
  }

  private reset(): void {
    this.done = "";
    this.links = {};
    this.open = [];
    this.el.replaceChildren();
  }
}
