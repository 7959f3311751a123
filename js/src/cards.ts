// Permission and elicitation cards: the two places where the agent waits on the user.
// Same warn-tone chrome; a pending one shows a countdown to the watchdog's deadline.

import { answerSummary } from "./answer_summary";
import type {
  Edit,
  ElicitationField,
  ElicitationView,
  FieldValue,
  FileEdit,
  PermissionView,
} from "./contracts";
import { bdi, clip, codeTitle, countdown, el, setText, str, uid } from "./dom";
import { describeError, type StringKey, type Translate, tIsolated } from "./i18n";
import { breakable } from "./longtext";
import { actionTitle, codeBlock, notebookTool } from "./notebook";
import { diffBody, renderToolContent } from "./tools";
import type { RequestBody, RequestResult } from "./transport";

export interface CardContext {
  t: Translate;
  agentName(): string;
  /** The title of a tool call the chat knows, to say where a question comes from. */
  toolTitle(toolCallId: string): string | null;
  /** Who answered, as this page names them (who.ts), or null to name no one. */
  answerer(by: string | null): string | null;
  request(body: RequestBody): Promise<RequestResult>;
  /** An answer given in a card was taken (the view moves the focus on). */
  answered?(): void;
}

/**
 * The countdown's last this-many milliseconds: it turns to a warning and is announced
 * once. Time enough to read a short card and click, not so long that it cries wolf.
 */
export const WARN_MS = 15_000;

/** What every card reads of its request's folded state. */
type RequestView = Pick<PermissionView, "requestId" | "deadline" | "outcome">;

/** The shared chrome: heading, countdown, an error line, and busy handling of the buttons. */
abstract class Card<S extends RequestView> {
  readonly el: HTMLElement;
  protected readonly errorLine: HTMLElement;
  private readonly clock: HTMLElement;
  /** Says once, to a screen reader, that the time runs out (see WARN_MS). */
  private readonly warning = el("span", "acpnb-sr-only");
  private warned = false;
  /** Says who may answer, on a page that may not. */
  private readonly lockLine = el("div", "acpnb-card-locked");
  protected busy = false;
  /** The owner's name when this page may not answer (its buttons are then disabled). */
  protected locked: string | null = null;

  constructor(
    protected readonly ctx: CardContext,
    kind: string,
    heading: StringKey,
    protected state: S,
  ) {
    this.el = el("section", `acpnb-card acpnb-card-${kind}`);
    // What a cell's pointer to this card looks for (lab/card_pointer.ts).
    this.el.dataset.requestId = state.requestId;
    const headingId = uid();
    const head = el("div", "acpnb-card-head");
    const title = el("span", "acpnb-card-heading");
    title.append(tIsolated(ctx.t, heading, { agent: ctx.agentName() }));
    title.id = headingId;
    this.el.setAttribute("aria-labelledby", headingId);
    this.clock = el("span", "acpnb-countdown");
    this.clock.setAttribute("role", "timer");
    this.warning.setAttribute("role", "status");
    head.append(title, this.clock, this.warning);
    this.errorLine = el("div", "acpnb-card-error");
    this.errorLine.setAttribute("role", "alert");
    this.errorLine.hidden = true;
    this.lockLine.hidden = true;
    this.el.append(head, this.lockLine);
  }

  /** Says, before any click, that only `owner` may answer (null: this page may). */
  lock(owner: string | null): void {
    if (owner === this.locked) return;
    this.locked = owner;
    this.lockLine.hidden = owner === null;
    this.lockLine.replaceChildren(
      owner === null ? "" : tIsolated(this.ctx.t, "onlyOwnerAnswers", { owner }),
    );
    this.refresh();
  }

  /** Whether the card still waits for an answer (and so needs the clock). */
  get pending(): boolean {
    return this.state.outcome === null;
  }

  /** Whether the card waits for the user's answer (an accepted URL question no longer does). */
  get open(): boolean {
    return this.state.outcome === null;
  }

