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
}

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
    throw new Error(`${response.status} ${message}`);
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
      },
    ];
  });
}

export async function openChat(options: OpenChatBody): Promise<string> {
  const body = await call("chats", { method: "POST", body: JSON.stringify(options) });
  const chatId = str(body.chatId);
  if (chatId === null) throw new Error("the server sent no chatId");
  return chatId;
}
