// The anywidget entry: one live chat (view + transport) per output, kept across
// re-renders of that output (live.ts).

import { resolveLocale, translator } from "./i18n";
import { acquire, type Live } from "./live";
import { mountChat } from "./mount";
import type { WidgetModel } from "./transport";
// The stylesheet's text (the build's text loader): added to the page once, by addStyles.
import styles from "./widget.css";

let styled = false;

/**
 * Adds the widget's stylesheet to the page unless a copy is there: the lab extension's
 * (JupyterLab loads it with the extension), or one an earlier view added. A second copy
 * after the extension's would be a second load of every rule (VS Code and other hosts
 * have only this one).
 */
function addStyles(): void {
  if (styled) return;
  styled = true;
  const root = document.documentElement;
  if (getComputedStyle(root).getPropertyValue("--acpnb-styles").trim() !== "") return;
  const style = document.createElement("style");
  style.dataset.acpnb = "widget";
  style.textContent = styles;
  document.head.append(style);
}

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

/**
 * A `%%agent` view's (`TurnView`) `from_item` or `to_item` trait; undefined for a chat's
 * own model, which has none (the whole chat).
 */
function place(model: WidgetModel, trait: "from_item" | "to_item"): number | undefined {
  const value = Number(model.get(trait));
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

function liveChat(model: WidgetModel): Live {
  const t = translator(resolveLocale(String(model.get("locale") ?? "")));
  const from = place(model, "from_item");
  const chat = mountChat(model, t, {}, undefined, from, place(model, "to_item") ?? 0);
  const { view, client } = chat;
  const onSnapshot = (): void => view.paint(readSnapshot(model));
  const onEnd = (): void => view.endAt(place(model, "to_item") ?? 0);
  model.on("change:snapshot", onSnapshot);
  model.on("change:to_item", onEnd);
  onSnapshot();
  view.showLocalReason(String(model.get("local_reason") ?? ""));
  client.start();
  return {
    el: view.el,
    shown: () => view.refocus(),
    dispose(): void {
      model.off("change:snapshot", onSnapshot);
      model.off("change:to_item", onEnd);
      chat.dispose();
    },
  };
}

function render({ model, el }: { model: WidgetModel; el: HTMLElement }): () => void {
  addStyles();
  // A view from one turn on is a view of its own, not the whole chat's.
  const from = place(model, "from_item");
  const key = `${String(model.get("kernel_id") ?? "")}/${String(model.get("chat_id") ?? "")}${from === undefined ? "" : `@${from}`}`;
  const { live, release } = acquire(key, () => liveChat(model));
  el.append(live.el);
  live.shown?.();
  return release;
}

export default { render };