  /** What became of the request, in words (said once it settles). */
  abstract settledText(): string | Node;

  get requestId(): string {
    return this.state.requestId;
  }

  /** The outcome the card last showed (undefined: none yet). */
  private shownOutcome: string | null | undefined = undefined;
  /** Whether the last update settled the request (it was open when shown before). */
  settledNow = false;

  /** Applies a new state of the request. */
  update(state: S): void {
    // The fold may change the state in place: what was shown is kept apart.
    this.settledNow = this.shownOutcome === null && state.outcome !== null;
    this.shownOutcome = state.outcome;
    this.state = state;
    // An answered card still shown (a URL question waiting for the agent) has no clock.
    this.clock.hidden = (state.deadline ?? null) === null || state.outcome !== null;
  }

  /** Updates the countdown (called every second by the view while the card is pending). */
  tick(now: number): void {
    const deadline = this.state.deadline ?? null;
    if (deadline === null) return;
    const { t } = this.ctx;
    const time = countdown(deadline, now);
    const low = deadline - now <= WARN_MS;
    setText(this.clock, t(low ? "timeLeftLow" : "timeLeft", { time }));
    if (this.clock.classList.contains("acpnb-countdown-low") !== low) {
      this.clock.classList.toggle("acpnb-countdown-low", low);
    }
    if (low && !this.warned && this.pending) {
      this.warned = true;
      const seconds = Math.max(0, Math.ceil((deadline - now) / 1000));
      this.warning.textContent = t("timeRunningOut", { seconds });
    }
  }

  /** Takes the focus when the card arrives live (screen readers announce it). */
  abstract focus(): void;

  /** Sends an answer; the buttons stay disabled until the ack, and again usable on an error. */
  protected async answer(body: RequestBody): Promise<void> {
    this.busy = true;
    this.errorLine.hidden = true;
    this.refresh();
    const result = await this.ctx.request(body);
    this.busy = false;
    if (!result.ok) {
      this.errorLine.textContent = describeError(this.ctx.t, result.code, result.detail);
      this.errorLine.hidden = false;
    } else {
      this.ctx.answered?.();
    }
    this.refresh();
  }

  /** Re-derives the enabled state of the buttons. */
  protected abstract refresh(): void;
}

// ---------------------------------------------------------------- permission

/** Option names that only repeat the outcome ("Allowed: Allow"). */
const BARE_OPTION = /^(?:allow|reject|deny|yes|no)$/i;

export class PermissionCard extends Card<PermissionView> {
  private readonly buttons: HTMLButtonElement[] = [];

  constructor(state: PermissionView, ctx: CardContext) {
    const heading = state.edit
      ? state.edit.op === "write"
        ? "fileHeading"
        : "editHeading"
      : "permissionHeading";
    super(ctx, "permission", heading, state);
    // An edit (a notebook cell's, a file's) shows its diff instead of the tool call's input.
    if (state.edit) this.el.append(...editView(state.edit, ctx.t));
    else this.describeCall(state.toolCall ?? {});
    const row = el("div", "acpnb-card-actions");
    for (const option of state.options) {
      const optionId = str(option.optionId) ?? "";
      const kind = str(option.kind) ?? "";
      const tone = kind.startsWith("reject") ? "acpnb-reject" : "acpnb-allow";
      const button = el("button", `acpnb-btn ${tone}`);
      button.append(bdi(str(option.name) ?? optionId));
      button.type = "button";
      button.addEventListener("click", () => {
        void this.answer({
          type: "chat:permission.respond",
          requestId: state.requestId,
          optionId,
        });
      });
      this.buttons.push(button);
      row.append(button);
    }
    this.el.append(row, this.errorLine);
    this.update(state);
  }

