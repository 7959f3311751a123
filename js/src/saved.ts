// A saved chat (the `application/vnd.acp-notebook.chat+json` output) shown where its live
// chat is gone: a notebook reopened without its kernel, after a server restart, or a chat
// that ended with CHAT_GONE. The transcript is the chat view painting the saved snapshot,
// read-only; "Continue" asks the server for a new chat on the notebook's kernel that
// loads the agent's session, then hands the output over to the live chat.

import type { ConfirmContinue } from "./continue_confirm";
import { SESSION_ID_PATTERN } from "./contracts";
import { clip, el, isRecord, records, str } from "./dom";
import { initialState } from "./fold";
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
  /** The snapshot as far as it could be read (its items and tables checked). */
  snapshot: unknown;
  /** Items left out because they were not of a shape this page shows. */
  skipped: number;
  /** It was written by a newer version: what this page knows of it is shown. */
  newer: boolean;
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
  /** Why the chat ended, when the server said (its CHAT_GONE reason: closed, its kernel). */
  ended?: string | null;
  /** Shows what stands in for data that cannot be painted (see showUnreadable). */
  fallback?: (why: Unreadable | "savedBroken") => void;
}

/** Python: `contracts.valid_session_id`. The file is anyone's: an id that is too long or
 * holds spaces, control characters or direction marks is never sent to an agent. */
const SESSION_ID = new RegExp(SESSION_ID_PATTERN);

/** Why a saved chat cannot be shown at all (an i18n key). */
export type Unreadable = "savedNotAChat" | "savedVersion" | "savedNoSnapshot";

/** Python keeps 200 items (transcript.MAX_ITEMS); a notebook file holding far more was
 * not written by us: only its last items are shown (the earlier ones count as dropped). */
const MAX_SAVED_ITEMS = 1000;

/** An agent name longer than this is no agent's: shown cut, never sent. */
const MAX_AGENT = 200;

/** What stands for a string field that holds something else ("[number]"), not a blank. */
function placeholder(value: unknown): string {
  return `[${value === null ? "null" : Array.isArray(value) ? "array" : typeof value}]`;
}

function text(value: unknown): string {
  return str(value) ?? placeholder(value);
}

function numOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** One saved item as the view shows it, or null when it is not one it knows. */
function readItem(item: unknown): Record<string, unknown> | null {
  if (!isRecord(item)) return null;
  switch (item.type) {
    case "user":
      return Array.isArray(item.attachments)
        ? { type: "user", text: text(item.text), attachments: records(item.attachments) }
        : { type: "user", text: text(item.text) };
    case "error":
      return { type: "error", text: text(item.text) };
    case "stopped":
      return { type: "stopped", reason: text(item.reason) };
    case "agent":
      return { type: "agent", messageId: str(item.messageId), text: text(item.text) };
    case "thought":
      return {
        type: "thought",
        messageId: str(item.messageId),
        text: text(item.text),
        startTs: numOrNull(item.startTs),
        endTs: numOrNull(item.endTs),
      };
    case "tool":
      return typeof item.toolCallId === "string"
        ? { type: "tool", toolCallId: item.toolCallId }
        : null;
    case "permission":
    case "elicitation":
      return typeof item.requestId === "string"
        ? { type: item.type, requestId: item.requestId }
        : null;
    default:
      return null;
  }
}

/** A saved tool call with the fields the view reads of the types it reads them as. */
function readToolCall(id: string, call: Record<string, unknown>): Record<string, unknown> {
  return {
    ...call,
    toolCallId: id,
    title: str(call.title),
    kind: str(call.kind),
    status: str(call.status),
    content: records(call.content),
    locations: records(call.locations),
  };
}

function table(
  value: unknown,
  read: (id: string, entry: Record<string, unknown>) => Record<string, unknown> = (_, e) => e,
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  if (!isRecord(value)) return out;
  for (const [id, entry] of Object.entries(value)) if (isRecord(entry)) out[id] = read(id, entry);
  return out;
}

/** The saved version as a number: 1, or "1" as a string (a hand-edited file); NaN else. */
function versionOf(value: unknown): number {
  if (typeof value === "number") return value;
  return typeof value === "string" && /^[1-9][0-9]{0,5}$/.test(value) ? Number(value) : Number.NaN;
}

/**
 * The saved data as far as it can be shown, or why it cannot be (then the output's
 * `text/html` or a note stands in). The file is anyone's: what is of another shape than
 * ours is left out and counted, a string field holding something else shows as
 * "[number]", and a newer version shows what this page knows of it.
 */
