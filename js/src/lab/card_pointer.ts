// The pointer a cell shows when its prompt made the agent ask (kernel/card_pointer.py): the
// card is in the chat's own output, often a screen away, so the cell names it and its
// button brings it into view and focuses it. Once answered, the kernel updates the
// output to say so.

import { clip, codeTitle, el, str } from "../dom";
import { type Translate, tIsolated } from "../i18n";
import { JUMP_EVENT } from "../waiting";

export interface Pointer {
  chatId: string;
  requestId: string;
  kind: "question" | "permission";
  title: string;
  agent: string;
  settled: boolean;
}

/** The pointer in an output's data, its strings bounded; null if it is not one. */
export function readPointer(data: unknown): Pointer | null {
  if (typeof data !== "object" || data === null) return null;
  const d = data as Record<string, unknown>;
  const chatId = str(d.chatId);
  const requestId = str(d.requestId);
  if (chatId === null || requestId === null) return null;
  return {
    chatId: clip(chatId, 200),
    requestId: clip(requestId, 200),
    kind: d.kind === "permission" ? "permission" : "question",
    title: clip(str(d.title) ?? "", 200),
    agent: clip(str(d.agent) ?? "", 100),
    settled: d.settled === true,
  };
}

/**
 * The open card of `pointer` that a person can see, the one nearest `from` first (a view
 * of the chat in the same notebook before the Agent panel's); null when none shows it.
 */
export function findCard(pointer: Pointer, from: Element): HTMLElement | null {
  const cards: HTMLElement[] = [];
  for (const root of document.querySelectorAll<HTMLElement>(".acpnb-root")) {
    if (root.dataset.chat !== pointer.chatId) continue;
    for (const card of root.querySelectorAll<HTMLElement>(".acpnb-card")) {
      if (card.dataset.requestId === pointer.requestId) cards.push(card);
    }
  }
  const notebook = from.closest(".jp-Notebook");
  const shown = cards.filter((card) => card.getClientRects().length > 0);
  const pool = shown.length > 0 ? shown : cards;
  return pool.find((card) => notebook?.contains(card)) ?? pool[0] ?? null;
}

/**
 * Shows the pointer in `data` in `node` (its output: the lab extension's renderer of
 * POINTER_MIME), with a button that sends its card JUMP_EVENT.
 */
export function showPointer(node: HTMLElement, data: unknown, t: Translate): void {
  const pointer = readPointer(data);
  node.replaceChildren();
  node.classList.toggle("acpnb-pointer-settled", pointer?.settled === true);
  if (pointer === null) return;
  const agent = pointer.agent || t("agentCellMark");
  // A tool call's title may quote code ("Run `ls`"): shown as code, as in its card.
  const title = el("q", "acpnb-pointer-title");
  title.append(codeTitle(pointer.title));
  const line = el("p", "acpnb-pointer-text");
  if (pointer.settled) {
    line.append(tIsolated(t, "pointerSettled", { agent, title }));
    node.append(line);
    return;
  }
  const key = pointer.kind === "permission" ? "pointerPermission" : "pointerQuestion";
  line.append(tIsolated(t, key, { agent, title }));
  const go = el("button", "acpnb-btn acpnb-send");
  go.type = "button";
  go.textContent = t(pointer.kind === "permission" ? "goToPermission" : "goToQuestion");
  const note = el("p", "acpnb-pointer-note");
  note.setAttribute("role", "status");
  go.addEventListener("click", () => {
    const card = findCard(pointer, node);
    if (card === null) note.textContent = t("pointerNotShown");
    else card.dispatchEvent(new CustomEvent(JUMP_EVENT));
  });
  node.append(line, go, note);
}
