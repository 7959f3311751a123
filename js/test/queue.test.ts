// @vitest-environment jsdom
// The composer's slash commands and the queued prompts above it.
import { afterEach, describe, expect, it } from "vitest";
import { commandAt, commandItems } from "../src/commands";
import type { StreamEvent } from "../src/contracts";
import { canSteer } from "../src/queue";
import { ev, mountedView, unmountViews } from "./helpers";

const COMMANDS = [
  { name: "review", description: "Review the changes", input: { hint: "what to review" } },
  { name: "compact", description: "Compact the conversation" },
  { name: "init", description: "Write CLAUDE.md" },
  { description: "no name: skipped" },
];
const CLAUDE = { _meta: { claudeCode: { promptQueueing: true } } };

afterEach(unmountViews);

function setup() {
  const { view, apply, ...rec } = mountedView();
  return { view, apply, ...rec };
}

function commandsUpdate(): StreamEvent {
  const update = { sessionUpdate: "available_commands_update", availableCommands: COMMANDS };
  return ev({ kind: "update", update });
}

function type(input: HTMLTextAreaElement, text: string): void {
  input.value = text;
  input.setSelectionRange(text.length, text.length);
  input.dispatchEvent(new Event("input"));
}

function key(input: HTMLTextAreaElement, name: string): void {
  input.dispatchEvent(new KeyboardEvent("keydown", { key: name, bubbles: true, cancelable: true }));
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe("slash commands", () => {
  it("finds the /word the prompt starts with", () => {
    expect(commandAt("/", 1)).toEqual({ query: "" });
    expect(commandAt("/rev", 4)).toEqual({ query: "rev" });
    expect(commandAt("/review the", 11)).toBeNull();
    expect(commandAt("see /review", 11)).toBeNull();
    expect(commandAt("/a/b", 4)).toBeNull();
  });

  it("lists names matching the query, with the description and input hint", () => {
    expect(commandItems(COMMANDS, "")).toEqual([
      { name: "review", type: "Review the changes · what to review" },
      { name: "compact", type: "Compact the conversation" },
      { name: "init", type: "Write CLAUDE.md" },
    ]);
    expect(commandItems(COMMANDS, "i").map((c) => c.name)).toEqual(["init", "review"]);
    expect(commandItems([null, "x", { name: 3 }], "")).toEqual([]);
  });

  it("opens on / in the composer, filters, and is chosen with the keys", () => {
    const { view, apply, bodies } = setup();
    apply(ev({ kind: "agent_status", status: "ready" }), commandsUpdate());
    const input = view.el.querySelector("textarea") as HTMLTextAreaElement;
    const menus = [...view.el.querySelectorAll<HTMLElement>(".acpnb-mentions")];
    // A textarea stays a text box (no combobox role, no aria-expanded: axe refuses both).
    expect(input.getAttribute("role")).toBeNull();
    expect(input.getAttribute("aria-autocomplete")).toBe("list");
    type(input, "/");
    const open = menus.find((m) => !m.hidden) as HTMLElement;
    expect(open.getAttribute("role")).toBe("listbox");
    expect(input.getAttribute("aria-controls")).toBe(open.id);
    expect([...open.querySelectorAll("[role=option]")].map((o) => o.textContent)).toEqual([
      "reviewReview the changes · what to review",
      "compactCompact the conversation",
      "initWrite CLAUDE.md",
    ]);
    type(input, "/co");
    expect(open.querySelectorAll("[role=option]")).toHaveLength(1);
    type(input, "/");
    key(input, "ArrowDown");
    const active = input.getAttribute("aria-activedescendant");
    expect(document.getElementById(active ?? "")?.textContent).toContain("compact");
    key(input, "Tab");
    expect(input.value).toBe("/compact ");
    expect(input.hasAttribute("aria-controls")).toBe(false);
    expect(input.hasAttribute("aria-activedescendant")).toBe(false);
    expect(bodies).toEqual([]); // picking is not sending
    type(input, "/zz");
    expect(open.textContent).toBe("No matching command");
    key(input, "Escape");
    expect(open.hidden).toBe(true);
    type(input, "/init");
    key(input, "Enter"); // picks, does not send
    expect(input.value).toBe("/init ");
    key(input, "Enter"); // now it sends, as prompt text
    expect(bodies).toEqual([{ type: "chat:prompt", text: "/init " }]);
  });

  it("offers nothing when the agent has no commands", () => {
    const { view, apply } = setup();
    apply(ev({ kind: "agent_status", status: "ready" }));
    const input = view.el.querySelector("textarea") as HTMLTextAreaElement;
    type(input, "/");
    expect(
      [...view.el.querySelectorAll<HTMLElement>(".acpnb-mentions")].every((m) => m.hidden),
    ).toBe(true);
  });
});

describe("the queue", () => {
  it("knows claude's prompt queueing", () => {
    expect(canSteer(CLAUDE)).toBe(true);
    expect(canSteer({ _meta: { claudeCode: { promptQueueing: "yes" } } })).toBe(false);
    expect(canSteer(null)).toBe(false);
  });

  it("shows queued prompts above the composer, with their changes", async () => {
    const { view, apply, bodies } = setup();
    apply(
      ev({ kind: "agent_status", status: "ready", agentCapabilities: CLAUDE }),
      ev({ kind: "turn_started", turn: 1, prompt: "first" }),
      ev({
        kind: "queue",
        prompts: [
          { turn: 2, prompt: "second" },
          { turn: 3, prompt: "third" },
        ],
      }),
    );
    const sendButton = view.el.querySelector(".acpnb-send") as HTMLButtonElement;
    expect([sendButton.textContent, sendButton.title]).toEqual([
      "Queue",
      "Sent when the running turn ends",
    ]);
    const panel = view.el.querySelector(".acpnb-queue") as HTMLElement;
    expect(panel.hidden).toBe(false);
    expect(panel.nextElementSibling?.classList.contains("acpnb-composer")).toBe(true);
    const rows = [...panel.querySelectorAll<HTMLElement>(".acpnb-queued")];
    expect(rows.map((r) => r.querySelector(".acpnb-queued-text")?.textContent)).toEqual([
      "second",
      "third",
    ]);
    const buttons = (row: HTMLElement) =>
      [...row.querySelectorAll("button")].map((b) => b.textContent);
    expect(buttons(rows[0] as HTMLElement)).toEqual(["Send now", "Edit", "Remove"]);
    expect(buttons(rows[1] as HTMLElement)).toEqual(["Send now", "Edit", "Move up", "Remove"]);
    const click = (row: HTMLElement, label: string) =>
      [...row.querySelectorAll("button")].find((b) => b.textContent === label)?.click();
    click(rows[1] as HTMLElement, "Move up");
    click(rows[0] as HTMLElement, "Send now");
    click(rows[1] as HTMLElement, "Remove");
    expect(bodies).toEqual([
      { type: "chat:queue", op: "move", turn: 3, index: 0 },
      { type: "chat:queue", op: "steer", turn: 2 },
      { type: "chat:queue", op: "remove", turn: 3 },
    ]);
    click(rows[0] as HTMLElement, "Edit");
    const edit = panel.querySelector("textarea") as HTMLTextAreaElement;
    expect(edit.value).toBe("second");
    edit.value = "second, better";
    key(edit, "Enter");
    expect(bodies.at(-1)).toEqual({
      type: "chat:queue",
      op: "edit",
      turn: 2,
      text: "second, better",
    });
    await tick();
    // A cancel removes them and says so; their text goes back into the composer.
    const input = view.el.querySelector(".acpnb-composer-input") as HTMLTextAreaElement;
    type(input, "typing");
    apply(ev({ kind: "queue", prompts: [], removed: [2, 3], reason: "cancelled" }));
    expect(panel.querySelectorAll(".acpnb-queued")).toHaveLength(0);
    expect(panel.querySelector(".acpnb-queue-note")?.textContent).toContain("2 queued prompt");
    expect(input.value).toBe("second\n\nthird\n\ntyping");
  });

  it("offers no steering to an agent that does not advertise it, nor between turns", () => {
    const { view, apply } = setup();
    apply(
      ev({ kind: "agent_status", status: "ready" }),
      ev({ kind: "turn_started", turn: 1, prompt: "first" }),
      ev({ kind: "queue", prompts: [{ turn: 2, prompt: "second" }] }),
    );
    const labels = () =>
      [...view.el.querySelectorAll(".acpnb-queued button")].map((b) => b.textContent);
    expect(labels()).toEqual(["Edit", "Remove"]);
    apply(ev({ kind: "agent_status", status: "ready", agentCapabilities: CLAUDE }));
    expect(labels()).toEqual(["Send now", "Edit", "Remove"]);
    apply(ev({ kind: "turn_ended", turn: 1 }));
    expect(labels()).toEqual(["Edit", "Remove"]);
    expect(view.el.querySelector(".acpnb-send")?.textContent).toBe("Send");
  });
});
