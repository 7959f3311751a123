// The composer: Enter sends the prompt, Shift+Enter inserts a newline. A pasted or
// dropped image is attached (bounded, see attach.ts) and shown as a chip until sent.
// `@` offers the kernel's variables (mentions.ts), `/` the agent's commands (commands.ts);
// during a turn Send queues the prompt (the server holds the queue, queue.ts shows it).

import { AttachError, attachmentChips, imageAttachment, summarize } from "./attach";
import { commandAt, commandItems } from "./commands";
import { type Attachment, MAX_ATTACHMENTS, type VariableName } from "./contracts";
import { el, uid } from "./dom";
import { describeError, type Translate, tIsolated } from "./i18n";
import { MentionMenu, matching, mentionAt } from "./mentions";
import type { RequestBody, RequestResult } from "./transport";

/**
 * Unsent drafts by chat, shared by every view in the page: the end of each turn
 * re-displays the output (to refresh its saved transcript), which re-creates the view.
 */
type Drafts = Map<string, { text: string; focused: boolean; attachments: Attachment[] }>;
// On globalThis, not in module scope: anywidget may import the bundle again for a new view.
const shared = globalThis as typeof globalThis & { __acpnbDrafts?: Drafts };
shared.__acpnbDrafts ??= new Map();
const drafts: Drafts = shared.__acpnbDrafts;

