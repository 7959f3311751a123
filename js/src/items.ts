// Views of the text items of the transcript. Each keeps its DOM node and applies only
// what changed: streamed text is appended, never re-set from the start.

import { decorateCodeBlocks } from "./codeblocks";
import { el, setText } from "./dom";
import type { Translate } from "./i18n";
import { renderMarkdown } from "./markdown";

/** Plain text that only grows (user messages, errors, thoughts): appended in place. */
class GrowingText {
  readonly node = document.createTextNode("");

  set(text: string): void {
    const shown = this.node.data;
    if (text.length > shown.length && text.startsWith(shown)) {
      this.node.appendData(text.slice(shown.length));
    } else if (text !== shown) {
      this.node.data = text;
    }
  }
}

export class PlainItem {
  readonly el: HTMLElement;
  private readonly text = new GrowingText();

  constructor(kind: "user" | "error") {
    this.el = el("div", `acpnb-item acpnb-${kind}`);
    if (kind === "error") this.el.setAttribute("role", "alert");
    this.el.append(this.text.node);
  }

  update(text: string): void {
    this.text.set(text);
  }
}

/** Agent text: Markdown, re-rendered (sanitized) at most once per frame when it grew. */
export class AgentItem {
  readonly el = el("div", "acpnb-item acpnb-agent acpnb-markdown");
  private shown: string | null = null;

  constructor(private readonly t: Translate) {}

  update(text: string): void {
    if (text === this.shown) return;
    this.shown = text;
    renderMarkdown(this.el, text);
    decorateCodeBlocks(this.el, this.t);
  }
}

export interface ThoughtState {
  text: string;
  startTs: number | null;
  endTs: number | null;
}

/** A thought: collapsed, labelled with how long it took (or "Thinking…" while it runs). */
export class ThoughtItem {
  readonly el = el("details", "acpnb-item acpnb-thought");
  private readonly summary = el("summary");
  private readonly text = new GrowingText();

  constructor(private readonly t: Translate) {
    const body = el("div", "acpnb-thought-text");
    body.append(this.text.node);
    this.el.append(this.summary, body);
  }

  update(state: ThoughtState): void {
    this.text.set(state.text);
    const { startTs, endTs } = state;
    const label =
      endTs === null
        ? this.t("thinking")
        : startTs === null
          ? this.t("thought")
          : this.t("thoughtFor", { seconds: Math.max(1, Math.round((endTs - startTs) / 1000)) });
    setText(this.summary, label);
  }
}
