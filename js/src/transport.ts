// The widget's link to the hub: a WebSocket to the server extension (server mode) or the
// anywidget comm to the kernel-hosted hub (comm mode). Both carry the same frames (Ack and
// EventBatch in contracts.ts); the rest of the widget cannot tell them apart.

import { type ConnectSlots, pageSlots } from "./connect_slots";
import { type Ack, CHAT_GONE, type ClientRequest, type StreamEvent } from "./contracts";
import { isRecord, pageConfig, str } from "./dom";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A request as the UI builds it; the client adds `chatId` and `id`. */
export type RequestBody = DistributiveOmit<ClientRequest, "chatId" | "id">;

/**
 * What became of a request: accepted (`ack` carries what some requests answer, e.g.
 * chat:variables), or an error code (DISCONNECTED when unsent, TIMEOUT when no ack came
 * within the request timeout).
 */
export type RequestResult =
  | { ok: true; ack?: Ack }
  | { ok: false; code: string; detail: string | null };

/** The part of the anywidget model the widget uses. */
export interface WidgetModel {
  get(name: string): unknown;
  on(event: string, callback: (...args: never[]) => void): void;
  off(event: string, callback: (...args: never[]) => void): void;
  send(content: unknown): void;
}

export type LinkStatus = "waiting" | "connecting" | "server" | "comm" | "closed";

export interface ClientHandlers {
  /**
   * A batch of events; `reset` when it is a resync's full history (state starts over,
   * from `snapshot` when the resync sent its ended turns folded into one); `viewer`: who
   * the page is to the owner gate, when a resync's ack says.
   */
  onEvents(events: StreamEvent[], reset: boolean, snapshot?: unknown, viewer?: unknown): void;
  onStatus(status: LinkStatus): void;
  /** The hub refused the resync (e.g. CHAT_NOT_FOUND after a kernel restart). */
  onResyncError(code: string, detail: string | null): void;
}

export interface ClientOptions {
  /** The WebSocket class (tests pass a fake). */
  WebSocket?: typeof WebSocket;
  /** Whether a socket that never opens falls back to the comm (the lab panel has none). */
  commFallback?: boolean;
  /** How long a request waits for its ack (tests shorten it). */
  requestTimeoutMs?: number;
  /** Who may connect a socket now (the page's, shared by every chat, by default). */
  slots?: ConnectSlots;
}

/** Why a request got no ack. */
type NoAck = "DISCONNECTED" | "TIMEOUT";

/**
 * A request whose ack does not come in this time fails with TIMEOUT, so no card stays
 * busy: a kernel that never relays it (comm mode, the kernel busy or gone), a lost
 * frame. Longer than the kernel's own wait for an ack (30 s).
 */
const REQUEST_TIMEOUT_MS = 45_000;

/** How long the first socket may take to open before the widget falls back to the comm. */
const OPEN_TIMEOUT_MS = 5000;
/** Reconnect delays double from 1 s up to this. */
const MAX_BACKOFF_MS = 30_000;
/** The server's close code for a chat that no longer exists (its kernel shut down). */

/** The server extension's browser socket URL, or null when this page is not a Jupyter server's. */
export function serverSocketUrl(kernelId: string, chatId: string): string | null {
  const baseUrl = str(pageConfig().baseUrl);
  if (baseUrl === null) return null;
  const query = `kernel=${encodeURIComponent(kernelId)}&chat=${encodeURIComponent(chatId)}`;
  const url = new URL(
    `${baseUrl.replace(/\/?$/, "/")}acp-notebook/ws/browser?${query}`,
    location.href,
  );
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.href;
}

/** What a refusal says, and why: the detail, the chat's reason, the agent's error data. */
export function ackDetail(ack: Ack): string | null {
  const parts = [ack.detail, ack.reason, ack.data].filter((p): p is string => Boolean(p));
  return parts.length > 0 ? parts.join(": ") : null;
}

export class ChatClient {
  private readonly prefix = Math.random().toString(36).slice(2, 10);
  private counter = 0;
  private readonly pending = new Map<
    string,
    { resolve: (ack: Ack | NoAck) => void; timer: ReturnType<typeof setTimeout> }
  >();
  private readonly requestTimeoutMs: number;
  private mode: LinkStatus = "waiting";
  private socket: WebSocket | null = null;
  private everOpened = false;
  private attempts = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly WS: typeof WebSocket | undefined;
  private readonly commFallback: boolean;
  private readonly slots: ConnectSlots;
  /** Why the server ended the chat, once it has (its CHAT_GONE close reason). */
  gone: string | null = null;
  /** Lets go of the connect slot of the socket being opened (or queued to be). */
  private letGo: () => void = () => {};

  private readonly onCustom = (msg: unknown): void => {
    if (this.mode === "comm") this.handleFrame(msg);
  };
  private readonly onTransportChange = (): void => this.start();

  constructor(
    private readonly model: WidgetModel,
    private readonly handlers: ClientHandlers,
    options: ClientOptions = {},
  ) {
    this.WS = options.WebSocket ?? globalThis.WebSocket;
    this.requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    this.commFallback = options.commFallback ?? true;
    this.slots = options.slots ?? pageSlots;
    model.on("msg:custom", this.onCustom);
    model.on("change:transport", this.onTransportChange);
  }

  private get chatId(): string {
    return String(this.model.get("chat_id") ?? "");
  }

  /** Picks the transport from the `transport` trait ("" = the kernel is still starting). */
  start(): void {
    this.closeSocket();
    const transport = this.model.get("transport");
    const url = serverSocketUrl(String(this.model.get("kernel_id") ?? ""), this.chatId);
    if (transport === "server" && url !== null && this.WS !== undefined) this.openSocket(url);
    else if (transport === "server" || transport === "comm") this.useComm();
    else this.setMode("waiting");
  }

