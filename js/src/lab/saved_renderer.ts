// The renderer of a chat's saved output (`application/vnd.acp-notebook.chat+json`), ranked
// above the widget view: the live chat over the browser socket while it exists on this
// server (once it is gone there, e.g. a server restart, the saved one with Continue), else the widget
// (a local-mode chat of a running kernel), else the saved transcript with Continue
// (../saved.ts).

import type { IRenderMime } from "@jupyterlab/rendermime-interfaces";
import { Panel } from "@lumino/widgets";
import { SAVED_MIME } from "../contracts";
import { el } from "../dom";
import { resolveLocale, type Translate, translator } from "../i18n";
import { acquire, type Live } from "../live";
import { mountChat, socketModel } from "../mount";
import { readSavedChat, renderSavedChat } from "../saved";
import { listChats, openChat } from "./api";

export const WIDGET_MIME = "application/vnd.jupyter.widget-view+json";
/** How long a local-mode chat's widget may take to appear before the saved one is shown. */
const WIDGET_WAIT_MS = 5000;
/**
 * How long a live chat's saved snapshot waits for the link. A reload's resync usually
 * comes first (the view ignores a saved snapshot once linked): painting both would build
 * the transcript twice, and the first build holds up the socket's open event.
 */
const SAVED_PAINT_WAIT_MS = 400;
/** Below the widget view's -10: JupyterLab prefers the lowest rank. */
export const SAVED_RANK = -20;

export interface NotebookLink {
  /** The widget view renderer of the output's notebook (null: it has none). */
  widgetRenderer(): IRenderMime.IRenderer | null;
  /** The kernel of the output's notebook, now. */
  kernelId(): string | null;
}

function localeOf(data: unknown): Translate {
  const locale = (data as { locale?: unknown }).locale;
  return translator(resolveLocale(typeof locale === "string" ? locale : ""));
}

/** A live chat view as `acquire` keeps it, with the saved snapshot's way in. */
interface LiveChat extends Live {
  paint(snapshot: unknown): void;
  /** Set once the chat is gone from the server; `onGone` tells the output showing it. */
  gone: boolean;
  onGone: (() => void) | null;
}

export class SavedChatRenderer extends Panel implements IRenderMime.IRenderer {
  private readonly host = el("div", "acpnb-saved-host");
  private release: (() => void) | null = null;
  private live: LiveChat | null = null;
  private inner: IRenderMime.IRenderer | null = null;
  private cleanup: (() => void) | null = null;
  /** What this output shows now, so that a re-render of the same chat keeps it. */
  private shown: { chatId: string; how: "live" | "widget" } | null = null;
  /** The newest saved data of the output (each turn end brings a newer one). */
  private data: unknown = null;

  constructor(private readonly link: NotebookLink) {
    super();
    this.addClass("acpnb-saved-output");
    this.node.append(this.host);
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = model.data[SAVED_MIME];
    const saved = readSavedChat(data);
    if (saved !== null) this.data = data;
    // Each turn end re-renders the output in place: the live view or widget stays.
    const shown = this.shown;
    if (saved !== null && shown?.chatId === saved.chatId) {
      if (shown.how === "widget") await this.inner?.renderModel(model);
      // Newer than the view's state only once its link is gone (the widget does the same).
      else this.live?.paint(saved.snapshot);
      return;
    }
    this.clear();
    if (saved === null) return;
    // A notebook from elsewhere shows what it saved; only a trusted one goes live.
    if (model.trusted && (await this.isLive(saved.kernelId, saved.chatId))) {
      this.showLive(saved.kernelId, saved.chatId, data);
      return;
    }
    // A local-mode chat (no kernel id: its hub is in the kernel) may still be in its kernel.
    const local = saved.kernelId === "" && WIDGET_MIME in model.data;
    if (model.trusted && local && (await this.showWidget(model, saved.chatId))) return;
    this.showSaved(data);
  }

  override dispose(): void {
    this.clear();
    super.dispose();
  }

  // One live view per chat, adopted across re-renders (each turn end re-renders the output).
  private showLive(kernelId: string, chatId: string, data: unknown): void {
    this.clear();
    const { live, release } = acquire(`${kernelId}/${chatId}`, () => {
      const chat = mountChat(
        socketModel(kernelId, chatId),
        localeOf(data),
        { commFallback: false },
        () => {
          made.gone = true;
          made.onGone?.();
        },
      );
      const paint = (snapshot: unknown): void => chat.view.paint(snapshot);
      const saved = (data as { snapshot?: unknown }).snapshot;
      const wait = setTimeout(() => paint(saved), SAVED_PAINT_WAIT_MS);
      const made: LiveChat = {
        el: chat.view.el,
        dispose: () => {
          clearTimeout(wait);
          chat.dispose();
        },
        paint,
        gone: false,
        onGone: null,
      };
      chat.client.start();
      return made;
    });
    const held = live as LiveChat;
    this.live = held;
    this.release = release;
    this.shown = { chatId, how: "live" };
    this.host.append(live.el);
    // Gone from the server (it restarted, the kernel ended): the saved chat, with Continue.
    held.onGone = () => this.showSaved(this.data);
    if (held.gone) held.onGone();
  }

  // The widget shows a local-mode chat while its kernel still has it; otherwise the widget
  // manager never finds the model ("Loading widget..." stays, or it says the model is
  // missing), and the saved transcript is shown instead.
  private async showWidget(model: IRenderMime.IMimeModel, chatId: string): Promise<boolean> {
    const inner = this.link.widgetRenderer();
    if (inner === null) return false;
    this.inner = inner;
    this.addWidget(inner);
    const waited = new Promise((resolve) => setTimeout(resolve, WIDGET_WAIT_MS));
    await Promise.race([inner.renderModel(model), waited]);
    const said = inner.node.textContent ?? "";
    if (said.startsWith("Loading widget") || said.startsWith("Error displaying widget")) {
      this.clear();
      return false;
    }
    this.shown = { chatId, how: "widget" };
    return true;
  }

  private showSaved(data: unknown): void {
    this.clear();
    this.cleanup = renderSavedChat(this.host, data, {
      t: localeOf(data),
      kernelId: () => this.link.kernelId(),
      showLive: (_, kernelId, chatId) => this.showLive(kernelId, chatId, data),
      openChat,
    });
  }

  private async isLive(kernelId: string, chatId: string): Promise<boolean> {
    if (kernelId === "" || chatId === "") return false;
    try {
      return (await listChats(kernelId)).some((c) => c.chatId === chatId);
    } catch {
      return false; // the kernel is gone (404) or the server has no extension
    }
  }

  private clear(): void {
    this.shown = null;
    if (this.live !== null) this.live.onGone = null;
    this.release?.();
    this.release = null;
    this.live = null;
    this.cleanup?.();
    this.cleanup = null;
    this.inner?.dispose();
    this.inner = null;
    this.host.replaceChildren();
  }
}
