// A chat's live view outlives one render of its output. Jupyter re-renders an output on
// every update_display_data (each turn end refreshes the saved transcript in it): the
// old view is disposed (or just dropped from the page) and a new one renders a moment
// later. A new view per render would open one more socket and fetch the whole history
// again; instead the new render adopts the live view the old one let go of.

/** How long a live view no render holds waits for the next render of its output. */
export const PARK_MS = 3000;

export interface Live {
  readonly el: HTMLElement;
  /** A render put `el` in its output (the focus a re-render took away goes back). */
  shown?(): void;
  dispose(): void;
}

interface Entry {
  live: Live;
  /** Renders holding the view; when the last one lets go it is parked, then disposed. */
  users: number;
  parked: ReturnType<typeof setTimeout> | undefined;
}

const entries = new Map<string, Entry[]>();

/**
 * Whether `el` was taken out of its output by a re-render (its output node is gone from
 * its ancestors), rather than being shown elsewhere or scrolled out with its cell.
 */
function orphaned(el: HTMLElement): boolean {
  return !el.isConnected && el.closest(".jp-OutputArea-output") === null;
}

/** The entry of `key` that a new render may adopt: no render holds it, or its output is gone. */
function free(list: Entry[]): Entry | undefined {
  return list.find((e) => e.users === 0) ?? list.find((e) => orphaned(e.live.el));
}

/** Whether a live view of `key` waits for the next render of its output to adopt it. */
export function adoptable(key: string): boolean {
  return free(entries.get(key) ?? []) !== undefined;
}

/**
 * The live view of `key` (one chat) that no output shows any more, or a new one from
 * `create`. `release` is the render's cleanup. The key is the chat's ids, not the model
 * object: anywidget hands each render a model proxy of its own.
 */
export function acquire(key: string, create: () => Live): { live: Live; release(): void } {
  const list = entries.get(key) ?? [];
  entries.set(key, list);
  let entry = free(list);
  if (entry === undefined) {
    entry = { live: create(), users: 0, parked: undefined };
    list.push(entry);
  }
  clearTimeout(entry.parked);
  entry.users += 1;
  const held = entry;
  let released = false;
  return {
    live: held.live,
    release(): void {
      if (released) return;
      released = true;
      held.users -= 1;
      if (held.users > 0) return;
      held.live.el.remove();
      held.parked = setTimeout(() => {
        list.splice(list.indexOf(held), 1);
        if (list.length === 0) entries.delete(key);
        held.live.dispose();
      }, PARK_MS);
    },
  };
}
