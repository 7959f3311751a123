// A saved chat (the `application/vnd.acp-notebook.chat+json` output) shown where its live
// chat is gone: a notebook reopened without its kernel, after a server restart, or a chat
// that ended with CHAT_GONE. The transcript is the chat view painting the saved snapshot,
// read-only; "Continue" asks the server for a new chat on the notebook's kernel that
// loads the agent's session, then hands the output over to the live chat.

import type { ConfirmContinue } from "./continue_confirm";
import { SESSION_ID_PATTERN } from "./contracts";
import { el, isRecord, str } from "./dom";
import { isolate, type Translate, tIsolated } from "./i18n";
import { ChatView } from "./view";

/** What readSavedChat makes of the output's data (`SavedChatData`, Python: `transcript.saved_chat`). */
export interface SavedChat {
  chatId: string;
  kernelId: string;
  agent: string;
  cwd: string | null;
  mode: string | null;
  sessionId: string | null;
  canLoad: boolean;
  /** It says it can load, with a session id no agent gave (see `SESSION_ID`). */
  badSessionId: boolean;
  snapshot: unknown;
}

/** The body of `POST acp-notebook/api/chats` (never a mode: the file's is anyone's). */
export interface OpenChatBody {
  kernel: string;
  agent: string;
  cwd?: string;
  loadSessionId?: string;
}

export interface SavedChatDeps {
  t: Translate;
  /** The notebook's kernel now, or null while it has none (Continue then says so). */
  kernelId(): string | null;
  /** Shows the live chat `chatId` of `kernelId` in `host` (emptied first). */
  showLive(host: HTMLElement, kernelId: string, chatId: string): void;
  /** Opens the chat; resolves to its id or rejects with a readable reason. */
  openChat(body: OpenChatBody): Promise<string>;
  /** Asked once per click on Continue in an untrusted notebook; null when it is trusted. */
  confirm: ConfirmContinue | null;
  /**
   * Null once the server (or the kernel) said the chat is gone: its open questions are shown
   * cancelled and the chat exited, with Continue. Otherwise the chat may live on where this
   * page cannot see it: the status line says only this (a saved transcript, waiting for
   * the kernel), and there is no Continue.
   */
  copyNote: string | null;
}

/** Python: `contracts.valid_session_id`. The file is anyone's: an id that is too long or
 * holds spaces, control characters or direction marks is never sent to an agent. */
const SESSION_ID = new RegExp(SESSION_ID_PATTERN);

/** Python keeps 200 items (transcript.MAX_ITEMS); a notebook file holding far more was
 * not written by us, and is not painted item by item. */
const MAX_SAVED_ITEMS = 1000;

/** The saved data if it is one we can show (version 1, a snapshot), else null. */
export function readSavedChat(d: unknown): SavedChat | null {
  if (!isRecord(d)) return null;
  const agent = str(d.agent);
  const items = isRecord(d.snapshot) ? d.snapshot.items : null;
  if (d.version !== 1 || agent === null) return null;
  if (!Array.isArray(items) || items.length > MAX_SAVED_ITEMS) return null;
  const sessionId = str(d.sessionId);
  const valid = sessionId !== null && SESSION_ID.test(sessionId);
  return {
    chatId: str(d.chatId) ?? "",
    kernelId: str(d.kernelId) ?? "",
    agent,
    cwd: str(d.cwd),
    mode: str(d.mode),
    sessionId: valid ? sessionId : null,
    canLoad: d.canLoad === true && valid,
    badSessionId: d.canLoad === true && sessionId !== null && !valid,
    snapshot: d.snapshot,
  };
}

/**
 * Shows `data` (the saved chat output) in `host`: the transcript, read-only, and a Continue
 * button when the agent can load its session. Returns the cleanup. `host` is left as it
 * was for data that is not a saved chat we can paint (the caller falls back to the
 * output's `text/html`). Call it where the live chat is missing: not on this server, or
 * its client reported the status "closed" (CHAT_GONE, e.g. after a server restart), or
 * where nobody can say whether it lives (`copyNote`).
 */
export function renderSavedChat(host: HTMLElement, data: unknown, deps: SavedChatDeps): () => void {
  const saved = readSavedChat(data);
  const { t } = deps;
  if (saved === null) return () => {};
  const view = new ChatView({
    t,
    request: async () => ({ ok: false, code: "DISCONNECTED", detail: null }),
  });
  view.el.classList.add("acpnb-saved");
  try {
    view.paint(saved.snapshot);
    if (deps.copyNote === null) view.endedWithServer();
    else view.savedCopy(deps.copyNote);
    view.flush();
    // A copy's open questions stay as saved, but are not answered from here.
    for (const card of view.el.querySelectorAll(".acpnb-card")) card.setAttribute("inert", "");
  } catch {
    // The notebook file is anyone's: a snapshot we cannot paint leaves the next renderer.
    view.dispose();
    return () => {};
  }
  // A copy's chat may live on elsewhere: continuing its session would make two of it.
  if (deps.copyNote === null) {
    const bar = el("div", "acpnb-continue");
    bar.setAttribute("aria-label", t("savedTranscript"));
    const note = el("span", "acpnb-continue-note");
    bar.append(note);
    if (saved.canLoad && saved.sessionId !== null) {
      const sessionId = saved.sessionId;
      const button = el("button", "acpnb-btn acpnb-continue-btn", t("continueChat"));
      button.type = "button";
      button.title = t("continueHint", { agent: isolate(saved.agent) });
      button.addEventListener("click", async () => {
        const kernel = deps.kernelId();
        if (kernel === null) {
          note.textContent = t("continueNoKernel");
          return;
        }
        button.disabled = true; // one question, one request per click
        const what = { agent: saved.agent, cwd: saved.cwd, sessionId };
        if (deps.confirm !== null && !(await deps.confirm(what))) {
          button.disabled = false;
          note.textContent = t("continueDeclined");
          return;
        }
        note.replaceChildren(tIsolated(t, "continuing", { agent: saved.agent }));
        const body: OpenChatBody = { kernel, agent: saved.agent, loadSessionId: sessionId };
        if (saved.cwd !== null) body.cwd = saved.cwd;
        deps.openChat(body).then(
          (chatId) => {
            cleanup();
            deps.showLive(host, kernel, chatId);
          },
          (error: unknown) => {
            button.disabled = false;
            note.textContent = t("failed", {
              reason: isolate(String((error as Error)?.message ?? error)),
            });
          },
        );
      });
      bar.prepend(button);
    } else if (saved.badSessionId) {
      note.textContent = t("continueBadSession");
    } else {
      note.replaceChildren(tIsolated(t, "continueUnavailable", { agent: saved.agent }));
    }
    view.el.append(bar);
  }
  host.replaceChildren(view.el);
  const cleanup = (): void => {
    view.dispose();
    view.el.remove();
  };
  return cleanup;
}
