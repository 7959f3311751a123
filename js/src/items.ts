// Views of the text items of the transcript. Each keeps its DOM node and applies only
// what changed: streamed text is appended, never re-set from the start.

import { decorateCodeBlocks } from "./codeblocks";
import type { ThoughtItem as Thought } from "./contracts";
import { clip, el, setText } from "./dom";
import { hasKey, type Translate, tIsolated } from "./i18n";
import { BreakingText } from "./longtext";
import { MarkdownStream } from "./markdown";

/**
 * Plain text that only grows (user messages, errors): appended in place. `below` (a
 * prompt's attachments) is shown under the text and never changes.
 */
export class PlainItem {
  readonly el: HTMLElement;
  private readonly text: BreakingText;

  constructor(kind: "user" | "error", below?: HTMLElement) {
    this.el = el("div", `acpnb-item acpnb-${kind}`);
    if (kind === "error") this.el.setAttribute("role", "alert");
    // Setting the text replaces its node's children: what is below it has a node apart.
    const text = below === undefined ? this.el : this.el.appendChild(el("span"));
    this.text = new BreakingText(text);
    if (below !== undefined) this.el.append(below);
  }

  /** `text` only grows (the fold appends to it): only its new part is read. */
  update(text: string): void {
    this.text.extend(text);
  }
}

/** Agent text: Markdown, rendered (sanitized) at most once per frame when it grew. */
export class AgentItem {
  readonly el = el("div", "acpnb-item acpnb-agent acpnb-markdown");
  private readonly markdown: MarkdownStream;
  private shown = -1;

  constructor(t: Translate) {
    this.markdown = new MarkdownStream(this.el, (blocks) => decorateCodeBlocks(blocks, t));
  }

  private complete = true;

  /**
   * Shows `text`, in steps until the time `until` (see MarkdownStream.update). It only
   * grows (the fold appends to it): only its new part is read (MarkdownStream.extend).
   */
  update(text: string, until?: number): void {
    if (text.length === this.shown && this.complete) return;
    this.shown = text.length;
    this.complete = this.markdown.extend(text, until);
  }

  /** Whether part of a long text still waits for its step (see MarkdownStream). */
  get unfinished(): boolean {
    return !this.complete;
  }
}

/** A thought: collapsed, labelled with how long it took (or "Thinking…" while it runs). */
export class ThoughtItem {
  readonly el = el("details", "acpnb-item acpnb-thought");
  private readonly summary = el("summary");
  private readonly text: BreakingText;

  constructor(private readonly t: Translate) {
    const body = el("div", "acpnb-thought-text");
    this.text = new BreakingText(body);
    this.el.append(this.summary, body);
  }

  /** `state.text` only grows (the fold appends to it): only its new part is read. */
  update(state: Thought): void {
    this.text.extend(state.text);
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

/**
 * The mark at the end of a turn cut short: "Stopped" when the user stopped it, or which
 * limit the agent met (`reason`: the turn's stopReason).
 */
export function stoppedMark(reason: string, t: Translate): HTMLElement {
  const key = `stopped_${reason}`;
  const mark = el("div", "acpnb-item acpnb-stopped");
  mark.append(hasKey(key) ? t(key) : tIsolated(t, "stoppedOther", { reason: clip(reason, 100) }));
  return mark;
}
