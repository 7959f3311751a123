// One chat view fed by one client: what the inline widget and the lab panel both show.

import { describeError, type Translate } from "./i18n";
import { ChatClient, type ClientOptions, type LinkStatus, type WidgetModel } from "./transport";
import { ChatView } from "./view";

export interface MountedChat {
  readonly view: ChatView;
  readonly client: ChatClient;
  /** Resolves once the link is up (at once if it is); false if it closed first. */
  connected(): Promise<boolean>;
  dispose(): void;
}

/**
 * `onGone` runs once the chat is gone from the server (CHAT_GONE), with the server's why;
 * `fromItem`, `toItem`: the view shows that part of the chat (ViewOptions).
 */
export function mountChat(
  model: WidgetModel,
  t: Translate,
  options: ClientOptions = {},
  onGone?: (why: string | null) => void,
  fromItem?: number,
  toItem = 0,
): MountedChat {
  let status: LinkStatus = "waiting";
  let waiters: ((up: boolean) => void)[] = [];
  const setStatus = (next: LinkStatus): void => {
    status = next;
    view.setConnected(next === "server" || next === "comm");
    if (next === "closed") {
      view.endedWithServer(client.gone);
      onGone?.(client.gone);
    }
    if (next === "connecting" || next === "waiting") return;
    for (const wake of waiters) wake(next !== "closed");
    waiters = [];
  };
  const view = new ChatView({
    t,
    request: (body) => client.request(body),
    draftKey: String(model.get("chat_id") ?? ""),
    chatId: String(model.get("chat_id") ?? ""),
    ...(fromItem === undefined ? {} : { fromItem }),
    toItem,
  });
  const client = new ChatClient(
    model,
    {
      onEvents: (events, reset, snapshot, viewer) => view.apply(events, reset, snapshot, viewer),
      onStatus: setStatus,
      onResyncError: (code, detail) => view.showError(describeError(t, code, detail)),
    },
    options,
  );
  return {
    view,
    client,
    connected() {
      if (status === "server" || status === "comm") return Promise.resolve(true);
      if (status === "closed") return Promise.resolve(false);
      return new Promise((resolve) => waiters.push(resolve));
    },
    dispose() {
      for (const wake of waiters) wake(false);
      waiters = [];
      client.dispose();
      view.dispose();
      view.el.remove();
    },
  };
}

/** A model for a chat reached only over the server's browser socket (no kernel comm). */
export function socketModel(kernelId: string, chatId: string): WidgetModel {
  const traits: Record<string, string> = {
    chat_id: chatId,
    kernel_id: kernelId,
    transport: "server",
  };
  return { get: (name) => traits[name], on() {}, off() {}, send() {} };
}
