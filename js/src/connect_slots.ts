// How many of the page's chat sockets may be connecting at once. Chromium delays each new
// WebSocket of a page by a time that doubles with every connection still pending
// (1-5 s × 2^pending / 65536): a notebook of twenty live chats opening their sockets
// together waited up to seconds for the last ones. A few at a time wait about a
// millisecond each, the rest queue behind them.

/** Sockets connecting at once, page-wide. */
export const MAX_CONNECTING = 4;

export class ConnectSlots {
  private busy = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly max = MAX_CONNECTING) {}

  /**
   * Runs `connect` once a slot is free, with `release` to call when its socket has opened
   * or failed. Returns what lets go: a connect still queued never runs, a running one
   * gives its slot back (either, once).
   */
  take(connect: (release: () => void) => void): () => void {
    let state: "queued" | "running" | "done" = "queued";
    const release = (): void => {
      if (state === "queued") this.queue.splice(this.queue.indexOf(run), 1);
      else if (state === "running") {
        this.busy -= 1;
        this.queue.shift()?.();
      }
      state = "done";
    };
    const run = (): void => {
      state = "running";
      this.busy += 1;
      connect(release);
    };
    if (this.busy < this.max) run();
    else this.queue.push(run);
    return release;
  }
}

/** The page's slots, shared by every chat client. */
export const pageSlots = new ConnectSlots();
