// The Agent panel's history: the agent's past sessions in the notebook's directory
// (session/list through the server, paged), searched by title; open one (session/load,
// else session/resume; a session some chat has open shows that chat), fork one or the
// shown chat, delete one after a confirmation.

import { Dialog, showDialog } from "@jupyterlab/apputils";
import { Widget } from "@lumino/widgets";
import { el, isRecord } from "../dom";
import { describeError, isolate, type Translate, tIsolated } from "../i18n";
import type { MountedChat } from "../mount";
import {
  deleteSession,
  forkSession,
  listSessions,
  openChat,
  type PastSession,
  type SessionPage,
} from "./api";
import { addPage, PAGE_ROWS, relativeTime, SEARCH_PAGES, shownRows } from "./history_list";

export interface HistoryHost {
  kernelId(): string | null;
  /** The agent whose sessions are listed: the one the panel starts new chats with. */
  agent(): string;
  /** The chat the panel shows. */
  shown(): MountedChat | null;
  /** Shows the kernel's chat `chatId` in the panel. */
  show(chatId: string): Promise<void>;
}

/** Whether the chat's agent advertises `sessionCapabilities.fork` (null: not known yet). */
function forks(chat: MountedChat): boolean | null {
  const caps = chat.view.agent().capabilities;
  if (caps === null) return null;
  const sessions = caps.sessionCapabilities;
  return isRecord(sessions) && isRecord(sessions.fork);
}

export class History {
  readonly el = el("div", "acpnb-history");
  private readonly toggle: HTMLButtonElement;
  private readonly forkChat: HTMLButtonElement;
  private readonly body = el("div", "acpnb-history-body");
  private readonly search = el("input", "acpnb-history-search");
  private readonly list = el("ul", "acpnb-history-list");
  private readonly status = el("div", "acpnb-history-status");
  private readonly more: HTMLButtonElement;
  /** Which kernel and agent `entries` are of. */
  private key = "";
  private entries: PastSession[] = [];
  private page: SessionPage | null = null;
  private count = PAGE_ROWS;
  /** Pages the current search fetched by itself. */
  private searched = 0;
  private loading: Promise<void> | null = null;
  /** Bumped when the list starts over: a page asked for before is dropped. */
  private generation = 0;

  constructor(
    private readonly t: Translate,
    private readonly host: HistoryHost,
  ) {
    this.toggle = this.button("acpnb-history-toggle", t("history"), () => this.expand());
    this.toggle.setAttribute("aria-expanded", "false");
    this.forkChat = this.button("acpnb-history-fork-chat", t("forkChat"), () => {
      void this.forkShown();
    });
    this.forkChat.title = t("forkHint");
    this.more = this.button("acpnb-history-more", t("historyMore"), () => this.showMore());
    this.search.type = "search";
    this.search.placeholder = t("historySearch");
    this.search.setAttribute("aria-label", t("historySearch"));
    this.search.addEventListener("input", () => {
      this.count = PAGE_ROWS;
      this.searched = 0;
      this.render();
      void this.fill();
    });
    this.status.setAttribute("role", "status");
    this.list.setAttribute("aria-label", t("history"));
    this.body.hidden = true;
    this.body.append(this.search, this.list, this.status, this.more);
    const bar = el("div", "acpnb-history-bar");
    bar.append(this.toggle, this.forkChat);
    this.el.append(bar, this.body);
    this.refresh();
  }

  /** The panel's kernel, agent or chat changed: a new list, if it is of another pair. */
  refresh(): void {
    const shown = this.host.shown();
    this.forkChat.disabled = shown === null || forks(shown) === false;
    const kernelId = this.host.kernelId();
    this.toggle.disabled = kernelId === null || this.host.agent() === "";
    const key = `${kernelId}\u0000${this.host.agent()}`;
    if (key === this.key) return;
    this.key = key;
    this.startOver();
  }

  private button(className: string, label: string, click: () => void): HTMLButtonElement {
    const button = el("button", `acpnb-btn ${className}`, label);
    button.type = "button";
    button.addEventListener("click", click);
    return button;
  }

  private expand(): void {
    const open = this.body.hidden;
    this.body.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
    if (open) this.startOver();
  }

  private startOver(): void {
    this.generation += 1;
    this.entries = [];
    this.page = null;
    this.loading = null;
    this.count = PAGE_ROWS;
    this.searched = 0;
    this.render();
    if (!this.body.hidden) void this.fetch().then(() => this.fill());
  }

  /** The next page (the first if none yet), once at a time. */
  private fetch(): Promise<void> {
    if (this.loading === null) {
      const loading = this.fetchPage().finally(() => {
        if (this.loading === loading) this.loading = null; // not a list started over since
      });
      this.loading = loading;
    }
    return this.loading;
  }

  private async fetchPage(): Promise<void> {
    const kernelId = this.host.kernelId();
    const agent = this.host.agent();
    if (kernelId === null || agent === "") return;
    const generation = this.generation;
    const cursor = this.page?.nextCursor ?? null;
    this.say(this.t("historyLoading"));
    try {
      const page = await listSessions(kernelId, agent, cursor);
      if (generation !== this.generation) return;
      this.page = page;
      this.entries = addPage(this.entries, page.sessions);
    } catch (error) {
      if (generation === this.generation) this.fail(error);
      return;
    }
    this.render();
  }

