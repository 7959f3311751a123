// @vitest-environment jsdom
// The anywidget entry, end to end over a fake comm model.
import { describe, expect, it } from "vitest";
import type { StreamEvent } from "../src/contracts";
import { fold, initialState, snapshot } from "../src/fold";
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
    expect(el.querySelector(".acpnb-user")?.textContent).toBe("saved");
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
    expect(el.querySelector(".acpnb-user")?.textContent).toBe("ask-user");
    expect(el.querySelector(".acpnb-status")?.textContent).toBe("等待你的回复");
    const decline = [...el.querySelectorAll("button")].find((b) => b.textContent === "拒绝");
    decline?.click();
    expect(model.sent[1]).toMatchObject({
      type: "chat:elicitation.respond",
      chatId: "c1",
      requestId: "r1",
      action: "decline",
    });
    cleanup();
    expect(el.childElementCount).toBe(0);
    expect(model.listeners("msg:custom")).toBe(0);
    expect(model.listeners("change:snapshot")).toBe(0);
  });
});
