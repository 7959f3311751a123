// @vitest-environment jsdom
// The transport: comm and WebSocket links, resync on (re)connect, acks matched by id.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConnectSlots, MAX_CONNECTING } from "../src/connect_slots";
import type { StreamEvent } from "../src/contracts";
import { ChatClient, type LinkStatus, serverSocketUrl } from "../src/transport";
import { FakeModel, FakeSocket, settle } from "./helpers";

function client(traits: Record<string, unknown>, slots = new ConnectSlots()) {
  const model = new FakeModel({ chat_id: "c1", kernel_id: "k1", ...traits });
  const batches: { events: StreamEvent[]; reset: boolean; snapshot?: unknown; viewer?: unknown }[] =
    [];
  const statuses: LinkStatus[] = [];
  const errors: string[] = [];
  const c = new ChatClient(
    model,
    {
      onEvents: (events, reset, snapshot, viewer) =>
        batches.push({ events, reset, snapshot, viewer }),
      onStatus: (status) => statuses.push(status),
      onResyncError: (code) => errors.push(code),
    },
    { WebSocket: FakeSocket as unknown as typeof WebSocket, slots },
  );
  return { model, client: c, batches, statuses, errors };
}

const EVENT = { kind: "turn_started", seq: 1, prompt: "hi" };

function configData(baseUrl: string): void {
  const node = document.createElement("script");
  node.id = "jupyter-config-data";
  node.type = "application/json";
  node.textContent = JSON.stringify({ baseUrl });
  document.body.append(node);
}

beforeEach(() => {
  document.body.replaceChildren();
  FakeSocket.instances.length = 0;
});

afterEach(() => {
  vi.useRealTimers();
});

