// What the JupyterLab extension lends the chat views of its page. The widget bundle and
// the lab extension are separate bundles of one page: the hooks go through globalThis.

export interface LabHooks {
  /** Puts `code` in a new code cell below the active cell of the active notebook; never runs it. */
  insertCellBelow(code: string): boolean;
  /**
   * Whether one of JupyterLab's shortcuts for this key is bound to an element between the
   * event's target and `top` (both included): one that would act on what holds the chat.
   */
  boundWithin?(event: KeyboardEvent, top: Element): boolean;
  /**
   * A question of chat `chatId` waits (`key` names it); `notice`: the page's focus is
   * elsewhere, so a notification offers `jump` (true once a card took the focus).
   */
  cardOpened?(chatId: string, key: string, notice: { text: string; jump(): boolean } | null): void;
  /** The question `key` of chat `chatId` no longer waits (answered, or its view is gone). */
  cardClosed?(chatId: string, key: string): void;
}

const shared = globalThis as typeof globalThis & { __acpnbLab?: LabHooks };

export function setLabHooks(hooks: LabHooks | undefined): void {
  if (hooks === undefined) delete shared.__acpnbLab;
  else shared.__acpnbLab = hooks;
}

/** The extension's hooks, when it is in the page. */
export function labHooks(): LabHooks | undefined {
  return shared.__acpnbLab;
}
