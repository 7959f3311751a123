// The sign-in card above the composer, when the agent asks for a sign-in (the fold's
// `auth`): each of the agent's methods with what it does. The agent's own method signs
// in at a click; a terminal method shows the command it runs before the click, and while
// it runs its output shows on its tool call in the transcript and a line typed here goes
// to its stdin (masked by default; never kept: the box is emptied as it is sent); an
// environment-variable method says what to set, and where. Signing out is the header's.

import type { AuthMethodView, AuthView } from "./contracts";
import { bdi, clip, el, setText } from "./dom";
import { describeError, type Translate, tIsolated } from "./i18n";
import type { RequestBody, RequestResult } from "./transport";

/** Characters of a command line shown on a terminal method. */
const MAX_COMMAND = 2000;

export class SignInPanel {
  readonly el = el("div", "acpnb-signin");
  private readonly heading = el("div", "acpnb-signin-title");
  private readonly detail = el("div", "acpnb-signin-detail");
  private readonly list = el("ul", "acpnb-signin-methods");
  private readonly entry = el("form", "acpnb-signin-entry");
  private readonly input = el("input", "acpnb-signin-input");
  private readonly mask = el("input");
  private readonly stop: HTMLButtonElement;
  /** Why a request of this card was refused. */
  private readonly note = el("div", "acpnb-signin-note");
  private shown: AuthView | undefined;
  private mayAct = true;

  constructor(
    private readonly t: Translate,
    private readonly request: (body: RequestBody) => Promise<RequestResult>,
  ) {
    this.el.setAttribute("role", "region");
    this.el.setAttribute("aria-label", t("signInLabel"));
    this.detail.setAttribute("role", "status");
    this.note.setAttribute("role", "alert");
    this.input.type = "password";
    this.input.autocomplete = "off";
    this.input.spellcheck = false;
    this.input.setAttribute("aria-label", t("signInInput"));
    this.input.placeholder = t("signInInput");
    this.mask.type = "checkbox";
    this.mask.checked = true;
    this.mask.addEventListener("change", () => {
      this.input.type = this.mask.checked ? "password" : "text";
    });
    const maskBox = el("label", "acpnb-signin-mask");
    maskBox.append(this.mask, t("signInMask"));
    const send = el("button", "acpnb-btn acpnb-signin-send", t("signInSend"));
    send.type = "submit";
    this.stop = el("button", "acpnb-btn acpnb-signin-stop", t("signInStop"));
    this.stop.type = "button";
    this.stop.addEventListener("click", () => this.send({ type: "chat:auth", op: "stop" }));
    this.entry.append(this.input, maskBox, send);
    this.entry.addEventListener("submit", (event) => {
      event.preventDefault();
      this.sendLine();
    });
    // Enter sends, as in the composer (a notebook page does not submit the form on Enter).
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.isComposing) {
        event.preventDefault();
        this.sendLine();
      }
    });
    this.note.hidden = true;
    this.el.append(this.heading, this.detail, this.list, this.entry, this.stop, this.note);
    this.el.hidden = true;
  }

  /**
   * Shows the sign-in (`live`: the agent runs and the page is not a saved copy), if it
   * changed; `agent`: the agent's name.
   */
  update(auth: AuthView | undefined, agent: string, live: boolean, mayAct: boolean): void {
    const shown = live ? auth : undefined;
    if (shown === this.shown && mayAct === this.mayAct) return;
    if (shown !== this.shown) this.say(null);
    this.shown = shown;
    this.mayAct = mayAct;
    const open = shown !== undefined && shown.state !== "signed_in";
    this.el.hidden = !open;
    if (!open) {
      this.input.value = "";
      return;
    }
    const { t } = this;
    const running = shown.state === "signing_in";
    const method = shown.methods.find((m) => m.id === shown.methodId);
    this.heading.replaceChildren(
      running
        ? tIsolated(t, "signingIn", { method: method?.name ?? shown.methodId ?? "" })
        : tIsolated(t, shown.state === "signed_out" ? "signedOut" : "signInTitle", { agent }),
    );
    setText(this.detail, shown.detail ?? "");
    this.detail.hidden = shown.detail === null;
    this.list.hidden = running;
    this.list.replaceChildren(...(running ? [] : shown.methods.map((m) => this.row(m))));
    // A line to type goes to a terminal method's command only.
    this.entry.hidden = !(running && shown.toolCallId !== null && mayAct);
    this.stop.hidden = !(running && mayAct);
    if (!this.entry.hidden) queueMicrotask(() => this.focusInput());
  }

  /** The line box takes the focus from the page body or this chat, never another cell. */
  private focusInput(): void {
    const active = document.activeElement;
    const chat = this.el.closest(".acpnb-root") ?? this.el;
    if (active === null || active === document.body || chat.contains(active)) this.input.focus();
  }

  private row(method: AuthMethodView): HTMLElement {
    const { t } = this;
    const row = el("li", "acpnb-signin-method");
    row.dataset.method = method.id;
    row.append(bdi(method.name, "acpnb-signin-name"));
    if (method.description) row.append(bdi(method.description, "acpnb-signin-description"));
    if (method.type === "env_var") {
      const names = (method.vars ?? []).map((v) => v.name).join(", ");
      const env = el("div", "acpnb-signin-env");
      env.append(tIsolated(t, "signInEnv", { vars: names }));
      row.append(env);
      if (method.link) {
        // Shown as text, never a link: the agent's address, for the user to judge.
        const link = el("div", "acpnb-signin-link");
        link.append(tIsolated(t, "signInLink", { link: clip(method.link, MAX_COMMAND) }));
        row.append(link);
      }
      return row;
    }
    if (method.type === "terminal") {
      const line = el("div", "acpnb-signin-command");
      const command = clip(method.commandLine ?? "", MAX_COMMAND);
      line.append(t("signInRuns"), " ", el("code", undefined, command));
      row.append(line);
    }
    if (this.mayAct) {
      const label = method.type === "terminal" ? t("signInTerminal") : t("signInAgent");
      const button = el("button", "acpnb-btn acpnb-signin-start", label);
      button.type = "button";
      button.addEventListener("click", () =>
        this.send({ type: "chat:auth", op: "start", methodId: method.id }),
      );
      row.append(button);
    }
    return row;
  }

  /** The line typed, to the running sign-in command; what was typed is not kept. */
  private sendLine(): void {
    const text = this.input.value;
    this.input.value = "";
    this.send({ type: "chat:auth", op: "input", text });
  }

  private send(body: RequestBody): void {
    this.say(null);
    void this.request(body).then((result) => {
      if (!result.ok) this.say(describeError(this.t, result.code, result.detail));
    });
  }

  private say(text: string | null): void {
    this.note.textContent = text ?? "";
    this.note.hidden = text === null;
  }
}
