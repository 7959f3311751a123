// The anywidget entry: one chat view per output, fed by the transport.

import "./widget.css";
import { describeError, resolveLocale, translator } from "./i18n";
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

function render({ model, el }: { model: WidgetModel; el: HTMLElement }): () => void {
  const t = translator(resolveLocale(String(model.get("locale") ?? "")));
  const view = new ChatView({
    t,
    request: (body) => client.request(body),
    draftKey: String(model.get("chat_id") ?? ""),
  });
  const client = new ChatClient(model, {
    onEvents: (events, reset) => view.apply(events, reset),
    onStatus: (status) => view.setConnected(status === "server" || status === "comm"),
    onResyncError: (code, detail) => view.showError(describeError(t, code, detail)),
  });
  const onSnapshot = (): void => view.paint(readSnapshot(model));
  model.on("change:snapshot", onSnapshot);
  el.append(view.el);
  onSnapshot();
  client.start();
  return () => {
    model.off("change:snapshot", onSnapshot);
    client.dispose();
    view.dispose();
    view.el.remove();
  };
}

export default { render };
