// @vitest-environment jsdom
// Focus rules: a new card takes the focus only from inside its chat; otherwise it is
// announced, marked in the header and told to the page; answering moves on to the composer.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ElicitationField, StreamEvent } from "../src/contracts";
import { isolate, translator } from "../src/i18n";
import { setLabHooks } from "../src/lab_hooks";
import { ChatView } from "../src/view";
import { elicitation, ev, recorder, settle } from "./helpers";

const FIELD: ElicitationField = {
  name: "c",
  type: "enum",
  title: "C",
  options: [{ value: "a" }, { value: "b" }],
};

const PERMISSION = (): StreamEvent =>
  ev({
    kind: "permission_request",
    requestId: "p1",
    toolCall: { title: "Run ls" },
    options: [
      { optionId: "y", name: "Allow", kind: "allow_once" },
      { optionId: "n", name: "Reject", kind: "reject_once" },
    ],
  });

let views: ChatView[] = [];

function setup(chatId = "c1") {
  const rec = recorder();
  const view = new ChatView({
    t: translator("en"),
    request: rec.request,
    schedule: () => () => {},
    chatId,
  });
  views.push(view);
  document.body.append(view.el);
  view.setConnected(true);
  view.apply([ev({ kind: "agent_status", status: "ready", agent: "Demo" })], true);
  view.flush();
  return { view, ...rec };
}

function q<T extends Element = HTMLElement>(root: Element, selector: string): T {
  const found = root.querySelector<T>(selector);
  if (found === null) throw new Error(`no ${selector}`);
  return found;
}

afterEach(() => {
  for (const view of views) view.dispose();
  views = [];
  setLabHooks(undefined);
  document.body.replaceChildren();
});

describe("a new card", () => {
  it("is announced, marked and told to the page when the focus is elsewhere", () => {
    const opened: string[] = [];
    const closed: string[] = [];
    let jump: (() => boolean) | undefined;
    setLabHooks({
      insertCellBelow: () => false,
      cardOpened: (chatId, key, notice) => {
        opened.push(`${chatId}/${key}: ${notice?.text}`);
        jump = notice?.jump;
      },
      cardClosed: (chatId, key) => closed.push(`${chatId}/${key}`),
    });
    const { view } = setup();
    const cell = document.createElement("textarea");
    document.body.append(cell);
    cell.focus();
    view.apply([elicitation("q1", [FIELD])], false);
    view.flush();
    expect(document.activeElement).toBe(cell);
    const said = `${isolate("Demo")} is waiting for your answer`;
    expect(opened).toEqual([`c1/elicitation:q1: ${said}`]);
    expect(q(view.el, ".acpnb-sr-only [role=status]").textContent).toBe(said);
    // The notification's button focuses the card's first control.
    expect(jump?.()).toBe(true);
    expect(document.activeElement).toBe(q(view.el, ".acpnb-card input"));

    view.apply([ev({ kind: "elicitation_resolved", requestId: "q1", outcome: "declined" })], false);
    view.flush();
    expect(closed).toEqual(["c1/elicitation:q1"]);
    expect(q(view.el, ".acpnb-sr-only [role=status]").textContent).toBe("Question declined");
  });

  it("is left to the view of the same chat that has the focus", () => {
    const opened: string[] = [];
    setLabHooks({ insertCellBelow: () => false, cardOpened: (_, key) => opened.push(key) });
    const inline = setup("c1").view;
    const panel = setup("c1").view;
    q<HTMLTextAreaElement>(panel.el, "textarea").focus();
    for (const view of [inline, panel]) view.apply([elicitation("q2", [FIELD])], false);
    inline.flush();
    panel.flush();
    expect(opened).toEqual([]);
    expect(document.activeElement).toBe(q(panel.el, ".acpnb-card input"));
  });
});

describe("answering a card", () => {
  it("moves the focus to the composer and says the outcome; the remnant names nothing gone", async () => {
    const { view, bodies } = setup();
    q<HTMLTextAreaElement>(view.el, "textarea").focus();
    view.apply([PERMISSION()], false);
    view.flush();
    const card = q(view.el, ".acpnb-card-permission");
    expect(document.activeElement).toBe(card);
    const heading = card.getAttribute("aria-labelledby");
    expect(heading !== null && document.getElementById(heading) !== null).toBe(true);
    q<HTMLButtonElement>(card, "button").click();
    await settle();
    expect(bodies.at(-1)).toMatchObject({ type: "chat:permission.respond", optionId: "y" });
    expect(document.activeElement).toBe(q(view.el, "textarea"));
    view.apply(
      [ev({ kind: "permission_resolved", requestId: "p1", outcome: "selected", optionId: "y" })],
      false,
    );
    view.flush();
    expect(card.hasAttribute("aria-labelledby")).toBe(false);
    expect(q(view.el, ".acpnb-sr-only [role=status]").textContent).toContain("Allowed");
  });
});

describe("the chat's keys", () => {
  it("stops the running turn on Escape, unless an open menu takes it", () => {
    vi.useFakeTimers();
    const { view, bodies } = setup();
    const input = q<HTMLTextAreaElement>(view.el, "textarea");
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(bodies).toEqual([]); // no turn runs
    view.apply([ev({ kind: "turn_started", prompt: "slow" })], false);
    view.flush();
    const menuEscape = new KeyboardEvent("keydown", {
      key: "Escape",
      bubbles: true,
      cancelable: true,
    });
    menuEscape.preventDefault();
    input.dispatchEvent(menuEscape);
    expect(bodies).toEqual([]);
    input.dispatchEvent(
      new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true }),
    );
    expect(bodies).toEqual([{ type: "chat:cancel" }]);
    vi.useRealTimers();
  });

  it("tells screen readers the chat's keys from the composer", () => {
    const { view } = setup();
    const input = q<HTMLTextAreaElement>(view.el, "textarea");
    const hint = document.getElementById(input.getAttribute("aria-describedby") ?? "");
    expect(hint?.textContent).toContain("Escape stops the running turn");
    expect(hint?.textContent).toContain("Ctrl+Shift+Y");
  });
});
