// @vitest-environment jsdom
// The anywidget entry, end to end over a fake comm model.
import { describe, expect, it, vi } from "vitest";
import type { StreamEvent } from "../src/contracts";
import { fold, initialState, snapshot } from "../src/fold";
import { PARK_MS } from "../src/live";
import widget from "../src/widget";
import { FakeModel } from "./helpers";

const saved = snapshot(
  fold(initialState(), { kind: "turn_started", seq: 1, prompt: "saved" } as StreamEvent),
);

function frame(): Promise<void> {
  return new Promise((resolve) => requestAnimationFrame(() => resolve()));
}

describe("render", () => {
  it("paints the snapshot, resyncs over the comm, answers a card, and cleans up", async () => {
    const model = new FakeModel({
      chat_id: "c1",
      kernel_id: "k1",
      transport: "comm",
      locale: "zh",
      snapshot: JSON.stringify(saved),
    });
    const el = document.createElement("div");
    document.body.append(el);
    const cleanup = widget.render({ model, el });
    await frame();
    expect(el.querySelector(".acpnb-user")?.textContent?.trim()).toBe("saved");
    const resync = model.sent[0];
    expect(resync).toMatchObject({ type: "chat:resync", chatId: "c1" });
    model.emit("msg:custom", {
      ack: resync?.id,
      accepted: true,
      reset: true,
      events: [
        { kind: "agent_status", seq: 1, status: "ready", agent: "demo" },
        { kind: "turn_started", seq: 2, prompt: "ask-user" },
        { kind: "elicitation_request", seq: 3, requestId: "r1", message: "Pick", fields: [] },
      ],
    });
    await frame();
    await frame();
    expect(el.querySelector(".acpnb-user")?.textContent?.trim()).toBe("ask-user");
    expect(el.querySelector(".acpnb-status")?.textContent).toBe("等待你的回复");
    const decline = [...el.querySelectorAll("button")].find((b) => b.textContent === "拒绝");
    decline?.click();
    expect(model.sent[1]).toMatchObject({
      type: "chat:elicitation.respond",
      chatId: "c1",
      requestId: "r1",
      action: "decline",
    });
    vi.useFakeTimers();
    cleanup();
    expect(el.childElementCount).toBe(0);
    expect(model.listeners("msg:custom")).toBe(1); // parked for a re-render
    vi.advanceTimersByTime(PARK_MS);
    vi.useRealTimers();
    expect(model.listeners("msg:custom")).toBe(0);
    expect(model.listeners("change:snapshot")).toBe(0);
  });
});

describe("re-render", () => {
  it("adopts the live view of an output that was re-rendered: no new link, no resync", async () => {
    const model = new FakeModel({ chat_id: "c2", kernel_id: "k1", transport: "comm" });
    const output = document.createElement("div");
    output.className = "jp-OutputArea-output";
    document.body.append(output);
    const first = document.createElement("div");
    output.append(first);
    const release1 = widget.render({ model, el: first });
    expect(model.sent.filter((m) => m.type === "chat:resync")).toHaveLength(1);
    const root = first.firstElementChild;
    // What JupyterLab's widget renderer does on update_display_data: the old view's node
    // is dropped from the output (never disposed), then a new view renders.
    output.textContent = "Loading widget...";
    const second = document.createElement("div");
    output.replaceChildren(second);
    const release2 = widget.render({ model, el: second });
    expect(second.firstElementChild).toBe(root);
    expect(model.sent.filter((m) => m.type === "chat:resync")).toHaveLength(1);
    expect(model.listeners("msg:custom")).toBe(1);

    // The same chat shown in a second output at once gets a view of its own.
    const other = document.createElement("div");
    document.body.append(other);
    const release3 = widget.render({ model, el: other });
    expect(other.firstElementChild).not.toBe(root);
    expect(model.listeners("msg:custom")).toBe(2);

    release1();
    expect(second.firstElementChild).toBe(root); // still held by the second render

    // JupyterLab may instead dispose the old output first and render the new one later.
    vi.useFakeTimers();
    release2();
    expect(root?.isConnected).toBe(false);
    const third = document.createElement("div");
    output.replaceChildren(third);
    const release4 = widget.render({ model, el: third });
    expect(third.firstElementChild).toBe(root);
    vi.advanceTimersByTime(PARK_MS);
    expect(model.sent.filter((m) => m.type === "chat:resync")).toHaveLength(2); // 1 + other's
    release4();
    release3();
    vi.advanceTimersByTime(PARK_MS);
    vi.useRealTimers();
    expect(model.listeners("msg:custom")).toBe(0);
    expect(model.listeners("change:snapshot")).toBe(0);
    output.remove();
    other.remove();
  });
  it("says in its header why a chat runs in local mode, and nothing in server mode", async () => {
    const shown = (traits: Record<string, unknown>): string | null => {
      const el = document.createElement("div");
      const chat_id = `c-note-${String(traits.local_reason)}`; // a live view per chat
      const model = new FakeModel({ chat_id, kernel_id: "k-note", ...traits });
      const cleanup = widget.render({ model, el });
      const note = el.querySelector<HTMLElement>(".acpnb-header-note");
      const text = note?.hidden ? null : (note?.textContent ?? null);
      cleanup();
      return text;
    };
    expect(shown({ transport: "comm", local_reason: "refused" })).toContain("refused");
    expect(shown({ transport: "comm", local_reason: "" })).toBeNull();
    expect(shown({ transport: "comm", local_reason: "a code no table knows" })).toBeNull();
  });
});