export class Composer {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly button: HTMLButtonElement;
  private readonly error = el("div", "acpnb-composer-error");
  private readonly chips = el("div", "acpnb-composer-attachments");
  /** Says who may prompt, on a page that may not. */
  private readonly lockLine = el("div", "acpnb-composer-locked");
  private enabled = true;
  /** The owner's name when this page may not prompt. */
  private locked: string | null = null;
  /** What goes with the next prompt. */
  private attachments: Attachment[] = [];
  private readonly mentions: MentionMenu;
  /** The agent's slash commands, offered by `/` at the start of the prompt. */
  private readonly commandMenu: MentionMenu;
  private commands: readonly unknown[] = [];
  private queueing = false;
  /** The kernel's variables, read once per `@` typed (null: not read yet). */
  private variables: Promise<VariableName[] | null> | null = null;

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
    // The chat's keys, told to screen readers (the placeholder shows the first two).
    const keys = el("span", "acpnb-sr-only", t("keysHint"));
    keys.id = uid();
    this.input.setAttribute("aria-describedby", keys.id);
    this.button = el("button", "acpnb-btn acpnb-send", t("send"));
    this.button.type = "submit";
    this.error.setAttribute("role", "alert");
    this.error.hidden = true;
    this.mentions = new MentionMenu(this.input, (name) => void this.mention(name));
    this.commandMenu = new MentionMenu(this.input, (name) => this.command(name));
    this.input.addEventListener("input", () => {
      this.offerCommands();
      void this.offerMentions();
    });
    this.input.addEventListener("blur", () => {
      this.mentions.hide();
      this.commandMenu.hide();
    });
    this.input.addEventListener("keydown", (event) => {
      if (this.commandMenu.key(event) || this.mentions.key(event)) return;
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
    const takeFiles = (event: Event, list: FileList | undefined): void => {
      const files = [...(list ?? [])];
      if (files.length === 0) return; // plain text pastes (or drops) as usual
      event.preventDefault();
      void this.attachFiles(files);
    };
    this.input.addEventListener("paste", (event) => takeFiles(event, event.clipboardData?.files));
    this.el.addEventListener("dragover", (event) => {
      if (event.dataTransfer?.types.includes("Files")) event.preventDefault();
    });
    this.el.addEventListener("drop", (event) => takeFiles(event, event.dataTransfer?.files));
    this.chips.hidden = true;
    const row = el("div", "acpnb-composer-row");
    row.append(this.input, this.button);
    this.lockLine.hidden = true;
    this.el.append(
      this.lockLine,
      this.chips,
      this.mentions.el,
      this.commandMenu.el,
      row,
      this.error,
      keys,
    );
    if (draftKey) this.keepDraft(draftKey);
  }

  private keepDraft(key: string): void {
    const saved = drafts.get(key);
    if (saved) {
      this.input.value = saved.text;
      this.attachments = [...saved.attachments];
      this.renderChips();
      // The old view is gone; give the focus back once this one is in the page.
      if (saved.focused) queueMicrotask(() => this.input.isConnected && this.input.focus());
    }
    this.input.addEventListener("input", () => this.saveDraft(key, true));
    this.input.addEventListener("focus", () => this.saveDraft(key, true));
    // A blur caused by the view's removal keeps the focus for the next view.
    this.input.addEventListener("blur", () => this.saveDraft(key, !this.input.isConnected));
  }

  private saveDraft(key: string, focused: boolean): void {
    drafts.set(key, { text: this.input.value, focused, attachments: this.attachments });
  }

  /** Takes the focus (after a card was answered, when the panel opens). */
  focus(): void {
    if (!this.input.disabled) this.input.focus();
  }

  /** Disabled once the agent has exited. */
  setEnabled(enabled: boolean): void {
    if (this.enabled === enabled) return;
    this.enabled = enabled;
    this.applyEnabled();
  }

  /** Says, before anyone types, that only `owner` may prompt (null: this page may). */
  setLocked(owner: string | null): void {
    if (this.locked === owner) return;
    this.locked = owner;
    this.lockLine.hidden = owner === null;
    this.lockLine.replaceChildren(
      owner === null ? "" : tIsolated(this.t, "onlyOwnerPrompts", { owner }),
    );
    this.applyEnabled();
  }

  private applyEnabled(): void {
    const enabled = this.enabled && this.locked === null;
    this.input.disabled = !enabled;
    this.button.disabled = !enabled;
  }

  /** Attaches what the composer will send with the next prompt. */
  add(attachment: Attachment): void {
    if (this.attachments.length >= MAX_ATTACHMENTS) {
      this.showError(this.t("tooManyAttachments", { max: MAX_ATTACHMENTS }));
      return;
    }
    this.attachments.push(attachment);
    this.renderChips();
  }

  /** While a turn runs, Send queues the prompt behind it (the server holds the queue). */
  setQueueing(queueing: boolean): void {
    if (this.queueing === queueing) return;
    this.queueing = queueing;
    this.button.textContent = this.t(queueing ? "sendQueued" : "send");
    this.button.title = queueing ? this.t("sendQueuedTitle") : "";
  }

  /** Puts prompts that were not sent back before what is typed now. */
  giveBack(texts: readonly string[]): void {
    const value = [...texts, this.input.value].filter((t) => t.trim() !== "").join("\n\n");
    if (value === this.input.value) return;
    this.input.value = value;
    this.input.dispatchEvent(new Event("input")); // the draft keeps it
  }

  /** The agent's slash commands (the fold's `commands`). */
  setCommands(commands: readonly unknown[]): void {
    if (commands === this.commands) return;
    this.commands = commands;
    if (this.commandMenu.open) this.offerCommands();
  }

  /** Offers the agent's commands while the caret is in a `/word` the prompt starts with. */
  private offerCommands(): void {
    const at = commandAt(this.input.value, this.input.selectionStart ?? 0);
    if (at === null || this.commands.length === 0) {
      this.commandMenu.hide();
      return;
    }
    this.commandMenu.show(commandItems(this.commands, at.query), this.t("noCommands"));
  }

  /** `/name` picked: the prompt starts with it, and the caret waits for its input. */
  private command(name: string): void {
    this.commandMenu.hide();
    const caret = this.input.selectionStart ?? 0;
    const rest = this.input.value.slice(caret).replace(/^\S*/u, "").trimStart();
    this.input.value = `/${name} ${rest}`;
    const end = name.length + 2;
    this.input.setSelectionRange(end, end);
    this.input.dispatchEvent(new Event("input")); // the draft keeps it
  }

  /** Offers the kernel's variables while the caret is after an `@word`. */
  private async offerMentions(): Promise<void> {
    const at = mentionAt(this.input.value, this.input.selectionStart ?? 0);
    if (at === null) {
      this.variables = null; // the next `@` reads them again
      this.mentions.hide();
      return;
    }
    this.variables ??= this.request({ type: "chat:variables" }).then((result) => {
      if (result.ok) return result.ack?.variables ?? [];
      this.showError(describeError(this.t, result.code, result.detail));
      return null;
    });
    const variables = await this.variables;
    // The text may have changed while the kernel answered: match what is there now.
    const now = mentionAt(this.input.value, this.input.selectionStart ?? 0);
    if (variables === null || now === null) {
      this.mentions.hide();
      return;
    }
    this.mentions.show(matching(variables, now.query), this.t("noVariables"));
  }

  /** `@name` picked: the word becomes `@name`, and the variable's summary is attached. */
  private async mention(name: string): Promise<void> {
    const caret = this.input.selectionStart ?? 0;
    const at = mentionAt(this.input.value, caret);
    this.mentions.hide();
    this.variables = null;
    if (at !== null) {
      const text = this.input.value;
      this.input.value = `${text.slice(0, at.start)}@${name} ${text.slice(caret)}`;
      const end = at.start + name.length + 2;
      this.input.setSelectionRange(end, end);
      this.input.dispatchEvent(new Event("input")); // the draft keeps it
    }
    const result = await this.request({ type: "chat:mention", name });
    if (!result.ok) {
      this.showError(
        this.t("attachFailed", { detail: describeError(this.t, result.code, result.detail) }),
      );
    } else if (result.ack?.attachment) {
      this.add(result.ack.attachment);
    }
  }

  private async attachFiles(files: File[]): Promise<void> {
    this.error.hidden = true;
    for (const file of files) {
      try {
        this.add(await imageAttachment(file, file.name || "image"));
      } catch (error) {
        const detail = error instanceof AttachError ? error.message : String(error);
        this.showError(this.t("attachFailed", { detail }));
      }
    }
  }

  private renderChips(): void {
    const remove = (index: number, label: string): HTMLElement => {
      const button = el("button", "acpnb-attachment-remove", "×");
      button.type = "button";
      button.title = this.t("removeAttachment", { label });
      button.setAttribute("aria-label", button.title);
      button.addEventListener("click", () => {
        this.attachments.splice(index, 1);
        this.renderChips();
      });
      return button;
    };
    this.chips.replaceChildren(attachmentChips(this.attachments.map(summarize), remove));
    this.chips.hidden = this.attachments.length === 0;
    // Pasted while a turn runs: the view its end re-creates keeps them.
    if (this.draftKey) this.saveDraft(this.draftKey, drafts.get(this.draftKey)?.focused ?? false);
  }

  private showError(text: string): void {
    this.error.textContent = text;
    this.error.hidden = false;
  }

  private async submit(): Promise<void> {
    const text = this.input.value;
    if (text.trim() === "" || this.input.disabled) return;
    const attachments = this.attachments;
    this.input.value = "";
    this.attachments = [];
    this.renderChips();
    if (this.draftKey) drafts.delete(this.draftKey);
    this.error.hidden = true;
    const result = await this.request(
      attachments.length > 0
        ? { type: "chat:prompt", text, attachments }
        : { type: "chat:prompt", text },
    );
    if (!result.ok) {
      // Give the text back unless the user has started typing something new.
      if (this.input.value === "") this.input.value = text;
      if (this.attachments.length === 0) {
        this.attachments = attachments;
        this.renderChips();
      }
      this.showError(describeError(this.t, result.code, result.detail));
    }
  }
}
