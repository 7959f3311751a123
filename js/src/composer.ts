// The composer: Enter sends the prompt, Shift+Enter inserts a newline.

import { el } from "./dom";
import { describeError, type Translate } from "./i18n";
import type { RequestBody, RequestResult } from "./transport";

/**
 * Unsent drafts by chat, shared by every view in the page: the end of each turn
 * re-displays the output (to refresh its saved transcript), which re-creates the view.
 */
type Drafts = Map<string, { text: string; focused: boolean }>;
// On globalThis, not in module scope: anywidget may import the bundle again for a new view.
const shared = globalThis as typeof globalThis & { __acpnbDrafts?: Drafts };
shared.__acpnbDrafts ??= new Map();
const drafts: Drafts = shared.__acpnbDrafts;

export class Composer {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly button: HTMLButtonElement;
  private readonly error = el("div", "acpnb-composer-error");

  constructor(
    private readonly t: Translate,
    private readonly request: (body: RequestBody) => Promise<RequestResult>,
    private readonly draftKey?: string,
  ) {
    this.el = el("form", "acpnb-composer");
    this.input = el("textarea", "acpnb-composer-input");
    this.input.rows = 2;
    this.input.placeholder = t("composerPlaceholder");
    this.input.setAttribute("aria-label", t("composerPlaceholder"));
    this.button = el("button", "acpnb-btn acpnb-send", t("send"));
    this.button.type = "submit";
    this.error.setAttribute("role", "alert");
    this.error.hidden = true;
    this.input.addEventListener("keydown", (event) => {
      // isComposing: Enter that confirms an IME candidate (Chinese input) must not send.
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        void this.submit();
      }
    });
    this.el.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.submit();
    });
    const row = el("div", "acpnb-composer-row");
    row.append(this.input, this.button);
    this.el.append(row, this.error);
    if (draftKey) this.keepDraft(draftKey);
  }

  private keepDraft(key: string): void {
    const saved = drafts.get(key);
    if (saved) {
      this.input.value = saved.text;
      // The old view is gone; give the focus back once this one is in the page.
      if (saved.focused) queueMicrotask(() => this.input.isConnected && this.input.focus());
    }
    const save = (focused: boolean): void => {
      drafts.set(key, { text: this.input.value, focused });
    };
    this.input.addEventListener("input", () => save(true));
    this.input.addEventListener("focus", () => save(true));
    // A blur caused by the view's removal keeps the focus for the next view.
    this.input.addEventListener("blur", () => save(!this.input.isConnected));
  }

  /** Disabled once the agent has exited. */
  setEnabled(enabled: boolean): void {
    if (this.input.disabled === !enabled) return;
    this.input.disabled = !enabled;
    this.button.disabled = !enabled;
  }

  private async submit(): Promise<void> {
    const text = this.input.value;
    if (text.trim() === "" || this.input.disabled) return;
    this.input.value = "";
    if (this.draftKey) drafts.delete(this.draftKey);
    this.error.hidden = true;
    const result = await this.request({ type: "chat:prompt", text });
    if (!result.ok) {
      // Give the text back unless the user has started typing something new.
      if (this.input.value === "") this.input.value = text;
      this.error.textContent = describeError(this.t, result.code, result.detail);
      this.error.hidden = false;
    }
  }
}
