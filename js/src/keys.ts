// Keys typed in a chat stay in the chat. JupyterLab's shortcuts match the focused control
// itself (the notebook's command-mode bindings select `:focus:not(:read-write)` under
// `.jp-Notebook`), before an ancestor's `data-lm-suppress-shortcuts` is looked at: so `b`
// on a chat's button inserted a cell and `d d` would delete the chat's own. A listener on
// the window, in the capture phase, runs before JupyterLab's (on the document, captured in
// Notebook 7, bubbling in JupyterLab) and marks the key's target for this key: suppressed
// when the chat answers the key or a shortcut would act on what holds the chat; free when
// only page-wide shortcuts (Ctrl+S, Ctrl+Shift+Y, the palette) are bound to it.

import { labHooks } from "./lab_hooks";

const SUPPRESS = "data-lm-suppress-shortcuts";

/** Keys the chat's controls answer themselves (send, stop, move within a group, press). */
const OWN = new Set([
  "Enter",
  "Escape",
  " ",
  "Tab",
  "ArrowUp",
  "ArrowDown",
  "ArrowLeft",
  "ArrowRight",
  "Home",
  "End",
  "PageUp",
  "PageDown",
]);

export function chatOwns(event: KeyboardEvent): boolean {
  return !(event.ctrlKey || event.metaKey || event.altKey) && OWN.has(event.key);
}

/**
 * Whether JupyterLab must not see this key: the chat owns it, or (`bound`) a shortcut is
 * bound inside what holds the chat. Without the extension's answer, no key is let through.
 */
export function keptFromLab(event: KeyboardEvent, bound: boolean | undefined): boolean {
  return chatOwns(event) || bound !== false;
}

function gate(event: KeyboardEvent): void {
  const target = event.target;
  if (!(target instanceof Element)) return;
  const root = target.closest(".acpnb-root");
  if (root === null) return;
  // An inline chat lives in a notebook's output: the notebook's bindings act on its cells.
  const top = root.closest(".jp-Notebook") ?? root;
  const bound = labHooks()?.boundWithin?.(event, top);
  if (keptFromLab(event, bound)) target.setAttribute(SUPPRESS, "true");
  else target.removeAttribute(SUPPRESS);
}

const shared = globalThis as typeof globalThis & { __acpnbKeyGate?: boolean };

/** Installs the page's gate once (both bundles' views call it). */
export function keepKeysInChats(): void {
  if (shared.__acpnbKeyGate || typeof window === "undefined") return;
  shared.__acpnbKeyGate = true;
  window.addEventListener("keydown", gate, true);
}
