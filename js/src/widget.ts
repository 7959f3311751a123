// The anywidget entry: one live chat (view + transport) per output, kept across
// re-renders of that output (live.ts).

import "./widget.css";
import { resolveLocale, translator } from "./i18n";
import { acquire, type Live } from "./live";
import { mountChat } from "./mount";
import type { WidgetModel } from "./transport";

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
  const chat = mountChat(model, t);
  const { view, client } = chat;
  const onSnapshot = (): void => view.paint(readSnapshot(model));
  model.on("change:snapshot", onSnapshot);
  onSnapshot();
  view.showLocalReason(String(model.get("local_reason") ?? ""));
  client.start();
  return {
    el: view.el,
    shown: () => view.refocus(),
    dispose(): void {
      model.off("change:snapshot", onSnapshot);
      chat.dispose();
    },
  };
}

function render({ model, el }: { model: WidgetModel; el: HTMLElement }): () => void {
  const key = `${String(model.get("kernel_id") ?? "")}/${String(model.get("chat_id") ?? "")}`;
  const { live, release } = acquire(key, () => liveChat(model));
  el.append(live.el);
  live.shown?.();
  return release;
}

export default { render };