  /** Sends a request; resolves when its ack arrives (or at once when there is no link). */
  async request(body: RequestBody): Promise<RequestResult> {
    const ack = await this.send(body);
    if (typeof ack === "string") return { ok: false, code: ack, detail: null };
    if (ack.error) return { ok: false, code: ack.error, detail: ackDetail(ack) };
    return { ok: true, ack };
  }

  dispose(): void {
    this.closeSocket();
    this.model.off("msg:custom", this.onCustom);
    this.model.off("change:transport", this.onTransportChange);
    this.failPending();
  }

  private nextId(): string {
    this.counter += 1;
    return `${this.prefix}-${this.counter}`;
  }

  private send(body: RequestBody): Promise<Ack | NoAck> {
    const id = this.nextId();
    const request = { ...body, chatId: this.chatId, id };
    const socket = this.socket;
    if (this.mode === "server" && socket !== null && socket.readyState === socket.OPEN) {
      socket.send(JSON.stringify(request));
    } else if (this.mode === "comm") {
      this.model.send(request);
    } else {
      return Promise.resolve("DISCONNECTED");
    }
    return this.ackOf(id);
  }

  /** The ack of the request `id` (sent, or asked for in a socket's URL). */
  private ackOf(id: string): Promise<Ack | NoAck> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(id, "TIMEOUT"), this.requestTimeoutMs);
      this.pending.set(id, { resolve, timer });
    });
  }

  private settle(id: string, ack: Ack | NoAck): void {
    const waiting = this.pending.get(id);
    if (waiting === undefined) return;
    this.pending.delete(id);
    clearTimeout(waiting.timer);
    waiting.resolve(ack);
  }

  /** Asks for the chat's history (`asked`: the ack of one asked for otherwise) and shows it. */
  private resync(asked?: Promise<Ack | NoAck>): void {
    // A long chat's ended turns come folded (a fraction of their events): painted at once.
    void (asked ?? this.send({ type: "chat:resync", snapshot: true })).then((ack) => {
      if (ack === "TIMEOUT") this.handlers.onResyncError(ack, null);
      else if (typeof ack === "string") return;
      else if (ack.error) this.handlers.onResyncError(ack.error, ackDetail(ack));
      else if (ack.accepted && Array.isArray(ack.events)) {
        const events = ack.events as unknown as StreamEvent[];
        this.handlers.onEvents(events, ack.reset !== false, ack.snapshot, ack.viewer);
      }
    });
  }

  private handleFrame(frame: unknown): void {
    if (!isRecord(frame)) return;
    if ("ack" in frame) {
      // Acks of other views of the same model arrive here too (comm broadcast): ignored.
      this.settle(String(frame.ack), frame as Ack);
    } else if (frame.chatId === this.chatId && Array.isArray(frame.events)) {
      this.handlers.onEvents(frame.events as StreamEvent[], false);
    }
  }

  private setMode(mode: LinkStatus): void {
    this.mode = mode;
    this.handlers.onStatus(mode);
  }

  private useComm(): void {
    this.setMode("comm");
    this.resync();
  }

  private openSocket(url: string): void {
    this.setMode("connecting");
    this.letGo = this.slots.take((release) => this.connect(url, release));
  }

  private connect(url: string, release: () => void): void {
    const WS = this.WS as typeof WebSocket;
    // The resync is asked for in the URL: the server answers it as the socket opens, a
    // round trip sooner than a request sent on the open event (a reloading page and its
    // server are busiest then; that round trip took 20-160 ms at a load of 6-10).
    const resyncId = this.nextId();
    const socket = new WS(`${url}&resync=${encodeURIComponent(resyncId)}`);
    this.socket = socket;
    if (!this.everOpened) {
      // The open event clears this timer: it fires only while the socket is not open.
      this.timer = setTimeout(() => {
        if (this.socket === socket) this.fallBack();
      }, OPEN_TIMEOUT_MS);
    }
    socket.onopen = () => {
      release();
      if (this.socket !== socket) return;
      this.everOpened = true;
      this.attempts = 0;
      clearTimeout(this.timer);
      this.setMode("server");
      // No message comes before the open event: its ack is waited for from here.
      this.resync(this.ackOf(resyncId));
    };
    socket.onmessage = (event: MessageEvent) => {
      if (this.socket !== socket || typeof event.data !== "string") return;
      try {
        this.handleFrame(JSON.parse(event.data));
      } catch {
        // A malformed frame is dropped; the next resync repairs any gap.
      }
    };
    socket.onclose = (event: CloseEvent) => {
      release();
      if (this.socket !== socket) return;
      this.socket = null;
      this.failPending();
      // Reconnecting cannot bring back a chat the server has ended.
      if (event.code === CHAT_GONE) {
        this.gone = event.reason;
        this.setMode("closed");
      } else if (!this.everOpened) this.fallBack();
      else this.reconnect(url);
    };
  }

  // The socket never opened: this page's server has no extension for us; use the comm.
  private fallBack(): void {
    this.closeSocket();
    if (this.commFallback) this.useComm();
    else this.setMode("closed");
  }

  // Only a socket's close event reconnects: dispose() has detached it before closing.
  private reconnect(url: string): void {
    this.setMode("connecting");
    const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** this.attempts);
    this.attempts += 1;
    this.timer = setTimeout(() => this.openSocket(url), delay);
  }

  private closeSocket(): void {
    clearTimeout(this.timer);
    this.letGo();
    const socket = this.socket;
    this.socket = null;
    if (socket !== null) {
      socket.onopen = socket.onmessage = socket.onclose = null;
      socket.close();
    }
  }

  private failPending(): void {
    for (const id of [...this.pending.keys()]) this.settle(id, "DISCONNECTED");
  }
}