  /** The tool call the agent asks about: its title, and what it would do. */
  private describeCall(call: Record<string, unknown>): void {
    const { t } = this.ctx;
    const tool = notebookTool(str(call.title));
    // A notebook tool asks in words, and run_code shows the code it would run.
    const title =
      tool === "run_code"
        ? t("nbRunCodeAsk")
        : tool !== null
          ? actionTitle(tool, call.rawInput, t)
          : clip(str(call.title) ?? str(call.toolCallId) ?? "");
    this.el.append(codeTitle(title, "acpnb-card-title"));
    const code = tool === "run_code" ? codeBlock(call.rawInput) : null;
    if (code !== null) this.el.append(code);
    const content = renderToolContent(call.content, t);
    if (content.childElementCount > 0) {
      const body = el("div", "acpnb-tool-body");
      body.append(content);
      this.el.append(body);
    }
  }

  // The card, not its first button: a stray Enter or Space must never grant a permission.
  focus(): void {
    this.el.tabIndex = -1;
    this.el.focus();
  }

  /** Applies a new state; once settled, the card shrinks to a one-line remnant. */
  override update(state: PermissionView): void {
    super.update(state);
    if (state.outcome === null) return;
    this.el.className = "acpnb-card-remnant";
    // Its heading goes: nothing may still name the remnant by it.
    this.el.removeAttribute("aria-labelledby");
    const line = el("div");
    // What became of it, and who answered (a Jupyter user, or "kernel" for Python).
    const outcome = this.outcomeText(state);
    const who = this.ctx.answerer(state.by);
    const answer =
      who === null ? outcome : tIsolated(this.ctx.t, "answeredBy", { answer: outcome, who });
    // An edit's remnant still says which change it was.
    line.append(
      state.edit
        ? tIsolated(this.ctx.t, "editSettled", {
            edit: editHeading(state.edit, this.ctx.t),
            answer,
          })
        : answer,
    );
    this.el.replaceChildren(line);
  }

  settledText(): string | Node {
    // A copy of the remnant's line: the option's name in it stays isolated.
    return this.el.firstElementChild?.cloneNode(true) ?? "";
  }

  private outcomeText(state: PermissionView): Node | string {
    const { t } = this.ctx;
    if (state.outcome === "cancelled") return t("cancelled");
    if (state.outcome === "timeout") return t("timedOut");
    const chosen = state.options.find((o) => o.optionId === state.optionId);
    const option = str(chosen?.name) ?? state.optionId ?? "";
    const rejected = (str(chosen?.kind) ?? "").startsWith("reject");
    // "Allowed: Allow" says one thing twice: an option named as the outcome is not repeated.
    if (BARE_OPTION.test(option.trim())) return t(rejected ? "rejectedBare" : "allowedBare");
    return tIsolated(t, rejected ? "rejected" : "allowed", { option });
  }

  protected refresh(): void {
    for (const button of this.buttons) button.disabled = this.busy || this.locked !== null;
  }
}

/** What an edit does, in words: "New code cell at 3", "Moved cell from 1 to 4". */
function editHeading(edit: Edit, t: Translate): DocumentFragment {
  if (edit.op === "write") {
    return tIsolated(t, edit.created ? "fileCreate" : "fileWrite", { path: clip(edit.path) });
  }
  const index = edit.index;
  switch (edit.op) {
    case "insert":
      return tIsolated(t, "editInsert", { type: edit.cellType, index });
    case "delete":
      return tIsolated(t, "editDelete", { index });
    case "move":
      return tIsolated(t, "editMove", { from: index, to: edit.toIndex ?? "?" });
    default:
      return tIsolated(t, "editChange", { index });
  }
}

