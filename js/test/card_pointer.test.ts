// @vitest-environment jsdom
// A cell's pointer to a card shown elsewhere: it names the question, and its button
// brings the card of its chat (the one in its own notebook first) into view.
import { afterEach, describe, expect, it, vi } from "vitest";
import { translator } from "../src/i18n";
import { findCard, readPointer, showPointer } from "../src/lab/card_pointer";
import { JUMP_EVENT } from "../src/waiting";

const t = translator("en");
const POINTER = {
  chatId: "c1",
  requestId: "r1",
  kind: "question",
  title: "Pick a colour",
  agent: "demo",
  settled: false,
};

/** A chat's root holding an open card for `requestId`, in `parent`. */
function chatWithCard(parent: HTMLElement, chatId: string, requestId: string): HTMLElement {
  const root = document.createElement("div");
  root.className = "acpnb-root";
  root.dataset.chat = chatId;
  const card = document.createElement("section");
  card.className = "acpnb-card";
  card.dataset.requestId = requestId;
  root.append(card);
  parent.append(root);
  return card;
}

/** A pointer's output node, in `parent`, showing `data`. */
function rendered(data: unknown, parent: HTMLElement = document.body): { node: HTMLElement } {
  const node = document.createElement("div");
  parent.append(node);
  showPointer(node, data, t);
  return { node };
}

afterEach(() => document.body.replaceChildren());

describe("card pointer", () => {
  it("reads only a pointer, its strings bounded", () => {
    expect(readPointer(null)).toBeNull();
    expect(readPointer({ chatId: 1, requestId: "r" })).toBeNull();
    const long = readPointer({ ...POINTER, title: "x".repeat(10_000), kind: "<b>" });
    expect(long?.title.length).toBe(200);
    expect(long?.kind).toBe("question");
  });

  it("names the question and jumps to its card, the one in its own notebook first", () => {
    const elsewhere = document.createElement("div");
    const notebook = document.createElement("div");
    notebook.className = "jp-Notebook";
    document.body.append(elsewhere, notebook);
    const far = chatWithCard(elsewhere, "c1", "r1");
    const near = chatWithCard(notebook, "c1", "r1");
    chatWithCard(notebook, "c2", "r1"); // another chat's request of the same id
    const renderer = rendered(POINTER, notebook);
    expect(renderer.node.textContent).toContain("demo asks you a question in its chat");
    expect(renderer.node.querySelector("q")?.textContent).toBe("Pick a colour");
    // jsdom lays nothing out: every card counts as shown.
    expect(findCard(readPointer(POINTER) as never, renderer.node)).toBe(near);
    const jumped = vi.fn();
    near.addEventListener(JUMP_EVENT, jumped);
    far.addEventListener(JUMP_EVENT, () => expect.fail("the other notebook's view"));
    renderer.node.querySelector("button")?.click();
    expect(jumped).toHaveBeenCalledOnce();
  });

  it("says where to look when no view shows the card, and says answered once settled", () => {
    const renderer = rendered({ ...POINTER, kind: "permission" });
    const button = renderer.node.querySelector("button");
    expect(button?.textContent).toBe("Go to the permission");
    button?.click();
    expect(renderer.node.querySelector("[role=status]")?.textContent).toContain("Agent panel");
    showPointer(renderer.node, { ...POINTER, settled: true }, t);
    expect(renderer.node.querySelector("button")).toBeNull();
    expect(renderer.node.textContent).toContain("Answered: demo's request");
    expect(renderer.node.classList.contains("acpnb-pointer-settled")).toBe(true);
  });
});
