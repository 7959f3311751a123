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