describe("comm transport", () => {
  it("resyncs on start and rebuilds from the ack's history", async () => {
    const { model, client: c, batches, statuses } = client({ transport: "comm" });
    c.start();
    expect(statuses).toEqual(["comm"]);
    const [resync] = model.sent;
    expect(resync).toMatchObject({ type: "chat:resync", chatId: "c1" });
    expect(typeof resync?.id).toBe("string");
    model.emit("msg:custom", { ack: resync?.id, accepted: true, reset: true, events: [EVENT] });
    await settle();
    expect(batches).toEqual([{ events: [EVENT], reset: true }]);
    model.emit("msg:custom", { chatId: "c1", events: [{ ...EVENT, seq: 2 }] });
    c.dispose();
  });

  it("asks for the ended turns as a snapshot and hands it on with the events after it and who the page is", async () => {
    const { model, client: c, batches } = client({ transport: "comm" });
    c.start();
    const [resync] = model.sent;
    expect(resync).toMatchObject({ type: "chat:resync", snapshot: true });
    const snap = { seq: 9, items: [] };
    const viewer = { id: "token-holders", name: "Anonymous Mneme" };
    model.emit("msg:custom", {
      ack: resync?.id,
      accepted: true,
      reset: true,
      events: [EVENT],
      snapshot: snap,
      viewer,
    });
    await settle();
    expect(batches).toEqual([{ events: [EVENT], reset: true, snapshot: snap, viewer }]);
    c.dispose();
  });

  it("passes events of its chat only", async () => {
    const { model, client: c, batches } = client({ transport: "comm" });
    c.start();
    model.emit("msg:custom", {
      ack: model.sent[0]?.id,
      accepted: true,
      reset: true,
      events: [EVENT],
    });
    await settle();
    model.emit("msg:custom", { chatId: "c1", events: [{ ...EVENT, seq: 2 }] });
    model.emit("msg:custom", { chatId: "other", events: [{ ...EVENT, seq: 3 }] });
    expect(batches.slice(1)).toEqual([{ events: [{ ...EVENT, seq: 2 }], reset: false }]);
    c.dispose();
  });

  it("reports a refused resync", async () => {
    const { model, client: c, batches, errors } = client({ transport: "comm" });
    c.start();
    model.emit("msg:custom", { ack: model.sent[0]?.id, error: "CHAT_NOT_FOUND" });
    await settle();
    expect(errors).toEqual(["CHAT_NOT_FOUND"]);
    expect(batches).toEqual([]);
    c.dispose();
  });

  it("matches acks by id, ignores other views' acks, and reports errors", async () => {
    const { model, client: c } = client({ transport: "comm" });
    c.start();
    const done = c.request({ type: "chat:prompt", text: "go" });
    const sent = model.sent[1];
    expect(sent).toMatchObject({ type: "chat:prompt", chatId: "c1", text: "go" });
    model.emit("msg:custom", { ack: "someone-else-1", error: "INVALID" });
    model.emit("msg:custom", { ack: sent?.id, error: "AGENT_EXITED", detail: "gone" });
    expect(await done).toEqual({ ok: false, code: "AGENT_EXITED", detail: "gone" });
    const next = c.request({ type: "chat:cancel" });
    model.emit("msg:custom", { ack: model.sent[2]?.id, accepted: true });
    expect(await next).toMatchObject({ ok: true, ack: { accepted: true } });
    expect(new Set(model.sent.map((m) => m.id)).size).toBe(3);
    c.dispose();
  });

  it("says why a request was refused: the detail, the chat's reason, the agent's data", async () => {
    const { model, client: c } = client({ transport: "comm" });
    c.start();
    const done = c.request({ type: "chat:prompt", text: "go" });
    model.emit("msg:custom", {
      ack: model.sent[1]?.id,
      error: "AGENT_EXITED",
      detail: "the agent has exited",
      reason: "the agent refused to start: Invalid params",
      data: '{"issues":[]}',
    });
    expect(await done).toEqual({
      ok: false,
      code: "AGENT_EXITED",
      detail: 'the agent has exited: the agent refused to start: Invalid params: {"issues":[]}',
    });
    c.dispose();
  });

  it("fails a request that gets no ack in time, so no card stays busy", async () => {
    vi.useFakeTimers();
    try {
      const { model, client: c, errors } = client({ transport: "comm" });
      c.start();
      const done = c.request({ type: "chat:cancel" });
      await vi.advanceTimersByTimeAsync(44_999);
      model.emit("msg:custom", { ack: model.sent[0]?.id, accepted: true, events: [] });
      await vi.advanceTimersByTimeAsync(1);
      expect(await done).toEqual({ ok: false, code: "TIMEOUT", detail: null });
      expect(errors).toEqual([]); // the resync was answered in time
      // A late ack is dropped; the next request works as before.
      model.emit("msg:custom", { ack: model.sent[1]?.id, accepted: true });
      const next = c.request({ type: "chat:cancel" });
      model.emit("msg:custom", { ack: model.sent[2]?.id, accepted: true });
      expect(await next).toMatchObject({ ok: true });
      c.start(); // a resync that never gets its ack is reported too
      await vi.advanceTimersByTimeAsync(45_000);
      expect(errors).toEqual(["TIMEOUT"]);
      c.dispose();
    } finally {
      vi.useRealTimers();
    }
  });

  it("waits while the transport trait is empty, then connects when it is set", () => {
    const { model, client: c, statuses } = client({ transport: "" });
    c.start();
    expect(statuses).toEqual(["waiting"]);
    expect(model.sent).toEqual([]);
    model.set("transport", "comm");
    expect(statuses).toEqual(["waiting", "comm"]);
    expect(model.sent[0]).toMatchObject({ type: "chat:resync" });
    c.dispose();
    expect(model.listeners("msg:custom")).toBe(0);
    expect(model.listeners("change:transport")).toBe(0);
  });

  it("answers a request at once when there is no link", async () => {
    const { client: c } = client({ transport: "" });
    c.start();
    expect(await c.request({ type: "chat:cancel" })).toEqual({
      ok: false,
      code: "DISCONNECTED",
      detail: null,
    });
  });
});

