// @vitest-environment jsdom
// Every string of the agent's the widget shows is isolated from the widget's own text: a
// right-to-left override (U+202E) in it cannot reorder anything after it.
import { beforeEach, describe, expect, it } from "vitest";
import { bdi, contained } from "../src/dom";
import { isolate, translator } from "../src/i18n";
import { ChatView } from "../src/view";
import { chunk, ev, recorder } from "./helpers";

const RLO = "\u202e";
// Before the override, what would end an isolate around the string in Chromium: a POP
// DIRECTIONAL ISOLATE of its own, an isolate it leaves open, a paragraph separator.
const ESCAPES = "\u2069\u2067\u2029";
/** An agent string: whatever follows the override in the same text is someone else's. */
const evil = (what: string): string => `${what}${ESCAPES}${RLO}evil`;

/** How many isolates `text` leaves open; -1 once a PDI (or a paragraph separator) in it
 * would end an isolate around it. */
function openIsolates(text: string): number {
  let open = 0;
  for (const c of text) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: paragraph separators
    if (/[\u2029\u0085\u001c-\u001e]/.test(c)) return -1;
    if (c === "\u2069") {
      if (open === 0) return -1;
      open -= 1;
    } else if (/[\u2066-\u2068]/.test(c)) open += 1;
  }
  return open;
}

// Elements whose text is a bidi paragraph or isolate of its own (HTML's default style:
// block boxes, buttons and options, <bdi>, and any element with a dir attribute).
const ISOLATING = new Set(
  "BDI DIV P LI UL OL PRE SECTION DETAILS SUMMARY FIELDSET LEGEND BUTTON OPTION SELECT TABLE TD TH H1 H2 H3 H4 H5 H6 BLOCKQUOTE".split(
    " ",
  ),
);
// Flex containers of the widget: their children are blockified, so isolated too.
const FLEX =
  ".acpnb-root, .acpnb-header, .acpnb-transcript, .acpnb-card, .acpnb-form, .acpnb-card-actions, .acpnb-tool-head, .acpnb-choice-text, .acpnb-selectors, .acpnb-diff-path";

function isolating(node: Element): boolean {
  return (
    ISOLATING.has(node.nodeName) ||
    node.hasAttribute("dir") ||
    (node.parentElement?.matches(FLEX) ?? false)
  );
}

/** Text after an override, outside the agent's string, in the same paragraph or isolate. */
function leaks(root: Element): string[] {
  const found: string[] = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    const text = node as Text;
    const at = text.data.indexOf(RLO);
    if (at < 0) continue;
    const before = openIsolates(text.data.slice(0, at));
    let box = text.parentElement as Element;
    while (box !== root && !isolating(box)) box = box.parentElement as Element;
    // An inline isolate (a <bdi>, or U+2068 … U+2069 in a string of ours) is ended by
    // characters; a block's paragraph ends with the block whatever it holds.
    const inline = box.nodeName === "BDI" || text.data.slice(0, at).includes("\u2068");
    if (inline && (before < 0 || openIsolates(text.data) !== 0)) {
      found.push(`isolate ended or left open: ${JSON.stringify(text.data)}`);
    }
    // Inside a string of ours, an isolate (U+2068 … U+2069) around the agent's text ends it.
    const tail = text.data
      .slice(at + 1)
      .replace(/^evil\u2069+.*$/s, before > 0 ? "evil" : "$&")
      .replace(/^evil\u2069*$/, "evil")
      .trimEnd();
    if (tail !== "evil") found.push(`same text: ${JSON.stringify(text.data)}`);
    const after = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    after.currentNode = text;
    for (let next = after.nextNode(); next !== null; next = after.nextNode()) {
      let inner = next.parentElement;
      let nested = false;
      while (inner !== null && inner !== box) {
        if (isolating(inner)) nested = true;
        inner = inner.parentElement;
      }
      if (!nested && (next as Text).data.trim() !== "") {
        found.push(`${box.className || box.nodeName}: ${JSON.stringify((next as Text).data)}`);
      }
    }
  }
  return found;
}

function overrides(root: Element): number {
  return (root.textContent?.split(RLO).length ?? 1) - 1;
}

function view(): ChatView {
  const chat = new ChatView({
    t: translator("en"),
    request: recorder().request,
    schedule: () => () => {},
  });
  document.body.append(chat.el);
  chat.setConnected(true);
  return chat;
}

beforeEach(() => {
  document.body.replaceChildren();
});

