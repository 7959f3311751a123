// Which of JupyterLab's shortcuts would act on what holds a chat (keys.ts asks, through
// the lab hooks): a binding whose selector matches the key's target or an ancestor up to
// `top` (the notebook of an inline chat, the panel's chat itself).

import type { CommandRegistry } from "@lumino/commands";

interface Binding {
  readonly keys: readonly string[];
  readonly selector: string;
}

function matches(node: Element, selector: string): boolean {
  try {
    return node.matches(selector);
  } catch {
    return false; // a selector the browser cannot read binds nothing here
  }
}

/** Whether a binding that starts with `keystroke` is bound from `target` up to `top`. */
export function boundBetween(
  bindings: readonly Binding[],
  keystroke: string,
  target: Element,
  top: Element,
): boolean {
  if (keystroke === "") return false;
  const chain: Element[] = [];
  for (let node: Element | null = target; node !== null; node = node.parentElement) {
    chain.push(node);
    if (node === top) break;
  }
  return bindings.some((b) => b.keys[0] === keystroke && chain.some((n) => matches(n, b.selector)));
}

/** `boundBetween` for a keydown, with the application's bindings and keyboard layout. */
export function boundWithin(
  commands: CommandRegistry,
  event: KeyboardEvent,
  top: Element,
): boolean {
  // The registry's own class: the page's keyboard layout is set on JupyterLab's copy.
  const registry = commands.constructor as typeof CommandRegistry;
  const target = event.target;
  if (!(target instanceof Element)) return false;
  return boundBetween(commands.keyBindings, registry.keystrokeForKeydownEvent(event), target, top);
}
