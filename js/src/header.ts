// The status line: agent name and status, turn status, usage, mode/config selectors, the
// chat's "accept edits" setting, Stop, and Sign out where the agent offers ACP's logout.

import { ANYONE, type Role } from "./access";
import { bdi, clip, contained, el, isRecord, setText, str } from "./dom";
import type { ChatState } from "./fold";
import { describeError, isolate, type StringKey, type Translate } from "./i18n";
import type { RequestBody, RequestResult } from "./transport";
import { usageText } from "./usage";

const PHASES: Record<string, StringKey> = {
  thinking: "phaseThinking",
  responding: "phaseResponding",
  tool: "phaseTool",
  waiting: "phaseWaiting",
};

/** The agent's display name: its announced name, else its info's title or name. */
export function agentName(state: ChatState, t: Translate): string {
  const info = state.agent.info ?? {};
  // Cut: a saved chat's agent name is anyone's (2 MB of it took seconds to lay out).
  return clip(state.agent.name ?? str(info.title) ?? str(info.name) ?? t("agent"), 200);
}

interface Choice {
  value: string;
  name: string;
  group?: string;
}

function choices(options: unknown): Choice[] {
  if (!Array.isArray(options)) return [];
  return options.flatMap((o: unknown): Choice[] => {
    if (!isRecord(o)) return [];
    // A grouped select: {group, name, options: [...]}.
    if (Array.isArray(o.options)) {
      return choices(o.options).map((c) => ({ ...c, group: str(o.name) ?? str(o.group) ?? "" }));
    }
    const value = str(o.value) ?? str(o.id);
    return value === null ? [] : [{ value, name: str(o.name) ?? value }];
  });
}

/** Whether the agent offers ACP's `logout` (`agentCapabilities.auth.logout`). */
export function offersLogout(state: ChatState): boolean {
  const auth = state.agent.capabilities?.auth;
  return state.auth?.logout ?? (isRecord(auth) && isRecord(auth.logout));
}

/** How long a first click on Sign out waits for the second that confirms it. */
const CONFIRM_MS = 5000;

export class Header {
  readonly el: HTMLElement;
  private readonly name = bdi("", "acpnb-agent-name");
  /** The session's title as the agent names it (cut to a line by CSS; whole in a tooltip). */
  private readonly chatTitle = bdi("", "acpnb-chat-title");
  private readonly status = el("span", "acpnb-status");
  private readonly usage = el("span", "acpnb-usage");
  private readonly selectors = el("span", "acpnb-selectors");
  private readonly stop: HTMLButtonElement;
  private readonly signOut: HTMLButtonElement;
  private signOutArmed: ReturnType<typeof setTimeout> | null = null;
  private readonly error = el("span", "acpnb-header-error");
  private readonly note = el("span", "acpnb-header-note");
  private readonly acceptEdits = el("input");
  private readonly share = el("input");
  private readonly shareBox = el("label", "acpnb-config-toggle acpnb-share");
  private selectorsKey = "";

  constructor(
    private readonly t: Translate,
    private readonly request: (body: RequestBody) => Promise<RequestResult>,
  ) {
    this.el = el("div", "acpnb-header");
    this.stop = el("button", "acpnb-btn acpnb-stop", t("stop"));
    this.stop.type = "button";
    this.stop.hidden = true;
    this.stop.title = t("stopHint");
    this.stop.addEventListener("click", () => this.cancel());
    this.signOut = el("button", "acpnb-btn acpnb-sign-out", t("signOut"));
    this.signOut.type = "button";
    this.signOut.hidden = true;
    this.signOut.addEventListener("click", () => this.signOutClicked());
    this.status.setAttribute("role", "status");
    this.error.setAttribute("role", "alert");
    this.error.hidden = true;
    this.note.hidden = true;
    this.chatTitle.hidden = true;
    this.el.append(
      this.name,
      this.chatTitle,
      this.status,
      this.usage,
      this.selectors,
      this.acceptEditsToggle(),
      this.shareToggle(),
      this.stop,
      this.signOut,
      this.error,
      this.note,
    );
  }