describe("server transport", () => {
  it("builds the socket URL from the page's base URL", () => {
    expect(serverSocketUrl("k1", "c1")).toBeNull();
    configData("/user/ada/");
    const url = new URL(serverSocketUrl("k 1", "c1") as string);
    expect(url.protocol).toBe("ws:");
    expect(url.host).toBe(location.host);
    expect(url.pathname).toBe("/user/ada/acp-notebook/ws/browser");
    expect(url.searchParams.get("kernel")).toBe("k 1");
    expect(url.searchParams.get("chat")).toBe("c1");
  });

  it("resyncs on open, takes frames from the socket, and reconnects with backoff", async () => {
    vi.useFakeTimers();
    configData("/");
    const { model, client: c, batches, statuses } = client({ transport: "server" });
    c.start();
    const socket = FakeSocket.instances[0] as FakeSocket;
    expect(statuses).toEqual(["connecting"]);
    socket.open();
    expect(statuses).toEqual(["connecting", "server"]);
    // Asked for in the URL (the server answers as the socket opens), not sent.
    const resyncId = new URL(socket.url).searchParams.get("resync");
    expect(resyncId).toMatch(/^[a-z0-9]+-1$/);
    expect(socket.sent).toEqual([]);
    socket.receive({ ack: resyncId, accepted: true, reset: true, events: [EVENT] });
    await vi.advanceTimersByTimeAsync(0);
    expect(batches).toEqual([{ events: [EVENT], reset: true }]);
    // Frames on the comm are not ours in server mode.
    model.emit("msg:custom", { chatId: "c1", events: [{ ...EVENT, seq: 5 }] });
    expect(batches).toHaveLength(1);

    const pending = c.request({ type: "chat:prompt", text: "x" });
    socket.drop();
    expect(await pending).toMatchObject({ ok: false, code: "DISCONNECTED" });
    expect(statuses.at(-1)).toBe("connecting");
    await vi.advanceTimersByTimeAsync(999);
    expect(FakeSocket.instances).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    const second = FakeSocket.instances[1] as FakeSocket;
    second.drop();
    await vi.advanceTimersByTimeAsync(1999);
    expect(FakeSocket.instances).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    const third = FakeSocket.instances[2] as FakeSocket;
    third.open();
    const again = new URL(third.url).searchParams.get("resync");
    expect(again).not.toBe(resyncId);
    third.receive({ ack: again, accepted: true, reset: true, events: [] });
    await vi.advanceTimersByTimeAsync(0);
    expect(batches.at(-1)).toEqual({ events: [], reset: true });
    expect(model.sent).toEqual([]);
    c.dispose();
    expect(third.closed).toBe(true);
  });

  it("connects a few sockets of the page at once, the next as one opens or fails", () => {
    configData("/");
    const slots = new ConnectSlots();
    const clients = Array.from({ length: MAX_CONNECTING + 3 }, () =>
      client({ transport: "server" }, slots),
    );
    for (const { client: c } of clients) c.start();
    expect(FakeSocket.instances).toHaveLength(MAX_CONNECTING);
    expect(clients.every(({ statuses }) => statuses[0] === "connecting")).toBe(true);
    (FakeSocket.instances[0] as FakeSocket).open();
    expect(FakeSocket.instances).toHaveLength(MAX_CONNECTING + 1);
    (FakeSocket.instances[1] as FakeSocket).drop();
    expect(FakeSocket.instances).toHaveLength(MAX_CONNECTING + 2);
    // A queued client that goes away never connects; a connecting one frees its slot.
    clients.at(-1)?.client.dispose();
    (clients[2] as ReturnType<typeof client>).client.dispose();
    expect(FakeSocket.instances).toHaveLength(MAX_CONNECTING + 2);
    (FakeSocket.instances[3] as FakeSocket).open();
    expect(FakeSocket.instances).toHaveLength(MAX_CONNECTING + 2);
    for (const { client: c } of clients) c.dispose();
  });

  it("stops reconnecting once the server says the chat is gone", async () => {
    vi.useFakeTimers();
    configData("/");
    const { client: c, statuses } = client({ transport: "server" });
    c.start();
    const socket = FakeSocket.instances[0] as FakeSocket;
    socket.open();
    socket.drop(4404);
    expect(statuses.at(-1)).toBe("closed");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(FakeSocket.instances).toHaveLength(1);
    c.dispose();
  });

  it("falls back to the comm when the socket does not open within 5 s", async () => {
    vi.useFakeTimers();
    configData("/");
    const { model, client: c, statuses } = client({ transport: "server" });
    c.start();
    await vi.advanceTimersByTimeAsync(4999);
    expect(model.sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect((FakeSocket.instances[0] as FakeSocket).closed).toBe(true);
    expect(statuses).toEqual(["connecting", "comm"]);
    expect(model.sent[0]).toMatchObject({ type: "chat:resync" });
    c.dispose();
  });

  it("falls back to the comm at once when the socket is refused", () => {
    configData("/");
    const { model, client: c, statuses } = client({ transport: "server" });
    c.start();
    (FakeSocket.instances[0] as FakeSocket).drop();
    expect(statuses).toEqual(["connecting", "comm"]);
    expect(model.sent[0]).toMatchObject({ type: "chat:resync" });
    c.dispose();
  });

  it("uses the comm when the page has no Jupyter config (VS Code, Colab)", () => {
    const { model, client: c, statuses } = client({ transport: "server" });
    c.start();
    expect(FakeSocket.instances).toHaveLength(0);
    expect(statuses).toEqual(["comm"]);
    expect(model.sent[0]).toMatchObject({ type: "chat:resync" });
    c.dispose();
  });
});
