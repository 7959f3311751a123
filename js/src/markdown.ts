// Markdown from the agent -> a sanitized DOM fragment. Nothing the agent sends may
// run script or make the browser fetch anything: raw HTML is shown as text, images
// become plain links, and DOMPurify enforces a small tag and attribute allow-list.

import DOMPurify from "dompurify";
import { Marked } from "marked";

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

/** Replaces the children of `el` with the rendered, sanitized Markdown of `text`. */
export function renderMarkdown(el: HTMLElement, text: string): void {
  const fragment = getPurifier().sanitize(marked.parse(text, { async: false }), {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOWED_URI_REGEXP: SAFE_URL,
    RETURN_DOM_FRAGMENT: true,
  });
  el.replaceChildren(fragment);
}