  /** Stops the running turn (the Stop button, Escape in the chat). */
  cancel(): void {
    void this.send({ type: "chat:cancel" });
  }

  /** The chat's "accept edits" setting: every page shows the folded state of it. */
  private acceptEditsToggle(): HTMLElement {
    const box = el("label", "acpnb-config-toggle acpnb-accept-edits");
    box.title = this.t("acceptEditsHint");
    const input = this.acceptEdits;
    input.type = "checkbox";
    input.addEventListener("change", () => {
      const value = input.checked;
      void this.send({ type: "chat:accept_edits", value }).then((ok) => {
        if (!ok) input.checked = !value;
      });
    });
    box.append(input, this.t("acceptEdits"));
    return box;
  }

  /** The owner's choice to let anyone who may read the chat act on it (chat:share). */
  private shareToggle(): HTMLElement {
    const box = this.shareBox;
    box.title = this.t("shareChatHint");
    box.hidden = true;
    const input = this.share;
    input.type = "checkbox";
    input.addEventListener("change", () => {
      const value = input.checked;
      void this.send({ type: "chat:share", share: value ? "anyone" : null }).then((ok) => {
        if (!ok) input.checked = !value;
      });
    });
    box.append(input, this.t("shareChat"));
    return box;
  }

  /**
   * `note`: the status line's text instead of the chat's status (a saved copy says what it
   * is); `role`: what this page may do (a page that may not act is offered no control).
   */
  update(
    state: ChatState,
    connected: boolean,
    note: string | null = null,
    role: Role = ANYONE,
  ): void {
    const { t } = this;
    setText(this.name, contained(agentName(state, t)));
    const title = clip(state.title ?? "");
    setText(this.chatTitle, contained(title));
    if (this.chatTitle.title !== title) this.chatTitle.title = title;
    if (this.chatTitle.hidden !== (title === "")) this.chatTitle.hidden = title === "";
    if (this.status.dataset.status !== state.agent.status) {
      this.status.dataset.status = state.agent.status;
    }
    setText(this.status, note ?? this.statusText(state, connected));
    const stoppable = state.turn.active && role.mayAct;
    if (this.stop.hidden === stoppable) this.stop.hidden = !stoppable;
    const signedIn = state.auth === undefined || state.auth.state === "signed_in";
    const canSignOut =
      role.mayAct && state.agent.status === "ready" && signedIn && offersLogout(state);
    if (this.signOut.hidden === canSignOut) this.signOut.hidden = !canSignOut;
    if (this.shareBox.hidden === role.owns) this.shareBox.hidden = !role.owns;
    const shared = state.access?.share === "anyone";
    if (this.share.checked !== shared) this.share.checked = shared;
    this.acceptEdits.disabled = !role.mayAct;
    const usage = usageText(state.usage, t);
    setText(this.usage, usage.text);
    if (this.usage.title !== usage.title) this.usage.title = usage.title;
    const accepting = state.acceptEdits ?? false;
    if (this.acceptEdits.checked !== accepting) this.acceptEdits.checked = accepting;
    // Rebuilt only when they change, so an open dropdown is not pulled from under the user.
    const key = JSON.stringify([state.modes, state.configOptions]);
    if (key !== this.selectorsKey) {
      this.selectorsKey = key;
      this.renderSelectors(state);
    }
    this.lockSelectors(role.mayAct);
  }

  private statusText(state: ChatState, connected: boolean): string {
    const { t } = this;
    const { agent, turn } = state;
    if (!connected) return t("connecting");
    if (agent.status === "exited") {
      return agent.detail ? `${t("statusExited")}: ${isolate(agent.detail)}` : t("statusExited");
    }
    if (agent.status === "starting") return t("statusStarting");
    const phase = PHASES[turn.phase];
    if (turn.active && phase !== undefined) return t(phase);
    if (turn.stopReason && turn.stopReason !== "end_turn") {
      return t("stopReason", { reason: isolate(turn.stopReason) });
    }
    return t("phaseIdle");
  }

