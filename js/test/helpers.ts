// Shared test doubles: a fake anywidget model and a recording request function.
import type { ElicitationField, StreamEvent } from "../src/contracts";
import { translator } from "../src/i18n";
import type { RequestBody, RequestResult } from "../src/transport";
import { ChatView } from "../src/view";

type Callback = (...args: never[]) => void;

/** A stand-in for the anywidget model: traits, events, and what the widget sent. */
export class FakeModel {
  readonly sent: Record<string, unknown>[] = [];
  private readonly handlers = new Map<string, Set<Callback>>();

  constructor(private readonly traits: Record<string, unknown>) {}

  get(name: string): unknown {
    return this.traits[name];
  }

  set(name: string, value: unknown): void {
    this.traits[name] = value;
    this.emit(`change:${name}`);
  }

  on(event: string, callback: Callback): void {
    const set = this.handlers.get(event) ?? new Set();
    set.add(callback);
    this.handlers.set(event, set);
  }

  off(event: string, callback: Callback): void {
    this.handlers.get(event)?.delete(callback);
  }

  send(content: unknown): void {
    this.sent.push(content as Record<string, unknown>);
  }

  save_changes(): void {}

  /** Delivers `args` to the listeners of `event` (e.g. "msg:custom"). */
  emit(event: string, ...args: unknown[]): void {
    for (const callback of this.handlers.get(event) ?? []) {
      (callback as (...a: unknown[]) => void)(...args);
    }
  }

  listeners(event: string): number {
    return this.handlers.get(event)?.size ?? 0;
  }
}

/** A request function that records each body and answers with the queued results (default ok). */
export function recorder(): {
  bodies: RequestBody[];
  results: RequestResult[];
  request: (body: RequestBody) => Promise<RequestResult>;
} {
  const bodies: RequestBody[] = [];
  const results: RequestResult[] = [];
  return {
    bodies,
    results,
    request: (body) => {
      bodies.push(body);
      return Promise.resolve(results.shift() ?? { ok: true });
    },
  };
}

let seq = 0;

/** Builds a stream event with the next seq number. */
export function ev(event: Record<string, unknown>): StreamEvent {
  seq += 1;
  return { seq, ts: 1_000_000 + seq, ...event } as unknown as StreamEvent;
}

export function chunk(text: string, kind = "agent_message_chunk", messageId = "m1"): StreamEvent {
  return ev({
    kind: "update",
    update: { sessionUpdate: kind, content: { type: "text", text }, messageId },
  });
}

export function elicitation(
  requestId: string,
  fields: ElicitationField[],
  extra: Record<string, unknown> = {},
): StreamEvent {
  return ev({ kind: "elicitation_request", requestId, message: "Pick one", fields, ...extra });
}

/** Lets pending promise callbacks (acks) run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** A stand-in for a WebSocket: what was sent, and the server's side of open, frames, close. */
export class FakeSocket {
  static readonly instances: FakeSocket[] = [];
  readonly OPEN = 1;
  readyState = 0;
  readonly sent: Record<string, unknown>[] = [];
  closed = false;
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: ((event: { code: number }) => void) | null = null;

  constructor(readonly url: string) {
    FakeSocket.instances.push(this);
  }

  send(data: string): void {
    this.sent.push(JSON.parse(data));
  }

  close(): void {
    this.closed = true;
  }

  open(): void {
    this.readyState = 1;
    this.onopen?.();
  }

  receive(frame: unknown): void {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }

  drop(code = 1006): void {
    this.readyState = 3;
    this.onclose?.({ code });
  }
}

const mounted: ChatView[] = [];

/**
 * A connected chat view in the page whose `apply` folds and paints at once, with the
 * requests it sends recorded; `unmountViews` (in an afterEach) takes it out again.
 */
export function mountedView() {
  const rec = recorder();
  const view = new ChatView({
    t: translator("en"),
    request: rec.request,
    schedule: () => () => {},
  });
  document.body.append(view.el);
  view.setConnected(true);
  mounted.push(view);
  const apply = (...events: StreamEvent[]): void => {
    view.apply(events, false);
    view.flush();
  };
  return { view, apply, ...rec };
}

export function unmountViews(): void {
  for (const view of mounted.splice(0)) view.el.remove();
}