  /** A search fetches further pages by itself, a few, until its rows are full. */
  private async fill(): Promise<void> {
    const query = this.search.value;
    while (
      this.searched < SEARCH_PAGES &&
      this.page?.nextCursor != null &&
      shownRows(this.entries, query, this.count).rows.length < this.count
    ) {
      this.searched += 1;
      const before = this.page;
      await this.fetch();
      if (this.page === before || query !== this.search.value) return;
    }
  }

  private showMore(): void {
    const { hidden } = shownRows(this.entries, this.search.value, this.count);
    this.count += PAGE_ROWS;
    if (hidden) {
      this.render();
      return;
    }
    void this.fetch();
  }

  private render(): void {
    const { t } = this;
    const agent = this.host.agent();
    const page = this.page;
    const { rows, hidden } = shownRows(this.entries, this.search.value, this.count);
    const now = Date.now();
    this.list.replaceChildren(...rows.map((session) => this.row(session, agent, page, now)));
    this.more.hidden = !hidden && page?.nextCursor == null;
    if (page === null) return;
    if (page.unavailable !== null) {
      this.say(
        t("historyUnavailable", { agent: isolate(agent), reason: isolate(page.unavailable) }),
      );
    } else if (rows.length > 0) {
      this.say(null);
    } else {
      this.say(t(this.entries.length === 0 ? "historyEmpty" : "historyNoMatch"));
    }
  }

  private row(
    session: PastSession,
    agent: string,
    page: SessionPage | null,
    now: number,
  ): HTMLElement {
    const { t } = this;
    const offers = page?.offers ?? new Set<string>();
    const item = el("li", "acpnb-history-row");
    item.dataset.sessionId = session.sessionId;
    const open = this.button("acpnb-history-open", "", () => this.open(agent, session.sessionId));
    // An untitled session goes by its agent's name, as chats do.
    open.append(el("bdi", undefined, session.title ?? agent));
    open.title = t("historyOpenHint");
    open.disabled = !offers.has("load") && !offers.has("resume");
    const when = el("span", "acpnb-history-when");
    if (session.updatedAt !== null) {
      when.textContent = relativeTime(session.updatedAt, now);
      when.title = new Date(session.updatedAt).toLocaleString();
    }
    item.append(open, when);
    if (offers.has("fork")) {
      const fork = this.button("acpnb-history-fork", t("fork"), () => {
        void this.forkListed(agent, session.sessionId);
      });
      fork.title = t("forkHint");
      item.append(fork);
    }
    if (offers.has("delete")) {
      item.append(
        this.button("acpnb-history-delete", t("delete"), () => void this.remove(agent, session)),
      );
    }
    return item;
  }

  private async open(agent: string, sessionId: string): Promise<void> {
    const kernel = this.host.kernelId();
    if (kernel === null) return;
    this.say(this.t("historyOpening"));
    try {
      // The server answers with the chat that has the session open already, if one has.
      await this.host.show(await openChat({ kernel, agent, loadSessionId: sessionId }));
      this.say(null);
    } catch (error) {
      this.fail(error);
    }
  }

  private async forkListed(agent: string, sessionId: string): Promise<void> {
    const kernel = this.host.kernelId();
    if (kernel === null) return;
    this.say(this.t("forking"));
    try {
      await forkSession(kernel, agent, sessionId);
    } catch (error) {
      this.fail(error);
      return;
    }
    this.startOver(); // both branches, from the top
  }

  private async forkShown(): Promise<void> {
    const shown = this.host.shown();
    const kernel = this.host.kernelId();
    // The agent's name as the server knows it (its ready status), to open the fork with.
    const agent = shown?.view.agent().name ?? null;
    if (shown === null || kernel === null || agent === null) return;
    if (forks(shown) === false) {
      this.say(this.t("forkUnavailable", { agent: isolate(agent) }));
      return;
    }
    this.say(this.t("forking"));
    try {
      const result = await shown.client.request({ type: "chat:fork" });
      if (!result.ok) {
        this.say(describeError(this.t, result.code, result.detail));
        return;
      }
      const sessionId = result.ack?.sessionId;
      if (typeof sessionId !== "string") throw new Error("the fork's ack named no session");
      await this.host.show(await openChat({ kernel, agent, loadSessionId: sessionId }));
      this.say(null);
    } catch (error) {
      this.fail(error);
      return;
    }
    if (!this.body.hidden) this.startOver();
  }

  private async remove(agent: string, session: PastSession): Promise<void> {
    const kernel = this.host.kernelId();
    if (kernel === null) return;
    const name = session.title ?? agent;
    const question = el("p");
    question.append(tIsolated(this.t, "deleteSessionBody", { title: name, agent }));
    const answer = await showDialog({
      title: this.t("deleteSessionTitle"),
      body: new Widget({ node: question }),
      buttons: [
        Dialog.cancelButton({ label: this.t("cancel") }),
        Dialog.warnButton({ label: this.t("delete") }),
      ],
      // Nothing is deleted unless the person chose Delete.
      defaultButton: 0,
    });
    if (!answer.button.accept) return;
    try {
      await deleteSession(kernel, agent, session.sessionId);
    } catch (error) {
      this.fail(error);
      return;
    }
    this.entries = this.entries.filter((s) => s.sessionId !== session.sessionId);
    this.render();
  }

  private say(text: string | null): void {
    this.status.textContent = text ?? "";
    this.status.hidden = text === null;
  }

  private fail(error: unknown): void {
    this.say(this.t("failed", { reason: error instanceof Error ? error.message : String(error) }));
  }
}