export function readSaved(d: unknown): SavedChat | { unreadable: Unreadable } {
  if (!isRecord(d)) return { unreadable: "savedNotAChat" };
  const version = versionOf(d.version);
  if (!Number.isInteger(version) || version < 1) return { unreadable: "savedVersion" };
  const snap = d.snapshot;
  if (!isRecord(snap) || !Array.isArray(snap.items)) return { unreadable: "savedNoSnapshot" };
  const all: unknown[] = snap.items;
  const kept = all.slice(-MAX_SAVED_ITEMS);
  const items = kept.map(readItem).filter((item) => item !== null);
  const dropped = isRecord(snap.dropped) ? snap.dropped : {};
  const earlier = all.length - kept.length;
  const agentState = isRecord(snap.agent) ? snap.agent : {};
  const empty = initialState();
  const snapshot = {
    ...snap,
    // The view paints a snapshot newer than its empty state (seq 0).
    seq: Number.isInteger(snap.seq) && (snap.seq as number) > 0 ? snap.seq : 1,
    items,
    agent: {
      ...empty.agent,
      ...agentState,
      status: str(agentState.status) ?? "exited",
      name: agentState.name === undefined ? null : clip(text(agentState.name), MAX_AGENT),
    },
    turn: { ...empty.turn, ...(isRecord(snap.turn) ? snap.turn : {}) },
    toolCalls: table(snap.toolCalls, readToolCall),
    permissions: table(snap.permissions),
    elicitations: table(snap.elicitations),
    plan: records(snap.plan),
    commands: records(snap.commands),
    title: str(snap.title),
    ...(earlier > 0 || isRecord(snap.dropped)
      ? {
          dropped: {
            items: (numOrNull(dropped.items) ?? 0) + earlier,
            characters: numOrNull(dropped.characters) ?? 0,
          },
        }
      : {}),
  };
  const agent = str(d.agent);
  const named = agent !== null && agent.length <= MAX_AGENT;
  const sessionId = str(d.sessionId);
  const valid = sessionId !== null && SESSION_ID.test(sessionId);
  return {
    chatId: str(d.chatId) ?? "",
    kernelId: str(d.kernelId) ?? "",
    agent: clip(text(d.agent), MAX_AGENT),
    cwd: str(d.cwd),
    mode: str(d.mode),
    sessionId: valid ? sessionId : null,
    canLoad: d.canLoad === true && valid && named,
    badSessionId: d.canLoad === true && sessionId !== null && !valid,
    snapshot,
    skipped: kept.length - items.length,
    newer: version > 1,
  };
}

/** The saved data if it can be shown (see readSaved), else null. */
export function readSavedChat(d: unknown): SavedChat | null {
  const read = readSaved(d);
  return "unreadable" in read ? null : read;
}

/** The JSON size of `data` for the note of a saved chat that cannot be shown. */
function rawSize(data: unknown): string {
  let size: number;
  try {
    size = JSON.stringify(data)?.length ?? 0;
  } catch {
    size = 0;
  }
  if (size < 1024) return `${size} B`;
  return size < 1024 * 1024
    ? `${Math.round(size / 1024)} KB`
    : `${(size / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * Shows in `host` what stands in for saved data that cannot be painted: `html` (the
 * output's own `text/html` transcript, already sanitized) or else one line saying why,
 * with the data's size.
 */
export function showUnreadable(
  host: HTMLElement,
  data: unknown,
  why: Unreadable | "savedBroken",
  t: Translate,
  html: Node | null,
): void {
  if (html !== null) {
    host.replaceChildren(html);
    return;
  }
  const note = el("div", "acpnb-saved-unreadable", t(why, { size: rawSize(data) }));
  host.replaceChildren(note);
}

/**
 * Shows `data` (the saved chat output) in `host`: the transcript, read-only, and a Continue
 * button when the agent can load its session, and a note on what it left out (a newer
 * version's, items of unknown shapes). Returns the cleanup. For data it cannot paint,
 * `host` is left as it was and `deps.fallback` says why (the caller shows the output's
 * `text/html`, or a note). Call it where the live chat is missing: not on this server, or
 * its client reported the status "closed" (CHAT_GONE, e.g. after a server restart), or
 * where nobody can say whether it lives (`copyNote`).
 */
export function renderSavedChat(host: HTMLElement, data: unknown, deps: SavedChatDeps): () => void {
  const read = readSaved(data);
  const { t } = deps;
  if ("unreadable" in read) {
    deps.fallback?.(read.unreadable);
    return () => {};
  }
  const saved = read;
  const view = new ChatView({
    t,
    request: async () => ({ ok: false, code: "DISCONNECTED", detail: null }),
  });
  view.el.classList.add("acpnb-saved");
  // A copy's open questions stay as saved, but are not answered from here.
  view.inertCards();
  try {
    view.paint(saved.snapshot);
    if (deps.copyNote === null) view.endedWithServer(deps.ended ?? null);
    else view.savedCopy(deps.copyNote);
    // The first frame now (the last items); the earlier ones in later frames, so that no
    // file holds the page for long (see ChatView's TAIL_ITEMS).
    view.flush(false);
  } catch {
    // The notebook file is anyone's: a snapshot we cannot paint leaves the next renderer.
    view.dispose();
    deps.fallback?.("savedBroken");
    return () => {};
  }
  const notes = [
    ...(saved.newer ? [t("savedNewer")] : []),
    ...(saved.skipped === 1 ? [t("savedSkippedOne")] : []),
    ...(saved.skipped > 1 ? [t("savedSkipped", { count: saved.skipped.toLocaleString() })] : []),
  ];
  if (notes.length > 0) {
    view.el.firstElementChild?.after(el("div", "acpnb-saved-note", notes.join(" · ")));
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
