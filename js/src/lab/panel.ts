// The Agent panel (right sidebar): the chats of the active notebook's kernel, the same
// ChatView as the inline widget over the same browser socket, so an answer given in
// either shows in both, and it works while the kernel is busy.

import type { NotebookPanel } from "@jupyterlab/notebook";
import { Widget } from "@lumino/widgets";
import { el, uid } from "../dom";
import { describeError, type Translate } from "../i18n";
import { type MountedChat, mountChat, socketModel } from "../mount";
import { type ChatInfo, listAgents, listChats, openChat } from "./api";
import { History } from "./history";

export class AgentPanel extends Widget {
  private readonly t: Translate;
  private readonly chatSelect = el("select", "acpnb-select acpnb-panel-chats");
  private readonly agentSelect = el("select", "acpnb-select acpnb-panel-agents");
  private readonly newButton: HTMLButtonElement;
  private readonly notice = el("div", "acpnb-panel-notice");
  private readonly body = el("div", "acpnb-panel-body");
  private notebook: NotebookPanel | null = null;
  private kernelId: string | null = null;
  /** The chat shown for each kernel, so switching notebooks back and forth keeps it. */
  private readonly chosen = new Map<string, string>();
  private mounted: { chatId: string; kernelId: string; chat: MountedChat } | null = null;
  private refreshing: Promise<void> | null = null;
  private agentsLoaded = false;
  private readonly history: History;
  /** The composer takes the focus once the chat is shown (the panel was opened to type). */
  private focusWanted = false;

  constructor(t: Translate) {
    super();
    this.t = t;
    this.id = "acp-notebook-panel";
    this.addClass("acpnb-panel");
    this.title.caption = t("panelCaption");
    this.newButton = el("button", "acpnb-btn acpnb-panel-new", t("newChat"));
    this.newButton.type = "button";
    this.notice.setAttribute("role", "status");
    this.history = new History(t, {
      kernelId: () => this.kernelId,
      agent: () => this.agentSelect.value,
      shown: () => this.mounted?.chat ?? null,
      show: (chatId) => this.choose(chatId),
    });
    this.agentSelect.addEventListener("change", () => this.history.refresh());
    this.node.append(this.head(), this.notice, this.history.el, this.body);
    this.chatSelect.addEventListener("change", () => {
      if (this.kernelId !== null && this.chatSelect.value !== "") {
        this.chosen.set(this.kernelId, this.chatSelect.value);
        this.showChat(this.kernelId, this.chatSelect.value);
      }
    });
    this.newButton.addEventListener("click", () => {
      void this.startChat(this.agentSelect.value).catch((e: unknown) => this.fail(e));
    });
    this.update();
  }

  /**
   * The panel's header: its title, the chat shown (a labelled picker) and, on a row of its
   * own, the agent of a new chat (a labelled picker) with the New chat button.
   */
  private head(): HTMLElement {
    const { t } = this;
    const head = el("header", "acpnb-panel-head");
    const title = el("h2", "acpnb-panel-title", t("panelTitle"));
    const field = (label: string, control: HTMLSelectElement, ...after: HTMLElement[]) => {
      control.id = uid();
      const name = el("label", "acpnb-panel-label", label);
      name.htmlFor = control.id;
      const controls = el("div", "acpnb-panel-controls");
      controls.append(control, ...after);
      return [name, controls];
    };
    this.agentSelect.title = t("newChatAgent");
    head.append(
      title,
      ...field(t("chat"), this.chatSelect),
      ...field(t("agent"), this.agentSelect, this.newButton),
    );
    return head;
  }

  /** Follows the active notebook (null: none is open). */
  setNotebook(panel: NotebookPanel | null): void {
    if (panel === this.notebook) return;
    const old = this.notebook;
    if (old !== null) {
      old.sessionContext.kernelChanged.disconnect(this.refresh, this);
      old.sessionContext.statusChanged.disconnect(this.onKernelStatus, this);
    }
    this.notebook = panel;
    if (panel !== null) {
      panel.sessionContext.kernelChanged.connect(this.refresh, this);
      panel.sessionContext.statusChanged.connect(this.onKernelStatus, this);
    }
    void this.refresh();
  }

  /** The chat shown in the panel, opened with the picked agent when there is none. */
  async ensureChat(): Promise<MountedChat | null> {
    await this.refresh();
    if (this.kernelId === null) {
      await this.notebook?.sessionContext.ready;
      await this.refresh();
    }
    if (this.mounted === null && this.kernelId !== null) {
      await this.startChat(this.agentSelect.value);
    }
    return this.mounted?.chat ?? null;
  }

