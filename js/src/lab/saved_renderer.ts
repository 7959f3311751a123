// The renderer of a chat's saved output (`application/vnd.acp-notebook.chat+json`), ranked
// above the widget view. It says nothing of the chat's end before the server (or, for a
// local-mode chat, the kernel) answered: the live chat over the browser socket while the
// server lists it (an untrusted output: only on the notebook's own kernel); the saved chat
// that ended, with Continue (../saved.ts), once the server says it is gone; else the widget
// of a local-mode chat while its kernel has it, "waiting for the kernel" while the kernel
// has not answered; and where nobody can be asked, the saved copy saying only that.

import type { IRenderMime } from "@jupyterlab/rendermime-interfaces";
import { Panel } from "@lumino/widgets";
import { SAVED_MIME } from "../contracts";
import { el } from "../dom";
import { resolveLocale, type Translate, translator } from "../i18n";
import { acquire, adoptable, type Live } from "../live";
import { mountChat, socketModel } from "../mount";
import {
  readSaved,
  readSavedChat,
  renderSavedChat,
  showUnreadable,
  type Unreadable,
} from "../saved";
import { chatLiveness, openChat } from "./api";
import { confirmContinue } from "./confirm_continue";
import { savedShows, widgetOutcome } from "./saved_choice";

export const WIDGET_MIME = "application/vnd.jupyter.widget-view+json";
/**
 * How long a local-mode chat's widget view may say "Loading widget..." before it is made
 * again. The widget manager gives its renderers the manager once the notebook's kernel is
 * known, but only to the renderers it finds directly in the outputs, never to ours inside
 * this one; and while a cell blocks the kernel, it waits for the kernel's answer.
 */
const WIDGET_RETRY_MS = 5000;
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
  /** The notebook's kernel once its session is ready (null: it has none). */
  kernelReady(): Promise<string | null>;
}

function localeOf(data: unknown): Translate {
  const locale = (data as { locale?: unknown }).locale;
  return translator(resolveLocale(typeof locale === "string" ? locale : ""));
}

function liveKey(kernelId: string, chatId: string): string {
  return `${kernelId}/${chatId}`;
}

/** A live chat view as `acquire` keeps it, with the saved snapshot's way in. */
interface LiveChat extends Live {
  paint(snapshot: unknown): void;
  /** Set once the chat is gone from the server (with the server's why, if it said);
   * `onGone` tells the output showing it. */
  gone: boolean;
  why: string | null;
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
  /** The output's `text/html` transcript, shown when its saved data cannot be. */
  private html: unknown = null;
  /** Bumped by every clear: a render still waiting for an answer then knows it is stale. */
  private generation = 0;
  /** Whether the output's notebook is trusted: if not, Continue asks first. */
  private trusted = false;

  constructor(
    private readonly link: NotebookLink,
    private readonly sanitizer: IRenderMime.ISanitizer,
  ) {
    super();
    this.addClass("acpnb-saved-output");
    this.node.append(this.host);
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = model.data[SAVED_MIME];
    this.trusted = model.trusted;
    const read = readSaved(data);
    const saved = "unreadable" in read ? null : read;
    if (saved !== null) this.data = data;
    this.html = model.data["text/html"] ?? null;
    // Each turn end re-renders the output in place: the live view or widget stays.
    const shown = this.shown;
    if (saved !== null && shown?.chatId === saved.chatId) {
      if (shown.how === "widget") await this.inner?.renderModel(model);
      // Newer than the view's state only once its link is gone (the widget does the same).
      else this.live?.paint(saved.snapshot);
      return;
    }
    this.clear();
    if (saved === null) {
      if ("unreadable" in read) this.showFallback(data, read.unreadable);
      return;
    }
    const generation = this.generation;
    // A local-mode chat (no kernel id: its hub is in the kernel) is asked of the kernel,
    // for as long as it takes: the render is done once the saved copy shows.
    if (saved.kernelId === "") {
      if (WIDGET_MIME in model.data) void this.showWidget(model, saved.chatId, generation);
      else this.paintSaved(data, "savedTranscript");
      return;
    }
    // A re-render of an output this page showed live a moment ago (a shared notebook's
    // output comes anew at every turn end) takes its view back at once.
    if (adoptable(liveKey(saved.kernelId, saved.chatId))) {
      this.showLive(saved.kernelId, saved.chatId, data);
      return;
    }
    const notebookKernel = model.trusted ? null : await this.link.kernelReady();
    const liveness = await chatLiveness(saved.kernelId, saved.chatId);
    if (generation !== this.generation) return;
    const shows = savedShows(liveness, model.trusted, saved.kernelId, notebookKernel);
    if (shows === "live") this.showLive(saved.kernelId, saved.chatId, data);
    else this.paintSaved(data, shows === "ended" ? null : "savedTranscript");
  }