/** An edit card's body: what changes, where (notebook and cell, or the file), and the diff. */
function editView(edit: Edit, t: Translate): HTMLElement[] {
  const title = el("div", "acpnb-card-title");
  title.append(editHeading(edit, t));
  if (edit.op === "write") return [title, fileView(edit, t)];
  const where = el("div", "acpnb-diff-path");
  const path = clip(edit.path);
  where.append(
    edit.cellId
      ? tIsolated(t, "editWhereId", { path, index: edit.index, id: edit.cellId })
      : tIsolated(t, "editWhere", { path, index: edit.index }),
  );
  const box = el("div", "acpnb-diff");
  // A move keeps the source: shown unchanged, as context.
  const body =
    edit.op === "insert"
      ? diffBody(null, edit.after, t)
      : edit.op === "move"
        ? el("pre", "acpnb-diff-body acpnb-diff-context", edit.before)
        : diffBody(edit.before, edit.after, t);
  box.append(where, body);
  return [title, box];
}

/** A file write's path, where it lands (an editor that has it open), and its diff. */
function fileView(edit: FileEdit, t: Translate): HTMLElement {
  const where = el("div", "acpnb-diff-path");
  const path = clip(edit.path);
  where.append(edit.where ? tIsolated(t, "fileWhere", { path, where: clip(edit.where) }) : path);
  const box = el("div", "acpnb-diff");
  box.append(where, diffBody(edit.created ? null : edit.before, edit.after, t));
  return box;
}

// ---------------------------------------------------------------- elicitation

/** A field's current value: absent (empty), invalid (blocks Answer), or a value. */
type Reading = { kind: "empty" } | { kind: "invalid" } | { kind: "value"; value: FieldValue };

const EMPTY: Reading = { kind: "empty" };

interface Control {
  field: ElicitationField;
  read(): Reading;
}

/** A row of a radio or checkbox group: the input, its label and its description. */
function choiceRow(
  type: "radio" | "checkbox",
  group: string,
  text: string,
  description: string | null | undefined,
  checked: boolean,
): { row: HTMLElement; input: HTMLInputElement } {
  const row = el("label", "acpnb-choice");
  const input = el("input");
  input.type = type;
  input.name = group;
  input.checked = checked;
  const body = el("span", "acpnb-choice-text");
  body.append(bdi(text, "acpnb-choice-label"));
  if (description) body.append(bdi(description, "acpnb-choice-description"));
  row.append(input, body);
  return { row, input };
}

function textInput(field: ElicitationField): HTMLInputElement {
  const input = el("input", "acpnb-input");
  if (field.type === "number" || field.type === "integer") {
    input.type = "number";
    input.step = field.type === "integer" ? "1" : "any";
    if (typeof field.default === "number") input.value = String(field.default);
  } else {
    input.type = "text";
    // Protocol-ish answers: no browser autofill, no red squiggles.
    input.setAttribute("autocomplete", "off");
    input.setAttribute("spellcheck", "false");
    if (typeof field.default === "string") input.value = field.default;
  }
  if (field.placeholder) input.placeholder = field.placeholder;
  return input;
}

function readInput(field: ElicitationField, input: HTMLInputElement): Reading {
  const raw = input.value;
  if (field.type !== "number" && field.type !== "integer") {
    return raw.trim() === "" ? EMPTY : { kind: "value", value: raw };
  }
  if (raw.trim() === "") return input.validity?.badInput ? { kind: "invalid" } : EMPTY;
  const value = Number(raw);
  if (!Number.isFinite(value) || (field.type === "integer" && !Number.isInteger(value))) {
    return { kind: "invalid" };
  }
  return { kind: "value", value };
}

/**
 * The page a URL question asks to open, as the browser reads it, or why it is not opened.
 * The bridge checked it already; a saved notebook's card was never checked by us.
 */
export function linkTarget(url: string): { href: string; host: string } | { refused: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { refused: "not a URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return { refused: "only http and https links are opened" };
  }
  // user:pass@ can make a link read as one host and open another.
  if (parsed.username !== "" || parsed.password !== "") {
    return { refused: "the link carries credentials" };
  }
  return { href: parsed.href, host: parsed.host };
}

/** Opens `href` in a new tab that cannot reach this page (no opener, no referrer). */
export function openLink(href: string): void {
  window.open(href, "_blank", "noopener,noreferrer");
}