  /** Sends `text` as a prompt to the panel's chat (opening one if needed). */
  async ask(text: string): Promise<void> {
    try {
      const chat = await this.ensureChat();
      if (chat === null) {
        this.say(this.t("panelNoKernel"));
        return;
      }
      if (!(await chat.connected())) return;
      const result = await chat.client.request({ type: "chat:prompt", text });
      if (!result.ok) chat.view.showError(describeError(this.t, result.code, result.detail));
    } catch (error) {
      this.fail(error);
    }
  }

  /** Focuses the shown chat's composer, or the next chat's once it is shown. */
  focusComposer(): void {
    if (this.mounted !== null && this.isVisible) this.mounted.chat.view.focusComposer();
    else this.focusWanted = true;
  }

  /** Re-reads the kernel's chats (and, once, the agents the server allows). */
  refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  protected override onAfterShow(): void {
    void this.refresh();
  }

  // A hidden panel holds no chat view (nor socket): the page has one chat view per output.
  protected override onAfterHide(): void {
    this.unmount();
  }

  override dispose(): void {
    this.setNotebook(null);
    this.unmount();
    super.dispose();
  }

  // A cell that just finished may have opened a chat (Chat("demo")): list it.
  private onKernelStatus(_: unknown, status: string): void {
    if (status === "idle") void this.refresh();
  }

  private async load(): Promise<void> {
    if (!this.agentsLoaded) {
      const { agents, default: preferred } = await listAgents().catch((e: unknown) => {
        this.fail(e);
        return { agents: [], default: "" };
      });
      this.agentsLoaded = agents.length > 0;
      this.agentSelect.replaceChildren(
        ...agents.map((name) => {
          const option = el("option", undefined, name);
          option.value = name;
          option.selected = name === preferred;
          return option;
        }),
      );
    }
    const kernelId = this.notebook?.sessionContext.session?.kernel?.id ?? null;
    this.kernelId = kernelId;
    this.history.refresh();
    if (!this.isVisible) return;
    this.newButton.disabled = kernelId === null || !this.agentsLoaded;
    if (kernelId === null) {
      this.listChats([]);
      this.unmount();
      this.say(this.t(this.notebook === null ? "panelNoNotebook" : "panelNoKernel"));
      return;
    }
    let chats: ChatInfo[];
    try {
      chats = await listChats(kernelId);
    } catch (error) {
      this.fail(error);
      return;
    }
    if (kernelId !== this.kernelId) return; // the notebook changed meanwhile
    this.listChats(chats);
    const remembered = this.chosen.get(kernelId);
    // The chat chosen before if it still exists, else the newest.
    const pick = chats.find((c) => c.chatId === remembered) ?? chats[chats.length - 1];
    if (pick === undefined) {
      this.unmount();
      this.say(this.t("panelNoChats"));
      return;
    }
    this.say(null);
    this.chosen.set(kernelId, pick.chatId);
    this.chatSelect.value = pick.chatId;
    this.showChat(kernelId, pick.chatId);
  }

  private listChats(chats: ChatInfo[]): void {
    this.chatSelect.replaceChildren(
      ...chats.map((c) => {
        const titled = c.title ? this.t("chatTitle", { agent: c.agent, title: c.title }) : c.agent;
        const named = c.waiting ? this.t("chatWaiting", { chat: titled }) : titled;
        const label =
          c.othersOwner === null
            ? named
            : this.t("chatOwnedBy", { chat: named, owner: c.othersOwner });
        const option = el("option", undefined, label);
        option.value = c.chatId;
        return option;
      }),
    );
    this.chatSelect.disabled = chats.length === 0;
  }

  private async startChat(agent: string): Promise<void> {
    const kernelId = this.kernelId;
    if (kernelId === null || agent === "") return;
    await this.choose(await openChat({ kernel: kernelId, agent }));
  }

  /** Shows the kernel's chat `chatId` (a new one, or one the history opened). */
  private async choose(chatId: string): Promise<void> {
    if (this.kernelId === null) return;
    this.chosen.set(this.kernelId, chatId);
    await this.refresh();
  }

  private showChat(kernelId: string, chatId: string): void {
    const current = this.mounted;
    if (current !== null && current.chatId === chatId && current.kernelId === kernelId) return;
    this.unmount();
    const chat = mountChat(socketModel(kernelId, chatId), this.t, { commFallback: false });
    this.mounted = { chatId, kernelId, chat };
    this.body.append(chat.view.el);
    chat.client.start();
    this.history.refresh();
    if (this.focusWanted) chat.view.focusComposer();
    this.focusWanted = false;
  }

  private unmount(): void {
    this.mounted?.chat.dispose();
    this.mounted = null;
    this.history.refresh();
  }

  private say(text: string | null): void {
    this.notice.textContent = text ?? "";
    this.notice.hidden = text === null;
  }

  private fail(error: unknown): void {
    this.say(this.t("failed", { reason: error instanceof Error ? error.message : String(error) }));
  }
}