  /** Puts a control of the view's after the status (the jump to a waiting card). */
  place(control: HTMLElement): void {
    this.status.after(control);
  }

  /** Shows (or, with null, clears) a lasting note under the status: why the chat runs
   * in local mode. */
  showNote(text: string | null): void {
    this.note.textContent = text;
    this.note.hidden = text === null;
  }

  /** Shows (or, with null, clears) an error line under the status. */
  showError(text: string | null): void {
    this.error.textContent = text;
    this.error.hidden = text === null;
  }

  /** Signing out is undone only by signing in again: the first click asks for a second. */
  private signOutClicked(): void {
    const { t } = this;
    if (this.signOutArmed === null) {
      this.signOut.textContent = t("signOutConfirm");
      this.signOutArmed = setTimeout(() => {
        this.signOutArmed = null;
        this.signOut.textContent = t("signOut");
      }, CONFIRM_MS);
      return;
    }
    clearTimeout(this.signOutArmed);
    this.signOutArmed = null;
    this.signOut.textContent = t("signOut");
    void this.send({ type: "chat:auth", op: "logout" });
  }

  private async send(body: RequestBody): Promise<boolean> {
    this.showError(null);
    const result = await this.request(body);
    if (!result.ok) this.showError(describeError(this.t, result.code, result.detail));
    return result.ok;
  }

  private select(
    label: string,
    options: Choice[],
    current: unknown,
    onPick: (value: string) => RequestBody,
  ): HTMLElement {
    const select = el("select", "acpnb-select");
    select.setAttribute("aria-label", label);
    select.title = label;
    const groups = new Map<string, HTMLOptGroupElement>();
    for (const choice of options) {
      const option = el("option", undefined, choice.name);
      option.dir = "auto"; // a mode's name is the agent's text
      option.value = choice.value;
      if (choice.group === undefined) {
        select.append(option);
      } else {
        let group = groups.get(choice.group);
        if (group === undefined) {
          group = el("optgroup");
          group.label = choice.group;
          groups.set(choice.group, group);
          select.append(group);
        }
        group.append(option);
      }
    }
    const value = typeof current === "string" ? current : "";
    select.value = value;
    select.addEventListener("change", () => {
      const picked = select.value;
      void this.send(onPick(picked)).then((ok) => {
        if (!ok) select.value = value;
      });
    });
    return select;
  }

  private renderSelectors(state: ChatState): void {
    const { t } = this;
    const parts: HTMLElement[] = [];
    const modes = state.modes;
    const available = choices(modes?.availableModes);
    if (modes !== null && available.length > 0) {
      parts.push(
        this.select(t("mode"), available, modes.currentModeId, (modeId) => ({
          type: "chat:set_mode",
          modeId,
        })),
      );
    }
    for (const option of state.configOptions ?? []) {
      const configId = str(option.id);
      // The mode is already offered by the mode selector.
      if (configId === null || (option.category === "mode" && available.length > 0)) continue;
      const label = str(option.name) ?? configId;
      if (option.type === "boolean") {
        const box = el("label", "acpnb-config-toggle");
        const input = el("input");
        input.type = "checkbox";
        input.checked = option.currentValue === true;
        input.addEventListener("change", () => {
          const value = input.checked;
          void this.send({ type: "chat:set_config", configId, value }).then((ok) => {
            if (!ok) input.checked = !value;
          });
        });
        box.append(input, bdi(label));
        parts.push(box);
      } else {
        parts.push(
          this.select(label, choices(option.options), option.currentValue, (value) => ({
            type: "chat:set_config",
            configId,
            value,
          })),
        );
      }
    }
    this.selectors.replaceChildren(...parts);
  }

  /** The mode and config selectors, usable only on a page that may act. */
  private lockSelectors(mayAct: boolean): void {
    for (const control of this.selectors.querySelectorAll("select, input")) {
      (control as HTMLSelectElement | HTMLInputElement).disabled = !mayAct;
    }
  }
}
