// The anywidget entry: one live chat (view + transport) per output, kept across
// re-renders of that output (live.ts).

import "./widget.css";
import { describeError, resolveLocale, translator } from "./i18n";
import { acquire, type Live } from "./live";
import { ChatClient, type WidgetModel } from "./transport";
import { ChatView } from "./view";

/** The `snapshot` trait: a JSON object, or its JSON text. */
function readSnapshot(model: WidgetModel): unknown {
  const value = model.get("snapshot");
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return null;
  }
}

function liveChat(model: WidgetModel): Live {
  const t = translator(resolveLocale(String(model.get("locale") ?? "")));
  const view = new ChatView({
    t,
    request: (body) => client.request(body),
    draftKey: String(model.get("chat_id") ?? ""),
  });
  const client = new ChatClient(model, {
    onEvents: (events, reset) => view.apply(events, reset),
    onStatus: (status) => {
      view.setConnected(status === "server" || status === "comm");
      if (status === "closed") view.endedWithServer();
    },
    onResyncError: (code, detail) => view.showError(describeError(t, code, detail)),
  });
  const onSnapshot = (): void => view.paint(readSnapshot(model));
  model.on("change:snapshot", onSnapshot);
  onSnapshot();
  client.start();
  return {
    el: view.el,
    dispose(): void {
      model.off("change:snapshot", onSnapshot);
      client.dispose();
      view.dispose();
      view.el.remove();
    },
  };
}

function render({ model, el }: { model: WidgetModel; el: HTMLElement }): () => void {
  const key = `${String(model.get("kernel_id") ?? "")}/${String(model.get("chat_id") ?? "")}`;
  const { live, release } = acquire(key, () => liveChat(model));
  el.append(live.el);
  return release;
}

export default { render };
