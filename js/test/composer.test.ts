// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { Composer } from "../src/composer";
import { translator } from "../src/i18n";
import type { RequestBody, RequestResult } from "../src/transport";

const t = translator("en");

describe("composer drafts", () => {
  it("carry over to a new view of the same chat, and clear once sent", async () => {
    const sent: RequestBody[] = [];
    const request = async (body: RequestBody): Promise<RequestResult> => {
      sent.push(body);
      return { ok: true };
    };
    const first = new Composer(t, request, "chat-a");
    document.body.append(first.el);
    first.input.value = "half a thought";
    first.input.dispatchEvent(new Event("input"));
    first.el.remove();

    const second = new Composer(t, request, "chat-a");
    expect(second.input.value).toBe("half a thought");
    expect(new Composer(t, request, "chat-b").input.value).toBe("");

    second.input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    await Promise.resolve();
    expect(sent).toEqual([{ type: "chat:prompt", text: "half a thought" }]);
    expect(new Composer(t, request, "chat-a").input.value).toBe("");
  });
});
