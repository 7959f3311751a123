// Views of the text items of the transcript. Each keeps its DOM node and applies only
// what changed: streamed text is appended, never re-set from the start.

import { decorateCodeBlocks } from "./codeblocks";
import type { ThoughtItem as Thought } from "./contracts";
import { clip, el, setText } from "./dom";
import { hasKey, type Translate, tIsolated } from "./i18n";
import { BreakingText } from "./longtext";
import { MarkdownStream } from "./markdown";

/** An error's text, which only grows: appended in place. */
export class ErrorItem {
  readonly el = el("div", "acpnb-item acpnb-error");
  private readonly text = new BreakingText(this.el);

  constructor() {
    this.el.setAttribute("role", "alert");
  }

  /** `text` only grows (the fold appends to it): only its new part is read. */
  update(text: string): void {
    this.text.extend(text);
  }
}

/** Markdown text in `box`, rendered (sanitized) at most once per frame when it grew. */
class MarkdownItem {
  private readonly markdown: MarkdownStream;
  private shown = -1;
  private complete = true;

  constructor(
    readonly el: HTMLElement,
    box: HTMLElement,
    decorate?: (blocks: DocumentFragment) => void,
  ) {
    this.markdown = new MarkdownStream(box, decorate);
  }

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

/** Agent text, its code blocks with the widget's buttons. */
export class AgentItem extends MarkdownItem {
  constructor(t: Translate) {
    const box = el("div", "acpnb-item acpnb-agent acpnb-markdown");
    super(box, box, (blocks) => decorateCodeBlocks(blocks, t));
  }
}

/**
 * A prompt: Markdown like an answer ("Ask the agent" sends code fences), sanitized the
 * same way. `below` (its attachments) is shown under the text and never changes.
 */
export class UserItem extends MarkdownItem {
  constructor(below?: HTMLElement) {
    const item = el("div", "acpnb-item acpnb-user");
    const text = el("div", "acpnb-user-text acpnb-markdown");
    item.append(text);
    if (below !== undefined) item.append(below);
    super(item, text);
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