  override dispose(): void {
    this.clear();
    super.dispose();
  }

  // One live view per chat, adopted across re-renders (each turn end re-renders the output).
  private showLive(kernelId: string, chatId: string, data: unknown): void {
    this.clear();
    const { live, release } = acquire(liveKey(kernelId, chatId), () => {
      const chat = mountChat(
        socketModel(kernelId, chatId),
        localeOf(data),
        { commFallback: false },
        (why) => {
          made.gone = true;
          made.why = why;
          made.onGone?.();
        },
      );
      const paint = (snapshot: unknown): void => chat.view.paint(snapshot);
      const saved = readSavedChat(data)?.snapshot;
      const wait = setTimeout(() => paint(saved), SAVED_PAINT_WAIT_MS);
      const made: LiveChat = {
        el: chat.view.el,
        dispose: () => {
          clearTimeout(wait);
          chat.dispose();
        },
        paint,
        gone: false,
        why: null,
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
    held.onGone = () => {
      const why = held.why;
      this.clear();
      this.paintSaved(this.data, null, why);
    };
    if (held.gone) held.onGone();
  }

  // The widget shows a local-mode chat while its kernel still has it. Until the widget
  // manager has asked the kernel (a cell that blocks it holds the answer up), the saved
  // copy says "waiting for the kernel" and the view is made again every WIDGET_RETRY_MS;
  // once the manager says the kernel has no such model, the chat ended with its kernel.
  private async showWidget(
    model: IRenderMime.IMimeModel,
    chatId: string,
    generation: number,
  ): Promise<void> {
    this.paintSaved(this.data, "waitingForKernel");
    for (;;) {
      const kernel = await this.link.kernelReady();
      // The widget manager registers its renderer for the kernel right after (a task later).
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (generation !== this.generation) return;
      const inner = kernel === null ? null : this.link.widgetRenderer();
      if (inner === null) {
        this.paintSaved(this.data, "savedTranscript");
        return;
      }
      this.inner = inner;
      inner.hide();
      this.addWidget(inner);
      void inner.renderModel(model);
      const shows = await widgetOutcome(inner.node, WIDGET_RETRY_MS);
      if (generation !== this.generation) return;
      if (shows === "shown") {
        this.paintSaved(null, null);
        inner.show();
        this.shown = { chatId, how: "widget" };
        return;
      }
      inner.dispose();
      this.inner = null;
      if (shows !== "loading") {
        this.paintSaved(this.data, shows === "missing" ? null : "savedTranscript");
        return;
      }
    }
  }

  /**
   * The saved chat in the host (null data: nothing). `note` null: the server or the kernel
   * said the chat is gone, so it ended (`why`, if the server said); else the status line of
   * a copy that says only that.
   */
  private paintSaved(
    data: unknown,
    note: "savedTranscript" | "waitingForKernel" | null,
    why: string | null = null,
  ): void {
    this.cleanup?.();
    this.cleanup = null;
    this.host.replaceChildren();
    if (data === null) return;
    const t = localeOf(data);
    this.cleanup = renderSavedChat(this.host, data, {
      t,
      kernelId: () => this.link.kernelId(),
      showLive: (_, kernelId, chatId) => this.showLive(kernelId, chatId, data),
      openChat,
      confirm: this.trusted ? null : (what) => confirmContinue(t, what),
      copyNote: note === null ? null : t(note),
      ended: why,
      fallback: (why) => this.showFallback(data, why),
    });
  }

  /**
   * What a saved chat this page cannot show leaves: the output's `text/html` transcript,
   * sanitized as JupyterLab's HTML renderer does untrusted HTML (always: the file is
   * anyone's), else a line saying why.
   */
  private showFallback(data: unknown, why: Unreadable | "savedBroken"): void {
    let html: HTMLElement | null = null;
    if (typeof this.html === "string" && this.html !== "") {
      html = el("div", "acpnb-saved-fallback jp-RenderedHTMLCommon");
      html.innerHTML = this.sanitizer.sanitize(this.html);
    }
    showUnreadable(this.host, data, why, localeOf(data), html);
  }

  private clear(): void {
    this.generation += 1;
    this.shown = null;
    if (this.live !== null) this.live.onGone = null;
    this.release?.();
    this.release = null;
    this.live = null;
    this.paintSaved(null, null);
    this.inner?.dispose();
    this.inner = null;
  }
}
