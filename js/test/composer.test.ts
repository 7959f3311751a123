// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { attachmentChips } from "../src/attach";
import { Composer } from "../src/composer";
import type { Attachment } from "../src/contracts";
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

describe("composer attachments", () => {
  const image: Attachment = {
    label: "shot.png · PNG 2x2",
    block: { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
    thumbnail: "data:image/jpeg;base64,AAAA",
  };

  it("go with the next prompt as chips, and come back when it is refused", async () => {
    const sent: RequestBody[] = [];
    let answer: RequestResult = { ok: false, code: "BUSY", detail: "a turn is running" };
    const composer = new Composer(t, async (body) => {
      sent.push(body);
      return answer;
    });
    composer.add(image);
    const chip = composer.el.querySelector(".acpnb-attachment");
    expect(chip?.querySelector("img")?.getAttribute("src")).toBe(image.thumbnail);
    expect(chip?.textContent).toContain("shot.png · PNG 2x2");
    composer.input.value = "what is this?";
    composer.input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(sent[0]).toEqual({ type: "chat:prompt", text: "what is this?", attachments: [image] });
    expect(composer.el.querySelectorAll(".acpnb-attachment")).toHaveLength(1); // refused: kept

    answer = { ok: true };
    composer.input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(sent[1]).toEqual(sent[0]);
    expect(composer.el.querySelectorAll(".acpnb-attachment")).toHaveLength(0);
  });

  it("survive a new view of the same chat", () => {
    const first = new Composer(t, async () => ({ ok: true }), "chat-att");
    first.add(image);
    const second = new Composer(t, async () => ({ ok: true }), "chat-att");
    expect(second.el.querySelectorAll(".acpnb-attachment")).toHaveLength(1);
    second.el.querySelector<HTMLButtonElement>(".acpnb-attachment-remove")?.click();
    expect(
      new Composer(t, async () => ({ ok: true }), "chat-att").el.querySelectorAll(
        ".acpnb-attachment",
      ),
    ).toHaveLength(0);
  });

  it("can be removed, and refuse what is not an image with a clear error", async () => {
    const composer = new Composer(t, async () => ({ ok: true }));
    composer.add(image);
    composer.el.querySelector<HTMLButtonElement>(".acpnb-attachment-remove")?.click();
    expect(composer.el.querySelectorAll(".acpnb-attachment")).toHaveLength(0);

    const paste = new Event("paste", { cancelable: true }) as ClipboardEvent;
    const file = new File(["%PDF"], "doc.pdf", { type: "application/pdf" });
    Object.defineProperty(paste, "clipboardData", { value: { files: [file] } });
    composer.input.dispatchEvent(paste);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(paste.defaultPrevented).toBe(true);
    const error = composer.el.querySelector(".acpnb-composer-error");
    expect(error?.textContent).toBe(
      "Not attached: cannot attach application/pdf: only PNG, JPEG, GIF, WebP",
    );
    expect(composer.el.querySelectorAll(".acpnb-attachment")).toHaveLength(0);
  });
});

describe("attachment chips", () => {
  it("show only image data URLs as thumbnails", () => {
    const row = attachmentChips([
      { type: "image", label: "ok", thumbnail: "data:image/png;base64,AAAA" },
      { type: "image", label: "svg", thumbnail: "data:image/svg+xml;base64,AAAA" },
      { type: "image", label: "js", thumbnail: "javascript:alert(1)" },
      { type: "resource", label: "df · DataFrame 2x2", mimeType: "text/plain" },
    ]);
    const images = [...row.querySelectorAll("img")].map((img) => img.getAttribute("src"));
    expect(images).toEqual(["data:image/png;base64,AAAA"]);
    expect(row.textContent).toContain("📎df · DataFrame 2x2");
  });
});