/** An accepted URL question, still waiting for the agent's elicitation/complete. */
export function linkWaits(state: ElicitationView): boolean {
  return Boolean(state.url) && state.outcome === "accepted";
}

/** The link: its host first and prominent, then the whole URL, as text (never an <a>). */
function linkBox(t: Translate, target: { href: string; host: string }): HTMLElement {
  const box = el("div", "acpnb-link");
  const host = el("div", "acpnb-link-host");
  host.append(tIsolated(t, "linkHost", { host: el("strong", undefined, target.host) }));
  const url = el("code", "acpnb-link-url");
  url.dir = "ltr";
  url.append(breakable(target.href));
  box.append(host, url);
  return box;
}

export class ElicitationCard extends Card<ElicitationView> {
  private readonly controls: Control[] = [];
  private readonly answerButton: HTMLButtonElement | null;
  private readonly otherButtons: HTMLButtonElement[];
  /** A URL question's Open button and the line shown while the agent finishes. */
  private readonly link: { open: HTMLButtonElement; host: string; waiting: HTMLElement } | null =
    null;

  constructor(state: ElicitationView, ctx: CardContext) {
    super(ctx, "elicitation", "questionHeading", state);
    const { t } = ctx;
    // Not a <form>: implicit submission (Enter on a radio or checkbox) must not answer.
    const form = el("div", "acpnb-form");
    if (state.title) form.append(bdi(clip(state.title), "acpnb-card-title"));
    // An MCP server's question names no tool; the bridge ties it to the running one.
    const tool = state.toolCallId ? ctx.toolTitle(state.toolCallId) : null;
    if (tool) {
      const source = el("div", "acpnb-card-source");
      source.append(tIsolated(t, "askedFrom", { tool: clip(tool) }));
      form.append(source);
    }
    if (state.message) {
      const message = el("div", "acpnb-card-message");
      message.dir = "auto";
      message.append(breakable(state.message));
      form.append(message);
    }

    const target = state.url ? linkTarget(state.url) : null;
    if (target !== null && "refused" in target) {
      const refused = el("div", "acpnb-card-error");
      refused.append(tIsolated(t, "linkRefused", { why: target.refused }));
      form.append(refused);
    }
    const shown = target !== null && "href" in target ? target : null;
    if (shown !== null) form.append(linkBox(t, shown));

    const byName = new Map(state.fields.map((f) => [f.name, f]));
    // An AskUserQuestion "Other" box is rendered inside its question, not on its own.
    const nested = new Set(
      state.fields.flatMap((f) => (f.custom && byName.has(f.custom) ? [f.custom] : [])),
    );
    for (const field of state.fields) {
      if (nested.has(field.name)) continue;
      const custom = field.custom ? byName.get(field.custom) : undefined;
      form.append(this.fieldset(field, custom));
    }

    const row = el("div", "acpnb-card-actions");
    const button = (label: string, tone = ""): HTMLButtonElement => {
      const b = el("button", `acpnb-btn ${tone}`.trim(), label);
      b.type = "button";
      row.append(b);
      return b;
    };
    this.answerButton = null;
    if (shown !== null) {
      // Opened only here, on a click: the page is never loaded or prefetched before.
      const open = button(t("openLink", { host: shown.host }), "acpnb-allow");
      open.addEventListener("click", () => {
        openLink(shown.href);
        if (this.state.outcome === null) this.respond("accept");
      });
      const waiting = el("div", "acpnb-card-source");
      waiting.append(tIsolated(t, "linkWaiting", { agent: ctx.agentName() }));
      waiting.hidden = true;
      form.append(waiting);
      this.link = { open, host: shown.host, waiting };
    } else if (this.controls.length > 0) {
      this.answerButton = button(t("answer"), "acpnb-allow");
      this.answerButton.addEventListener("click", () => this.respond("accept"));
    }
    const decline = button(t("decline"), "acpnb-reject");
    const cancel = button(t("cancel"));
    this.otherButtons = [decline, cancel];
    decline.addEventListener("click", () => this.respond("decline"));
    cancel.addEventListener("click", () => this.respond("cancel"));
    // Enter in a text box answers (unless it confirms an IME candidate).
    form.addEventListener("keydown", (event) => {
      const target = event.target as HTMLElement;
      if (event.key !== "Enter" || event.isComposing || !target.matches(".acpnb-input")) return;
      event.preventDefault();
      if (this.answerButton !== null && !this.answerButton.disabled) this.respond("accept");
    });
    form.addEventListener("input", () => this.refresh());
    form.addEventListener("change", () => this.refresh());
    form.append(row);
    this.el.append(form, this.errorLine);
    this.refresh();
    this.update(state); // a settled one (from history) is its note at once
  }

