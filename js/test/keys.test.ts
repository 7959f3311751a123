// @vitest-environment jsdom
// Keys typed in a chat stay in the chat: JupyterLab sees only its page-wide shortcuts.
import { afterEach, describe, expect, it } from "vitest";
import { chatOwns, keepKeysInChats, keptFromLab } from "../src/keys";
import { boundBetween } from "../src/lab/shortcuts";
import { setLabHooks } from "../src/lab_hooks";

const SUPPRESS = "data-lm-suppress-shortcuts";

function key(init: KeyboardEventInit): KeyboardEvent {
  return new KeyboardEvent("keydown", init);
}

/** A notebook cell's output holding a chat root with a button in it. */
function inlineChat(): { notebook: HTMLElement; root: HTMLElement; button: HTMLButtonElement } {
  const notebook = document.createElement("div");
  notebook.className = "jp-Notebook jp-mod-commandMode";
  const root = document.createElement("div");
  root.className = "acpnb-root";
  const button = document.createElement("button");
  root.append(button);
  notebook.append(root);
  document.body.replaceChildren(notebook);
  return { notebook, root, button };
}

// JupyterLab's own: the notebook's command-mode keys and two page-wide shortcuts.
const BINDINGS = [
  { keys: ["B"], selector: ".jp-Notebook.jp-mod-commandMode :focus:not(:read-write)" },
  { keys: ["D", "D"], selector: ".jp-Notebook.jp-mod-commandMode :focus:not(:read-write)" },
  { keys: ["Ctrl Shift Y"], selector: "body" },
  { keys: ["Ctrl S"], selector: "body" },
];

afterEach(() => setLabHooks(undefined));

describe("which keys JupyterLab may see from a chat", () => {
  it("keeps the chat's own keys, and every key when the extension cannot say", () => {
    expect(chatOwns(key({ key: "Escape" }))).toBe(true);
    expect(chatOwns(key({ key: "ArrowDown" }))).toBe(true);
    expect(chatOwns(key({ key: "Enter", ctrlKey: true }))).toBe(false);
    expect(keptFromLab(key({ key: "b" }), undefined)).toBe(true);
    expect(keptFromLab(key({ key: "b" }), true)).toBe(true);
    expect(keptFromLab(key({ key: "y", ctrlKey: true, shiftKey: true }), false)).toBe(false);
    expect(keptFromLab(key({ key: "Enter" }), false)).toBe(true);
  });

  it("finds the notebook's bindings between a control and its notebook, not the page's", () => {
    const { notebook, button } = inlineChat();
    button.focus();
    expect(boundBetween(BINDINGS, "B", button, notebook)).toBe(true);
    expect(boundBetween(BINDINGS, "D", button, notebook)).toBe(true);
    expect(boundBetween(BINDINGS, "Ctrl Shift Y", button, notebook)).toBe(false);
    expect(boundBetween(BINDINGS, "Ctrl S", button, notebook)).toBe(false);
    expect(boundBetween([{ keys: ["X"], selector: "::bad(" }], "X", button, notebook)).toBe(false);
  });

  it("marks the key's target before JupyterLab's listeners run, for that key only", () => {
    keepKeysInChats();
    const { notebook, button } = inlineChat();
    button.focus();
    setLabHooks({
      insertCellBelow: () => false,
      boundWithin: (event, top) => {
        expect(top).toBe(notebook);
        const stroke = `${event.ctrlKey ? "Ctrl " : ""}${event.shiftKey ? "Shift " : ""}${event.key.toUpperCase()}`;
        return boundBetween(BINDINGS, stroke, event.target as Element, top);
      },
    });
    const seen: (string | null)[] = [];
    document.addEventListener("keydown", (event) => {
      seen.push((event.target as Element).getAttribute(SUPPRESS));
    });
    button.dispatchEvent(key({ key: "b", bubbles: true }));
    button.dispatchEvent(key({ key: "y", ctrlKey: true, shiftKey: true, bubbles: true }));
    button.dispatchEvent(key({ key: "ArrowDown", bubbles: true }));
    expect(seen).toEqual(["true", null, "true"]);
    // Outside a chat nothing is marked.
    const outside = document.createElement("button");
    document.body.append(outside);
    outside.dispatchEvent(key({ key: "b", bubbles: true }));
    expect(seen.at(-1)).toBeNull();
  });
});
