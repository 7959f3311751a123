// The server extension's REST endpoints (acp_notebook/server/api.py), through JupyterLab's
// ServerConnection: it adds the token or the XSRF header the server checks.

import { URLExt } from "@jupyterlab/coreutils";
import { ServerConnection } from "@jupyterlab/services";
import { isRecord, str } from "../dom";
import type { OpenChatBody } from "../saved";

export interface ChatInfo {
  chatId: string;
  agent: string;
  title: string | null;
  /** The ACP session its agent has open (null: not yet, or not this login's to see). */
  sessionId: string | null;
  /** The owner's name when it is not this page's login (the panel says whose chat it is). */
  othersOwner: string | null;
  /** A question of the chat waits for an answer this login may give. */
  waiting: boolean;
}

/** A refused request; `fromExtension`: the extension's own JSON answer, not a page of the server. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly fromExtension: boolean,
  ) {
    super(message);
  }
}

/** What the server says of a chat: it lives, it is gone, or nothing could be asked. */
export type Liveness = "live" | "gone" | "unknown";

export interface Agents {
  agents: string[];
  default: string;
}

async function call(path: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, "acp-notebook/api", path);
  const response = await ServerConnection.makeRequest(url, init, settings);
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // An error page, or nothing: the status says enough.
  }
  const record = isRecord(body) ? body : {};
  if (!response.ok) {
    const message = typeof record.message === "string" ? record.message : response.statusText;
    // Without the extension the route is the server's HTML 404 page, never a JSON message.
    const fromExtension = typeof record.message === "string";
    throw new ApiError(`${response.status} ${message}`, response.status, fromExtension);
  }
  return record;
}

export async function listAgents(): Promise<Agents> {
  const body = await call("agents");
  const agents = Array.isArray(body.agents) ? body.agents.filter((a) => typeof a === "string") : [];
  return { agents, default: str(body.default) ?? agents[0] ?? "" };
}

export async function listChats(kernelId: string): Promise<ChatInfo[]> {
  const body = await call(`chats?kernel=${encodeURIComponent(kernelId)}`);
  const chats = Array.isArray(body.chats) ? body.chats : [];
  return chats.flatMap((c: unknown): ChatInfo[] => {
    if (!isRecord(c)) return [];
    const chatId = str(c.chatId);
    if (chatId === null) return [];
    return [
      {
        chatId,
        agent: str(c.agent) ?? "",
        title: str(c.title),
        sessionId: str(c.sessionId),
        othersOwner: c.mine === true ? null : (str(c.ownerName) ?? str(c.owner)),
        waiting: c.waiting === true,
      },
    ];
  });
}

/**
 * Whether the chat lives on the kernel. The extension answers "gone" by not listing it, or
 * with its 404 for a kernel the server no longer has; no extension, a network failure or
 * any other refusal leaves it unknown.
 */
export async function chatLiveness(kernelId: string, chatId: string): Promise<Liveness> {
  try {
    return (await listChats(kernelId)).some((c) => c.chatId === chatId) ? "live" : "gone";
  } catch (error) {
    return error instanceof ApiError && error.status === 404 && error.fromExtension
      ? "gone"
      : "unknown";
  }
}

export async function openChat(options: OpenChatBody): Promise<string> {
  const body = await call("chats", { method: "POST", body: JSON.stringify(options) });
  const chatId = str(body.chatId);
  if (chatId === null) throw new Error("the server sent no chatId");
  return chatId;
}

/** One of the agent's past sessions, as the server lists it (bounded there and here). */
export interface PastSession {
  sessionId: string;
  title: string | null;
  /** Milliseconds since the epoch; null when the agent did not say. */
  updatedAt: number | null;
}

export interface SessionPage {
  sessions: PastSession[];
  nextCursor: string | null;
  /** What the agent does with its sessions: "load", "resume", "fork", "delete"... */
  offers: Set<string>;
  /** Why the agent lists none (it does not list its sessions, or failed to). */
  unavailable: string | null;
}

const MAX_SESSION_TITLE = 120;
const MAX_CURSOR = 1024;
const MAX_PAGE = 1000;

function sessionsPath(kernelId: string, agent: string, more: Record<string, string> = {}): string {
  const query = new URLSearchParams({ kernel: kernelId, agent, ...more });
  return `sessions?${query.toString()}`;
}

/** A page of the agent's sessions in the notebook's directory, from `cursor` on. */
export async function listSessions(
  kernelId: string,
  agent: string,
  cursor: string | null = null,
): Promise<SessionPage> {
  const body = await call(sessionsPath(kernelId, agent, cursor === null ? {} : { cursor }));
  const listed = Array.isArray(body.sessions) ? body.sessions.slice(0, MAX_PAGE) : [];
  const sessions = listed.flatMap((s: unknown): PastSession[] => {
    if (!isRecord(s)) return [];
    const sessionId = str(s.sessionId);
    if (sessionId === null) return [];
    const when = str(s.updatedAt);
    const updatedAt = when === null ? Number.NaN : Date.parse(when.slice(0, 64));
    const title = str(s.title);
    return [
      {
        sessionId,
        title: title === null || title === "" ? null : title.slice(0, MAX_SESSION_TITLE),
        updatedAt: Number.isNaN(updatedAt) ? null : updatedAt,
      },
    ];
  });
  const next = str(body.nextCursor);
  const offers = Array.isArray(body.offers) ? body.offers.filter((o) => typeof o === "string") : [];
  return {
    sessions,
    nextCursor: next !== null && next.length > 0 && next.length <= MAX_CURSOR ? next : null,
    offers: new Set(offers.slice(0, 16)),
    unavailable: str(body.unavailable),
  };
}

/** Forks one of the agent's sessions; the new session's id. */
export async function forkSession(
  kernelId: string,
  agent: string,
  sessionId: string,
): Promise<string> {
  const body = await call("sessions", {
    method: "POST",
    body: JSON.stringify({ kernel: kernelId, agent, fork: sessionId }),
  });
  const forked = str(body.sessionId);
  if (forked === null) throw new Error("the server sent no sessionId");
  return forked;
}

export async function deleteSession(
  kernelId: string,
  agent: string,
  sessionId: string,
): Promise<void> {
  await call(sessionsPath(kernelId, agent, { session: sessionId }), { method: "DELETE" });
}
