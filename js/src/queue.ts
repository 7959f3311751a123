// The queued prompts above the composer: a prompt sent while a turn runs waits on the
// server (the fold's `queue`) and goes out when the turns before it end. Each can be
// edited, removed, moved up, or sent into the running turn ("steer") where the agent
// takes prompts during a turn (claude's prompt queueing).

import type { QueuedPrompt } from "./contracts";
import { clip, el, isRecord } from "./dom";
import { describeError, type Translate } from "./i18n";
import type { RequestBody, RequestResult } from "./transport";

/** Whether the agent takes a prompt during a turn into it (claude's `promptQueueing`). */
export function canSteer(capabilities: unknown): boolean {
  const meta = isRecord(capabilities) ? capabilities._meta : null;
  const claude = isRecord(meta) ? meta.claudeCode : null;
  return isRecord(claude) && claude.promptQueueing === true;
}

export class QueuePanel {
  readonly el = el("div", "acpnb-queue");
  private readonly list = el("ol", "acpnb-queue-list");
  /** Says what a cancel did to the queue, or why a change was refused. */
  private readonly note = el("div", "acpnb-queue-note");
  private shown: readonly QueuedPrompt[] | undefined;
  private steer = false;
  private mayAct = true;
  /** The turn whose text is being edited here (its row is an input until saved). */
  private editing: number | null = null;

  constructor(
    private readonly t: Translate,
    private readonly request: (body: RequestBody) => Promise<RequestResult>,
  ) {
    this.el.setAttribute("aria-label", t("queueLabel"));
    this.note.setAttribute("role", "status");
    this.note.hidden = true;
    this.el.append(this.list, this.note);
    this.el.hidden = true;
  }

  /** Shows the queue (the fold's; a new array each queue event), if it changed. */
  update(queue: readonly QueuedPrompt[] | undefined, steer: boolean, mayAct: boolean): void {
    if (queue === this.shown && steer === this.steer && mayAct === this.mayAct) return;
    this.shown = queue;
    this.steer = steer;
    this.mayAct = mayAct;
    const prompts = queue ?? [];
    if (!prompts.some((q) => q.turn === this.editing)) this.editing = null;
    this.list.replaceChildren(...prompts.map((q, index) => this.row(q, index)));
    this.list.hidden = prompts.length === 0;
    this.el.hidden = prompts.length === 0 && this.note.hidden;
  }

  /** A cancel (or the agent's exit) removed `count` queued prompts: say so. */
  removed(count: number, reason: string): void {
    this.say(this.t(reason === "exited" ? "queueDroppedExit" : "queueDropped", { count }));
  }

  private say(text: string | null): void {
    this.note.textContent = text ?? "";
    this.note.hidden = text === null;
    this.el.hidden = this.list.hidden && this.note.hidden;
  }

  private row(q: QueuedPrompt, index: number): HTMLElement {
    const row = el("li", "acpnb-queued");
    row.dataset.turn = String(q.turn);
    if (this.editing === q.turn) {
      const input = el("textarea", "acpnb-queued-edit");
      input.value = q.prompt;
      input.rows = 2;
      input.setAttribute("aria-label", this.t("queueEdit"));
      input.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          const text = input.value.trim() === "" ? null : input.value;
          this.editing = null;
          if (text !== null && text !== q.prompt) this.send({ op: "edit", turn: q.turn, text });
          else this.redraw();
        } else if (event.key === "Escape") {
          event.preventDefault();
          this.editing = null;
          this.redraw();
        }
      });
      row.append(input);
      queueMicrotask(() => input.isConnected && input.focus());
      return row;
    }
    row.append(el("span", "acpnb-queued-text", clip(q.prompt, 500)));
    if (!this.mayAct) return row;
    const button = (label: string, className: string, act: () => void): void => {
      const b = el("button", `acpnb-btn acpnb-queued-${className}`, label);
      b.type = "button";
      b.title = label;
      b.addEventListener("click", act);
      row.append(b);
    };
    if (this.steer)
      button(this.t("queueSteer"), "steer", () => this.send({ op: "steer", turn: q.turn }));
    button(this.t("queueEdit"), "edit", () => {
      this.editing = q.turn;
      this.redraw();
    });
    if (index > 0) {
      button(this.t("queueUp"), "up", () =>
        this.send({ op: "move", turn: q.turn, index: index - 1 }),
      );
    }
    button(this.t("queueRemove"), "remove", () => this.send({ op: "remove", turn: q.turn }));
    return row;
  }

  private redraw(): void {
    const queue = this.shown;
    this.shown = undefined;
    this.update(queue, this.steer, this.mayAct);
  }

  private send(change: {
    op: "edit" | "remove" | "move" | "steer";
    turn: number;
    text?: string;
    index?: number;
  }): void {
    this.say(null);
    void this.request({ type: "chat:queue", ...change }).then((result) => {
      if (!result.ok) this.say(describeError(this.t, result.code, result.detail));
    });
  }
}