describe("bidi isolation of agent strings", () => {
  it("isolates the transcript, tool calls, plan, header and selectors", () => {
    const chat = view();
    chat.apply(
      [
        ev({
          kind: "agent_status",
          status: "ready",
          agent: evil("agent name"),
          modes: {
            currentModeId: "a",
            availableModes: [
              { id: "a", name: evil("mode") },
              { id: "b", name: "other" },
            ],
          },
          configOptions: [
            { id: "fast", name: evil("toggle"), type: "boolean", currentValue: true },
            {
              id: "model",
              name: evil("select"),
              type: "select",
              currentValue: "m",
              options: [
                { group: "g", name: evil("group"), options: [{ value: "m", name: evil("model") }] },
              ],
            },
          ],
        }),
        ev({ kind: "turn_started", prompt: evil("prompt") }),
        chunk(evil("thought"), "agent_thought_chunk", "t"),
        chunk(`# ${evil("heading")}\n\n- ${evil("item")}\n\n${evil("message")}`),
        ev({
          kind: "update",
          update: {
            sessionUpdate: "tool_call",
            toolCallId: "t1",
            title: evil("tool title"),
            kind: evil("kind"),
            status: evil("status"),
            locations: [{ path: evil("location"), line: 3 }],
            content: [
              { type: "diff", path: evil("diff path"), oldText: null, newText: evil("new") },
              { type: "content", content: { type: "text", text: evil("output") } },
              { type: "terminal", terminalId: evil("terminal") },
            ],
          },
        }),
        ev({
          kind: "update",
          update: {
            sessionUpdate: "plan",
            entries: [{ content: evil("plan entry"), status: "in_progress" }],
          },
        }),
        ev({ kind: "turn_ended", stopReason: evil("stop reason"), error: evil("error") }),
      ],
      false,
    );
    chat.flush();
    expect(leaks(chat.el)).toEqual([]);
    // Every string above is shown (the select's own label is an attribute).
    expect(overrides(chat.el)).toBeGreaterThanOrEqual(19);
    chat.apply(
      [ev({ kind: "agent_status", status: "exited", detail: evil("exit detail") })],
      false,
    );
    chat.flush();
    expect(leaks(chat.el)).toEqual([]);
    chat.dispose();
  });

  it("isolates permission and question cards, and what remains of them", () => {
    const chat = view();
    chat.apply(
      [
        ev({ kind: "agent_status", status: "ready", agent: evil("agent") }),
        ev({
          kind: "update",
          update: { sessionUpdate: "tool_call", toolCallId: "t1", title: evil("asking tool") },
        }),
        ev({
          kind: "permission_request",
          requestId: "p",
          toolCall: { title: evil("permission title") },
          options: [
            { optionId: "y", name: evil("allow"), kind: "allow_once" },
            { optionId: "n", name: evil("reject"), kind: "reject_once" },
          ],
        }),
        ev({
          kind: "elicitation_request",
          requestId: "q",
          toolCallId: "t1",
          title: evil("question title"),
          message: evil("question message"),
          fields: [
            {
              name: "pick",
              type: "enum",
              title: evil("field title"),
              description: evil("field description"),
              required: true,
              options: [
                {
                  value: "a",
                  label: evil("option label"),
                  description: evil("option description"),
                },
              ],
              custom: "other",
            },
            { name: "other", type: "string", title: evil("other title") },
            { name: "note", type: "string", title: evil("text title"), required: true },
            { name: "ok", type: "boolean", title: evil("boolean title"), required: true },
          ],
        }),
      ],
      false,
    );
    chat.flush();
    const legend = chat.el.querySelector("legend");
    // The reported case: "(required)" after a field title with an override.
    expect(legend?.textContent).toContain("(required)");
    expect(leaks(chat.el)).toEqual([]);
    // (The checkbox's title is shown once: its label, no legend repeating it.)
    expect(overrides(chat.el)).toBeGreaterThanOrEqual(17);
    chat.apply(
      [
        ev({
          kind: "permission_resolved",
          requestId: "p",
          outcome: "selected",
          optionId: "y",
          by: evil("who"),
        }),
      ],
      false,
    );
    chat.flush();
    const remnant = chat.el.querySelector(".acpnb-card-remnant")?.textContent ?? "";
    expect(remnant).toContain("allow");
    expect(remnant).toContain("who");
    expect(leaks(chat.el)).toEqual([]);
    chat.dispose();
  });

  it("keeps a string's own controls inside the isolate around it", () => {
    expect(contained("a\u2069b")).toBe("ab"); // a PDI of its own ends nothing of ours
    expect(contained("a\u2067b\u2069c\u2069")).toBe("a\u2067b\u2069c");
    expect(contained("a\u2066b")).toBe("a\u2066b\u2069"); // what it opens, it closes
    expect(contained("a\u2029b\u0085c")).toBe("a\nb\nc");
    expect(isolate("x\u2069\u202eevil")).toBe("\u2068x\u202eevil\u2069");
    // Agent payloads are typed, not checked: a missing title is no crash.
    expect(bdi(undefined as unknown as string).textContent).toBe("");
  });
});