  /** Focuses the first control (a choice or input); choosing one never answers by itself. */
  focus(): void {
    this.el.querySelector<HTMLElement>("input, button:not(:disabled)")?.focus();
  }

  settledText(): string {
    const { t } = this.ctx;
    switch (this.state.outcome) {
      case null:
        return "";
      case "accepted":
      case "completed":
        return t("questionAnswered");
      case "declined":
        return t("questionDeclined");
      case "timeout":
        return t("timedOut");
      default:
        return t("cancelled");
    }
  }

  /** An accepted URL question waits, still shown, until the agent says it is complete. */
  override get pending(): boolean {
    return this.state.outcome === null || linkWaits(this.state);
  }

  /** Applies a new state; once settled, the card shrinks to a one-line note of the answer. */
  override update(state: ElicitationView): void {
    super.update(state);
    if (!this.pending) this.settle(state);
    else if (this.link !== null && state.outcome !== null) {
      // Accepted: it may be opened again; there is nothing left to decline.
      this.link.waiting.hidden = false;
      setText(this.link.open, this.ctx.t("openLinkAgain", { host: this.link.host }));
      for (const b of this.otherButtons) b.hidden = true;
    }
  }

  /** The one-line note a settled question leaves, as a permission does. */
  private settle(state: ElicitationView): void {
    const { t } = this.ctx;
    this.el.className = "acpnb-card-remnant";
    this.el.removeAttribute("aria-labelledby"); // its heading goes
    const outcome = this.outcomeText(state);
    const who = this.ctx.answerer(state.by);
    const line = el("div");
    line.append(who === null ? outcome : tIsolated(t, "answeredBy", { answer: outcome, who }));
    this.el.replaceChildren(line);
  }

  private outcomeText(state: ElicitationView): Node | string {
    const { t } = this.ctx;
    switch (state.outcome) {
      case "accepted":
      case "completed": {
        if (state.url) {
          const target = linkTarget(state.url);
          const host = state.host ?? ("host" in target ? target.host : state.url);
          return tIsolated(t, "linkOpened", { host: clip(host) });
        }
        const summary = answerSummary(state.fields, state.values ?? {}, t);
        return summary === "" ? t("answered") : tIsolated(t, "answeredWith", { answer: summary });
      }
      case "declined":
        return t("declined");
      case "timeout":
        return t("timedOut");
      default:
        return t("cancelled");
    }
  }

