// What a saved chat output shows, decided from what the server or the kernel said of its
// chat: nothing may say the chat ended unless one of them answered that it is gone.

import type { Liveness } from "./api";

/** The live chat, the saved chat that ended (with Continue), or a saved copy saying only that. */
export type SavedShow = "live" | "ended" | "copy";

/**
 * A server-mode chat's output. An untrusted output (a collaborator's page before the
 * notebook is signed, an unsigned notebook) goes live only on the notebook's own kernel:
 * a file from elsewhere must not point the page at some other chat.
 */
export function savedShows(
  liveness: Liveness,
  trusted: boolean,
  savedKernel: string,
  notebookKernel: string | null,
): SavedShow {
  if (liveness === "gone") return "ended";
  if (liveness === "unknown") return "copy";
  return trusted || savedKernel === notebookKernel ? "live" : "copy";
}

/** What a local-mode chat's widget view shows: its chat, not yet, or the kernel has no such widget. */
export type WidgetShows = "shown" | "loading" | "missing" | "failed";

/** Read from the widget view's text (ipywidgets' WidgetRenderer says no more than that). */
export function widgetShows(text: string): WidgetShows {
  if (text.startsWith("Loading widget")) return "loading";
  // The widget manager asked the kernel and found no such model: the kernel lost the chat.
  if (text.startsWith("Error displaying widget: model not found")) return "missing";
  if (text.startsWith("Error displaying widget")) return "failed";
  return "shown";
}

/**
 * Resolves with what the widget view in `node` shows once it shows more than "Loading
 * widget...", or after `ms` with "loading".
 */
export function widgetOutcome(node: HTMLElement, ms: number): Promise<WidgetShows> {
  return new Promise((resolve) => {
    const done = (shows: WidgetShows): void => {
      observer.disconnect();
      clearTimeout(timer);
      resolve(shows);
    };
    const check = (): void => {
      const shows = widgetShows(node.textContent ?? "");
      if (shows !== "loading") done(shows);
    };
    const observer = new MutationObserver(check);
    const timer = setTimeout(() => done("loading"), ms);
    observer.observe(node, { childList: true, subtree: true, characterData: true });
    check();
  });
}
