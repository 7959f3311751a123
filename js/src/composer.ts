// The composer: Enter sends the prompt, Shift+Enter inserts a newline.

import { el } from "./dom";
import { describeError, type Translate } from "./i18n";
import type { RequestBody, RequestResult } from "./transport";

export class Composer {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly button: HTMLButtonElement;
  private readonly error = el("div", "acpnb-composer-error");

  constructor(
    private readonly t: Translate,
    private readonly request: (body: RequestBody) => Promise<RequestResult>,
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