  private fieldset(field: ElicitationField, custom: ElicitationField | undefined): HTMLElement {
    const { t } = this.ctx;
    const box = el("fieldset", "acpnb-field");
    const legend = el("legend");
    const title = field.title ?? field.name;
    const input =
      field.type === "enum" || field.type === "multi" || field.type === "boolean"
        ? null
        : textInput(field);
    // A checkbox with no description is labelled by its title: no legend repeats it.
    const lone = field.type === "boolean" && !field.description;
    if (lone) {
      // (its required mark goes in its label)
    } else if (input === null) {
      legend.append(bdi(title));
    } else {
      input.id = uid();
      const label = el("label");
      label.append(bdi(title));
      label.htmlFor = input.id;
      legend.append(label);
    }
    const required = field.required ? el("span", "acpnb-required", ` (${t("required")})`) : null;
    if (!lone) {
      if (required !== null) legend.append(required);
      box.append(legend);
    }
    // A checkbox's description is its label.
    if (field.description && field.type !== "boolean") {
      const d = el("div", "acpnb-field-description");
      d.dir = "auto";
      d.append(breakable(field.description));
      d.id = uid();
      box.append(d);
      box.setAttribute("aria-describedby", d.id);
    }

    if (input !== null) {
      box.append(input);
      this.controls.push({ field, read: () => readInput(field, input) });
    } else if (field.type === "boolean") {
      const { row, input: checkbox } = choiceRow(
        "checkbox",
        uid(),
        field.description ?? title,
        null,
        field.default === true,
      );
      if (lone && required !== null) row.querySelector(".acpnb-choice-text")?.append(required);
      box.append(row);
      this.controls.push({ field, read: () => ({ kind: "value", value: checkbox.checked }) });
    } else {
      const group = uid();
      const options = field.options ?? [];
      const defaults = Array.isArray(field.default) ? field.default : [field.default];
      const inputs = options.map((option) => {
        const type = field.type === "enum" ? "radio" : "checkbox";
        const { row, input } = choiceRow(
          type,
          group,
          option.label ?? option.value,
          option.description,
          defaults.includes(option.value),
        );
        box.append(row);
        return input;
      });
      this.controls.push({
        field,
        read: () => {
          const picked = options.filter((_, i) => inputs[i]?.checked).map((o) => o.value);
          const [first] = picked;
          if (first === undefined) return EMPTY;
          return { kind: "value", value: field.type === "enum" ? first : picked };
        },
      });
    }

    if (custom !== undefined) {
      const input = textInput(custom);
      input.id = uid();
      const row = el("div", "acpnb-other");
      const label = el("label", "acpnb-other-label");
      label.append(custom.title ? bdi(custom.title) : t("other"));
      label.htmlFor = input.id;
      if (!input.placeholder && custom.description) input.placeholder = custom.description;
      row.append(label, input);
      box.append(row);
      this.controls.push({ field: custom, read: () => readInput(custom, input) });
    }
    return box;
  }

  private values(): Record<string, FieldValue> {
    // fromEntries: a field named "__proto__" stays an own key, as the agent named it.
    return Object.fromEntries(
      this.controls.flatMap(({ field, read }) => {
        const reading = read();
        return reading.kind === "value" ? [[field.name, reading.value]] : [];
      }),
    );
  }

  /** Every required field has a value (a question's "Other" text counts), none is invalid. */
  private canAnswer(): boolean {
    const readings = new Map(this.controls.map((c) => [c.field.name, c.read()]));
    for (const { field } of this.controls) {
      const reading = readings.get(field.name) as Reading;
      if (reading.kind === "invalid") return false;
      const other = field.custom ? readings.get(field.custom) : undefined;
      if (field.required && reading.kind === "empty" && other?.kind !== "value") return false;
    }
    return true;
  }

  private respond(action: "accept" | "decline" | "cancel"): void {
    const base = { type: "chat:elicitation.respond", requestId: this.state.requestId } as const;
    void this.answer(
      // A URL question has no fields: accepting it only says the user opened the page.
      action === "accept" && this.link === null
        ? { ...base, action, values: this.values() }
        : { ...base, action },
    );
  }

  protected refresh(): void {
    const held = this.busy || this.locked !== null;
    for (const b of this.otherButtons) b.disabled = held;
    // Anyone who sees the card may open the link; answering needs the right to act.
    if (this.link !== null) this.link.open.disabled = this.state.outcome === null && held;
    if (this.answerButton !== null) this.answerButton.disabled = held || !this.canAnswer();
  }
}
