// @vitest-environment jsdom
// Permission and elicitation cards: every field kind, gating, the requests they send.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type CardContext, ElicitationCard, linkTarget, PermissionCard } from "../src/cards";
import type {
  CellEdit,
  Edit,
  ElicitationField,
  ElicitationView,
  FileEdit,
  PermissionView,
} from "../src/contracts";
import { isolate, type Locale, translator } from "../src/i18n";
import { answerer } from "../src/who";
import { recorder, settle } from "./helpers";

const HOSTILE = '<img src=x onerror="alert(1)">';

/** This page's login, as a token holder's browser is named. */
const ME = { id: "token-holders", name: "Anonymous Aitne" };

function context(locale: Locale = "en") {
  const rec = recorder();
  const t = translator(locale);
  const ctx: CardContext = {
    t,
    agentName: () => "Claude",
    toolTitle: (id: string) => (id === "mcp-1" ? "mcp__picker__pick" : null),
    answerer: (by) => answerer(by, ME, "Claude", t),
    request: rec.request,
  };
  return { ctx, ...rec };
}

function question(
  fields: ElicitationField[],
  extra: Partial<ElicitationView> = {},
): ElicitationView {
  return {
    requestId: "q1",
    message: "Which color?",
    fields,
    toolCallId: null,
    title: null,
    deadline: null,
    outcome: null,
    by: null,
    ...extra,
  };
}

function mount(card: { el: HTMLElement }): HTMLElement {
  document.body.append(card.el);
  return card.el;
}

function buttons(root: HTMLElement): Map<string, HTMLButtonElement> {
  return new Map([...root.querySelectorAll("button")].map((b) => [b.textContent ?? "", b]));
}

function type(input: HTMLInputElement, value: string): void {
  input.value = value;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

function toggle(input: HTMLInputElement): void {
  input.click();
}

const COLOR: ElicitationField = {
  name: "color",
  type: "enum",
  title: "Color",
  options: [
    { value: "red", label: "Red", description: "warm" },
    { value: "blue", label: "Blue", description: "cool" },
  ],
};

beforeEach(() => {
  document.body.replaceChildren();
});

describe("elicitation card fields", () => {
  it("renders an enum as radio rows with label and description, and answers the pick", async () => {
    const { ctx, bodies } = context();
    const root = mount(new ElicitationCard(question([COLOR]), ctx));
    const fieldset = root.querySelector("fieldset");
    expect(fieldset?.querySelector("legend")?.textContent).toBe("Color");
    const radios = [...root.querySelectorAll<HTMLInputElement>("input[type=radio]")];
    expect(radios).toHaveLength(2);
    expect(radios[0]?.closest("label")?.textContent).toBe("Redwarm");
    expect(radios[0]?.name).toBe(radios[1]?.name);
    toggle(radios[1] as HTMLInputElement);
    buttons(root).get("Answer")?.click();
    await settle();
    expect(bodies).toEqual([
      {
        type: "chat:elicitation.respond",
        requestId: "q1",
        action: "accept",
        values: { color: "blue" },
      },
    ]);
  });

  it("toggles multi-select checkboxes without sending, and commits them with Answer", async () => {
    const { ctx, bodies } = context();
    const field: ElicitationField = {
      name: "langs",
      type: "multi",
      title: "Languages",
      options: [{ value: "py" }, { value: "ts" }, { value: "rs" }],
    };
    const root = mount(new ElicitationCard(question([field]), ctx));
    const boxes = [...root.querySelectorAll<HTMLInputElement>("input[type=checkbox]")];
    expect(boxes.map((b) => b.closest("label")?.textContent)).toEqual(["py", "ts", "rs"]);
    toggle(boxes[0] as HTMLInputElement);
    toggle(boxes[2] as HTMLInputElement);
    toggle(boxes[0] as HTMLInputElement);
    toggle(boxes[0] as HTMLInputElement);
    expect(bodies).toEqual([]);
    buttons(root).get("Answer")?.click();
    await settle();
    expect(bodies[0]).toMatchObject({ action: "accept", values: { langs: ["py", "rs"] } });
  });

  it("renders a boolean as a checkbox prefilled from its default", async () => {
    const { ctx, bodies } = context();
    const field: ElicitationField = {
      name: "ok",
      type: "boolean",
      title: "Confirm",
      default: true,
    };
    const root = mount(new ElicitationCard(question([field]), ctx));
    const box = root.querySelector<HTMLInputElement>("input[type=checkbox]");
    expect(box?.checked).toBe(true);
    // Its title is its label, said once (no legend repeats it).
    expect(root.querySelector(".acpnb-field")?.textContent).toBe("Confirm");
    expect(root.querySelector("legend")).toBeNull();
    toggle(box as HTMLInputElement);
    buttons(root).get("Answer")?.click();
    await settle();
    expect(bodies[0]).toMatchObject({ values: { ok: false } });
  });

  it("labels a checkbox with a description by it, under its title", () => {
    const { ctx } = context();
    const field: ElicitationField = {
      name: "ok",
      type: "boolean",
      title: "Confirm",
      description: "Delete the files",
      required: true,
    };
    const root = mount(new ElicitationCard(question([field]), ctx));
    expect(root.querySelector("legend")?.textContent).toBe("Confirm (required)");
    expect(root.querySelector(".acpnb-choice")?.textContent).toBe("Delete the files");
    const lone = mount(new ElicitationCard(question([{ ...field, description: null }]), ctx));
    expect(lone.querySelector(".acpnb-field")?.textContent).toBe("Confirm (required)");
  });

  it("renders number and integer fields as number inputs; a fraction blocks an integer", async () => {
    const { ctx, bodies } = context();
    const fields: ElicitationField[] = [
      { name: "n", type: "integer", title: "Count", default: 3 },
      { name: "x", type: "number", title: "Ratio" },
    ];
    const root = mount(new ElicitationCard(question(fields), ctx));
    const [count, ratio] = [...root.querySelectorAll<HTMLInputElement>("input[type=number]")];
    expect(count?.step).toBe("1");
    expect(count?.value).toBe("3");
    const answer = buttons(root).get("Answer") as HTMLButtonElement;
    type(count as HTMLInputElement, "1.5");
    expect(answer.disabled).toBe(true);
    type(count as HTMLInputElement, "7");
    type(ratio as HTMLInputElement, "0.25");
    expect(answer.disabled).toBe(false);
    answer.click();
    await settle();
    expect(bodies[0]).toMatchObject({ values: { n: 7, x: 0.25 } });
  });

  it("renders text as a plain input with autocomplete and spellcheck off, tied to its label", () => {
    const { ctx } = context();
    const field: ElicitationField = {
      name: "s",
      type: "text",
      title: "Name",
      placeholder: "who?",
      default: "Ada",
    };
    const root = mount(new ElicitationCard(question([field]), ctx));
    const input = root.querySelector<HTMLInputElement>("input[type=text]") as HTMLInputElement;
    expect(input.getAttribute("autocomplete")).toBe("off");
    expect(input.getAttribute("spellcheck")).toBe("false");
    expect(input.placeholder).toBe("who?");
    expect(input.value).toBe("Ada");
    expect(input.labels?.[0]?.textContent).toBe("Name");
    expect(input.closest("fieldset")?.querySelector("legend label")).toBe(input.labels?.[0]);
  });

  it("prefills an enum from its default", () => {
    const { ctx } = context();
    const root = mount(new ElicitationCard(question([{ ...COLOR, default: "blue" }]), ctx));
    const checked = root.querySelector<HTMLInputElement>("input[type=radio]:checked");
    expect(checked?.closest("label")?.textContent).toContain("Blue");
  });
});

describe("elicitation card actions", () => {
  it("enables Answer only when every required field has a value, omitting empty optional ones", async () => {
    const { ctx, bodies } = context();
    const fields: ElicitationField[] = [
      { ...COLOR, required: true },
      { name: "why", type: "text", title: "Why", required: true },
      { name: "note", type: "text", title: "Note" },
    ];
    const root = mount(new ElicitationCard(question(fields), ctx));
    expect(root.querySelectorAll(".acpnb-required")).toHaveLength(2);
    const answer = buttons(root).get("Answer") as HTMLButtonElement;
    expect(answer.disabled).toBe(true);
    toggle(root.querySelector<HTMLInputElement>("input[type=radio]") as HTMLInputElement);
    expect(answer.disabled).toBe(true);
    const [why] = [...root.querySelectorAll<HTMLInputElement>("input[type=text]")];
    type(why as HTMLInputElement, "   ");
    expect(answer.disabled).toBe(true);
    type(why as HTMLInputElement, "because");
    expect(answer.disabled).toBe(false);
    answer.click();
    await settle();
    expect(bodies[0]).toEqual({
      type: "chat:elicitation.respond",
      requestId: "q1",
      action: "accept",
      values: { color: "red", why: "because" },
    });
  });

  it("sends decline and cancel without values, whatever is filled in", async () => {
    const { ctx, bodies } = context();
    const root = mount(new ElicitationCard(question([{ ...COLOR, required: true }]), ctx));
    toggle(root.querySelector<HTMLInputElement>("input[type=radio]") as HTMLInputElement);
    buttons(root).get("Decline")?.click();
    await settle();
    buttons(root).get("Cancel")?.click();
    await settle();
    expect(bodies).toEqual([
      { type: "chat:elicitation.respond", requestId: "q1", action: "decline" },
      { type: "chat:elicitation.respond", requestId: "q1", action: "cancel" },
    ]);
  });

  it("has no Answer on a message-only card, only Decline and Cancel", () => {
    const { ctx } = context();
    const root = mount(new ElicitationCard(question([], { message: "Go on?" }), ctx));
    expect([...buttons(root).keys()]).toEqual(["Decline", "Cancel"]);
    expect(root.textContent).toContain("Go on?");
  });

  it("shows an error line when the answer is refused, and stays usable", async () => {
    const { ctx, results, bodies } = context();
    results.push({ ok: false, code: "FORBIDDEN", detail: null });
    const root = mount(new ElicitationCard(question([COLOR]), ctx));
    buttons(root).get("Decline")?.click();
    await settle();
    const error = root.querySelector<HTMLElement>("[role=alert]");
    expect(error?.hidden).toBe(false);
    expect(error?.textContent).toBe("Failed: only the chat's owner can do this");
    expect(buttons(root).get("Decline")?.disabled).toBe(false);
    buttons(root).get("Cancel")?.click();
    await settle();
    expect(bodies).toHaveLength(2);
    expect(error?.hidden).toBe(true);
  });

  it("shows AskUserQuestion as one question whose Other box is the custom field", async () => {
    const { ctx, bodies } = context();
    const fields: ElicitationField[] = [
      { ...COLOR, name: "question_0", custom: "question_0_custom" },
      {
        name: "question_0_custom",
        type: "text",
        title: "Other",
        description: "Type your own answer",
        customOf: "question_0",
      },
    ];
    const root = mount(new ElicitationCard(question(fields), ctx));
    const sets = root.querySelectorAll("fieldset");
    expect(sets).toHaveLength(1);
    const other = sets[0]?.querySelector<HTMLInputElement>(
      ".acpnb-other input",
    ) as HTMLInputElement;
    expect(other.labels?.[0]?.textContent).toBe("Other");
    expect(other.placeholder).toBe("Type your own answer");
    expect(sets[0]?.querySelectorAll("input[type=radio]")).toHaveLength(2);
    type(other, "green");
    buttons(root).get("Answer")?.click();
    await settle();
    expect(bodies[0]).toMatchObject({ values: { question_0_custom: "green" } });
  });

  it("answers on Enter in a text box, but never on Enter on a choice", async () => {
    const { ctx, bodies } = context();
    const fields: ElicitationField[] = [
      { ...COLOR, name: "q", custom: "q_custom" },
      { name: "q_custom", type: "text", customOf: "q" },
    ];
    const root = mount(new ElicitationCard(question(fields), ctx));
    const enter = () =>
      new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true });
    root.querySelector("input[type=radio]")?.dispatchEvent(enter());
    await settle();
    expect(bodies).toEqual([]);
    const other = root.querySelector<HTMLInputElement>(".acpnb-other input") as HTMLInputElement;
    type(other, "teal");
    other.dispatchEvent(enter());
    await settle();
    expect(bodies).toEqual([
      {
        type: "chat:elicitation.respond",
        requestId: "q1",
        action: "accept",
        values: { q_custom: "teal" },
      },
    ]);
  });

  it("counts an AskUserQuestion's Other text as the answer of a required question", () => {
    const { ctx } = context();
    const fields: ElicitationField[] = [
      { ...COLOR, name: "q", required: true, custom: "q_custom" },
      { name: "q_custom", type: "text", customOf: "q" },
    ];
    const root = mount(new ElicitationCard(question(fields), ctx));
    const answer = buttons(root).get("Answer") as HTMLButtonElement;
    expect(answer.disabled).toBe(true);
    type(root.querySelector<HTMLInputElement>(".acpnb-other input") as HTMLInputElement, "x");
    expect(answer.disabled).toBe(false);
  });

  it("shows a mm:ss countdown to the deadline", () => {
    const { ctx } = context();
    const card = new ElicitationCard(question([COLOR], { deadline: 1_000_000 + 75_000 }), ctx);
    card.tick(1_000_000);
    const timer = card.el.querySelector("[role=timer]");
    expect(timer?.textContent).toBe("01:15 left");
    expect(timer?.classList.contains("acpnb-countdown-low")).toBe(false);
    const status = card.el.querySelector("[role=status]");
    expect(status?.textContent).toBe("");
    // The last 15 s: a warning, in words and colour, announced once.
    card.tick(1_000_000 + 60_000);
    expect(timer?.textContent).toBe("00:15 left: answer now");
    expect(timer?.classList.contains("acpnb-countdown-low")).toBe(true);
    expect(status?.textContent).toBe("15 seconds left to answer before this question times out");
    card.tick(1_000_000 + 74_100);
    expect(timer?.textContent).toBe("00:01 left: answer now");
    expect(status?.textContent).toBe("15 seconds left to answer before this question times out");
    card.tick(1_000_000 + 90_000);
    expect(timer?.textContent).toBe("00:00 left: answer now");
  });

  it("uses the Chinese strings", () => {
    const { ctx } = context("zh");
    const card = new ElicitationCard(question([COLOR], { deadline: 61_000 }), ctx);
    card.tick(0);
    expect([...buttons(card.el).keys()]).toEqual(["回答", "拒绝", "取消"]);
    expect(card.el.querySelector("[role=timer]")?.textContent).toBe("剩余 01:01");
    expect(card.el.textContent).toContain("Claude 提问");
  });

  it("renders hostile titles, descriptions, labels and messages as text", () => {
    const { ctx } = context();
    const field: ElicitationField = {
      name: HOSTILE,
      type: "enum",
      title: HOSTILE,
      description: HOSTILE,
      options: [{ value: HOSTILE, label: HOSTILE, description: HOSTILE }],
    };
    const state = question(
      [field, { name: "t", type: "text", title: HOSTILE, placeholder: HOSTILE }],
      {
        title: HOSTILE,
        message: HOSTILE,
      },
    );
    const root = mount(new ElicitationCard(state, { ...ctx, agentName: () => HOSTILE }));
    expect(root.querySelector("img")).toBeNull();
    expect(root.textContent?.split(HOSTILE).length).toBeGreaterThan(6);
  });

  it("leaves a one-line note of the answer once settled, as a permission does", () => {
    const { ctx } = context();
    const card = new ElicitationCard(question([COLOR]), ctx);
    mount(card);
    expect(card.pending).toBe(true);
    card.update(
      question([COLOR], { outcome: "accepted", values: { color: "red" }, by: "Anonymous Aitne" }),
    );
    expect(card.pending).toBe(false);
    expect(card.el.isConnected).toBe(true);
    expect(card.el.className).toBe("acpnb-card-remnant");
    expect(card.el.textContent).toBe("Answered: Color: Red (by you)");
    expect(card.el.querySelector("button, input")).toBeNull();
    expect(card.el.hasAttribute("aria-labelledby")).toBe(false);
  });

  it.each([
    [{ outcome: "accepted" }, "Answered"],
    [{ outcome: "declined", by: "Anonymous Mneme" }, "Declined (by another browser)"],
    // Another login that drew this page's moon: the server numbers its name.
    [{ outcome: "declined", by: "Anonymous Aitne 2" }, "Declined (by another browser)"],
    [{ outcome: "cancelled", by: "agent" }, "Cancelled (by Claude)"],
    [{ outcome: "timeout" }, "Timed out"],
  ] as const)("is built settled from history as its note (%o)", (settled, text) => {
    const { ctx } = context();
    const card = new ElicitationCard(question([COLOR], settled), ctx);
    expect(card.el.textContent).toBe(text);
  });
});

function permission(extra: Partial<PermissionView> = {}): PermissionView {
  return {
    requestId: "p1",
    toolCall: {
      toolCallId: "t1",
      title: "Edit a.py",
      content: [{ type: "diff", path: "/w/a.py", oldText: "x\n", newText: "y\n" }],
    },
    options: [
      { optionId: "allow-once", name: "Yes", kind: "allow_once" },
      { optionId: "allow-always", name: "Always", kind: "allow_always" },
      { optionId: "reject", name: "No", kind: "reject_once" },
    ],
    deadline: null,
    outcome: null,
    optionId: null,
    by: null,
    ...extra,
  };
}

describe("permission card", () => {
  it("offers one button per option, styled by kind, and answers the choice", async () => {
    const { ctx, bodies } = context();
    const root = mount(new PermissionCard(permission(), ctx));
    expect(root.textContent).toContain("Edit a.py");
    expect(root.querySelector(".acpnb-diff-add")?.textContent).toBe("+y\n");
    const all = buttons(root);
    expect([...all.keys()]).toEqual(["Yes", "Always", "No"]);
    expect(all.get("Yes")?.classList.contains("acpnb-allow")).toBe(true);
    expect(all.get("Always")?.classList.contains("acpnb-allow")).toBe(true);
    expect(all.get("No")?.classList.contains("acpnb-reject")).toBe(true);
    all.get("No")?.click();
    await settle();
    expect(bodies).toEqual([
      { type: "chat:permission.respond", requestId: "p1", optionId: "reject" },
    ]);
  });

  it.each([
    [{ outcome: "selected", optionId: "allow-once" }, "Allowed"],
    [{ outcome: "selected", optionId: "allow-always" }, "Allowed: Always"],
    [{ outcome: "selected", optionId: "reject" }, "Rejected"],
    [{ outcome: "cancelled" }, "Cancelled"],
    [{ outcome: "timeout" }, "Timed out"],
    [{ outcome: "selected", optionId: "allow-once", by: "alice" }, "Allowed (by alice)"],
    [{ outcome: "selected", optionId: "allow-once", by: "Anonymous Aitne" }, "Allowed (by you)"],
    [
      { outcome: "selected", optionId: "allow-always", by: "Anonymous Mneme" },
      "Allowed: Always (by another browser)",
    ],
    [{ outcome: "cancelled", by: "kernel" }, "Cancelled (by the notebook's code)"],
    [{ outcome: "cancelled", by: "agent" }, "Cancelled (by Claude)"],
    [{ outcome: "cancelled", by: "teardown" }, "Cancelled"],
  ] as const)("settles to a one-line remnant (%o)", (settled, text) => {
    const { ctx } = context();
    const card = new PermissionCard(permission(), ctx);
    card.update(permission(settled));
    expect(card.el.textContent).toBe(text);
    expect(card.el.querySelector("button")).toBeNull();
    expect(card.pending).toBe(false);
  });

  it("shows code quoted in backticks in its title as inline code", () => {
    const { ctx } = context();
    const card = new PermissionCard(
      permission({ toolCall: { toolCallId: "t1", title: "Run `ls -la` in `/tmp`, then `" } }),
      ctx,
    );
    const title = mount(card).querySelector(".acpnb-card-title") as HTMLElement;
    expect(title.textContent).toBe("Run ls -la in /tmp, then `");
    expect([...title.querySelectorAll("code")].map((c) => c.textContent)).toEqual([
      "ls -la",
      "/tmp",
    ]);
    const hostile = new PermissionCard(
      permission({ toolCall: { toolCallId: "t1", title: `Run \`${HOSTILE}\`` } }),
      ctx,
    );
    expect(mount(hostile).querySelector("code")?.textContent).toBe(HOSTILE);
    expect(hostile.el.querySelector("img")).toBeNull();
  });

  it("shows an error line on a refused answer and keeps the buttons usable", async () => {
    const { ctx, results } = context();
    results.push({ ok: false, code: "PERMISSION_NOT_FOUND", detail: "gone" });
    const root = mount(new PermissionCard(permission(), ctx));
    buttons(root).get("Yes")?.click();
    await settle();
    expect(root.querySelector("[role=alert]")?.textContent).toBe(
      `Failed: this request is no longer open (${isolate("gone")})`,
    );
    expect(buttons(root).get("Yes")?.disabled).toBe(false);
  });

  it("renders hostile tool titles and option names as text", () => {
    const { ctx } = context();
    const state = permission({
      toolCall: { title: HOSTILE },
      options: [{ optionId: "a", name: HOSTILE, kind: "allow_once" }],
    });
    const root = mount(new PermissionCard(state, ctx));
    expect(root.querySelector("img")).toBeNull();
    expect(buttons(root).has(HOSTILE)).toBe(true);
  });

  it("uses the Chinese strings", () => {
    const { ctx } = context("zh");
    const card = new PermissionCard(permission(), ctx);
    expect(card.el.textContent).toContain("Claude 请求权限");
    card.update(permission({ outcome: "selected", optionId: "allow-once" }));
    expect(card.el.textContent).toBe("已允许");
  });
});

function editCard(edit: Edit, extra: Partial<PermissionView> = {}): PermissionView {
  return permission({
    toolCall: { title: "Insert a code cell at 3", kind: "edit" },
    options: [
      { optionId: "accept", name: "Accept", kind: "allow_once" },
      { optionId: "accept_turn", name: "Accept all in this turn", kind: "allow_always" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ],
    edit,
    ...extra,
  });
}

const CELL: CellEdit = {
  op: "edit",
  path: "work/a.ipynb",
  cellType: "code",
  index: 2,
  cellId: "c-2",
  before: "x = 1\nprint(x)\n",
  after: "x = 2\nprint(x)\n",
};

function diffLines(root: HTMLElement): string[] {
  return [...root.querySelectorAll(".acpnb-diff-body span")].map((s) => s.textContent ?? "");
}

describe("edit card", () => {
  it("shows a changed cell's line diff, where it is, then the options", async () => {
    const { ctx, bodies } = context();
    const root = mount(new PermissionCard(editCard(CELL), ctx));
    expect(root.querySelector(".acpnb-card-heading")?.textContent).toBe(
      "Claude wants to change the notebook",
    );
    expect(root.querySelector(".acpnb-card-title")?.textContent).toBe("Changed cell 2");
    expect(root.querySelector(".acpnb-diff-path")?.textContent).toBe(
      "work/a.ipynb · cell 2 · id c-2",
    );
    expect(diffLines(root)).toEqual(["@@ -1,2 +1,2 @@\n", "-x = 1\n", "+x = 2\n", " print(x)\n"]);
    expect(root.textContent).not.toContain("Insert a code cell at 3"); // not the raw call
    const all = buttons(root);
    expect([...all.keys()]).toEqual(["Accept", "Accept all in this turn", "Reject"]);
    all.get("Accept all in this turn")?.click();
    await settle();
    expect(bodies).toEqual([
      { type: "chat:permission.respond", requestId: "p1", optionId: "accept_turn" },
    ]);
  });

  it.each([
    [
      { ...CELL, op: "insert", before: "", after: "a\nb\n" },
      "New code cell at 2",
      ["+a\n", "+b\n"],
    ],
    [{ ...CELL, op: "delete", after: "" }, "Deleted cell 2", ["-x = 1\n", "-print(x)\n"]],
  ] as const)("an insert is all added, a delete all removed (%#)", (edit, title, lines) => {
    const { ctx } = context();
    const root = mount(new PermissionCard(editCard(edit), ctx));
    expect(root.querySelector(".acpnb-card-title")?.textContent).toBe(title);
    expect(diffLines(root).slice(1)).toEqual(lines);
  });

  it("shows a move from one index to another with the source unchanged", () => {
    const { ctx } = context();
    const edit: CellEdit = { ...CELL, op: "move", toIndex: 5, cellId: null, after: CELL.before };
    const root = mount(new PermissionCard(editCard(edit), ctx));
    expect(root.querySelector(".acpnb-card-title")?.textContent).toBe("Moved cell from 2 to 5");
    expect(root.querySelector(".acpnb-diff-path")?.textContent).toBe("work/a.ipynb · cell 2");
    expect(root.querySelector(".acpnb-diff-body")?.textContent).toBe(CELL.before);
  });

  it("settles to the change, the outcome and who answered", () => {
    const { ctx } = context();
    const card = new PermissionCard(editCard(CELL), ctx);
    card.update(editCard(CELL, { outcome: "selected", optionId: "accept", by: "alice" }));
    expect(card.el.textContent).toBe("Changed cell 2: Allowed: Accept (by alice)");
    card.update(editCard(CELL, { outcome: "timeout" }));
    expect(card.el.textContent).toBe("Changed cell 2: Timed out");
  });

  it("keeps hostile paths and sources as text, and speaks Chinese", () => {
    const { ctx } = context("zh");
    const edit: CellEdit = { ...CELL, path: HOSTILE, after: HOSTILE };
    const root = mount(new PermissionCard(editCard(edit), ctx));
    expect(root.querySelector("img")).toBeNull();
    expect(root.textContent).toContain("Claude 想要修改笔记本");
    expect(root.querySelector(".acpnb-card-title")?.textContent).toBe("修改单元格 2");
  });
});

const FILE: FileEdit = {
  op: "write",
  path: "notes/todo.md",
  before: "# Todo\n- a\n",
  after: "# Todo\n- a\n- b\n",
  created: false,
  where: null,
};

describe("file write card", () => {
  it("shows the file's diff under the edit card's options", () => {
    const { ctx } = context();
    const root = mount(new PermissionCard(editCard(FILE), ctx));
    expect(root.querySelector(".acpnb-card-heading")?.textContent).toBe(
      "Claude wants to write a file",
    );
    expect(root.querySelector(".acpnb-card-title")?.textContent).toBe("Changed file notes/todo.md");
    expect(root.querySelector(".acpnb-diff-path")?.textContent).toBe("notes/todo.md");
    expect(diffLines(root).slice(1)).toEqual([" # Todo\n", " - a\n", "+- b\n"]);
    expect([...buttons(root).keys()]).toEqual(["Accept", "Accept all in this turn", "Reject"]);
  });

  it("says where an open file lands, a new file is all added, and it settles", () => {
    const { ctx } = context();
    const open = mount(new PermissionCard(editCard({ ...FILE, where: "the open editor" }), ctx));
    expect(open.querySelector(".acpnb-diff-path")?.textContent).toBe(
      "notes/todo.md · the open editor",
    );
    const created = { ...FILE, before: "", after: "a\n", created: true };
    const card = new PermissionCard(editCard(created), ctx);
    expect(mount(card).querySelector(".acpnb-card-title")?.textContent).toBe(
      "New file notes/todo.md",
    );
    expect(diffLines(card.el).slice(1)).toEqual(["+a\n"]);
    card.update(editCard(created, { outcome: "selected", optionId: "reject", by: "bob" }));
    expect(card.el.textContent).toBe("New file notes/todo.md: Rejected (by bob)");
  });
});

describe("long agent titles", () => {
  it("are cut for display so layout stays cheap", async () => {
    const { clip } = await import("../src/dom");
    expect(clip("short")).toBe("short");
    const long = "x".repeat(300_000);
    const cut = clip(long);
    expect(cut.length).toBe(500);
    expect(cut.endsWith("…")).toBe(true);
  });
});

describe("where a question comes from", () => {
  it("names the running tool the bridge tied it to, and nothing for an unknown id", () => {
    const { ctx } = context();
    const field: ElicitationField = { name: "ok", type: "boolean" };
    const tied = new ElicitationCard(question([field], { toolCallId: "mcp-1" }), ctx);
    expect(tied.el.querySelector(".acpnb-card-source")?.textContent).toBe("From mcp__picker__pick");
    const loose = new ElicitationCard(question([field], { toolCallId: "other" }), ctx);
    expect(loose.el.querySelector(".acpnb-card-source")).toBeNull();
    const zh = new ElicitationCard(question([field], { toolCallId: "mcp-1" }), context("zh").ctx);
    expect(zh.el.querySelector(".acpnb-card-source")?.textContent).toBe("来自 mcp__picker__pick");
  });
});

describe("URL question card", () => {
  const URL_Q = { message: "Sign in to GitHub", url: "https://Bücher.example:8443/login?next=/" };
  const opened: unknown[][] = [];
  beforeEach(() => {
    opened.length = 0;
    vi.spyOn(window, "open").mockImplementation((...args: unknown[]) => {
      opened.push(args);
      return null;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** A mounted URL card, its element and the requests it sends. */
  function urlCard() {
    const { ctx, bodies } = context();
    const card = new ElicitationCard(question([], URL_Q), ctx);
    return { card, root: mount(card), bodies };
  }

  it("shows the host and the whole URL as text, and loads nothing before a click", () => {
    const { root, bodies } = urlCard();
    // The host as the browser resolves it (punycode, lower case), emphasised.
    expect(root.querySelector(".acpnb-link-host strong")?.textContent).toBe(
      "xn--bcher-kva.example:8443",
    );
    expect(root.querySelector(".acpnb-link-url")?.textContent).toBe(
      "https://xn--bcher-kva.example:8443/login?next=/",
    );
    expect(root.textContent).toContain("Sign in to GitHub");
    // Nothing that navigates, loads or prefetches: no link, image, frame or <link>.
    expect(root.querySelectorAll("a, img, iframe, link, [href], [src]")).toHaveLength(0);
    expect([...buttons(root).keys()]).toEqual([
      "Open xn--bcher-kva.example:8443",
      "Decline",
      "Cancel",
    ]);
    expect(opened).toEqual([]);
    expect(bodies).toEqual([]);
  });

  it("opens the page on click in a new tab with no opener, and accepts without values", async () => {
    const { card, root, bodies } = urlCard();
    buttons(root).get("Open xn--bcher-kva.example:8443")?.click();
    await settle();
    expect(opened).toEqual([
      ["https://xn--bcher-kva.example:8443/login?next=/", "_blank", "noopener,noreferrer"],
    ]);
    expect(bodies).toEqual([
      { type: "chat:elicitation.respond", requestId: "q1", action: "accept" },
    ]);
    // Accepted: it waits for the agent, can be opened again, and cannot be declined.
    card.update(question([], { ...URL_Q, outcome: "accepted" }));
    expect(card.pending).toBe(true);
    expect(root.isConnected).toBe(true);
    expect(root.textContent).toContain("Waiting for Claude");
    const again = buttons(root).get("Open xn--bcher-kva.example:8443 again");
    expect(again?.disabled).toBe(false);
    expect(buttons(root).get("Decline")?.hidden).toBe(true);
    again?.click();
    await settle();
    expect(opened).toHaveLength(2);
    expect(bodies).toHaveLength(1);
    // The agent's elicitation/complete closes it.
    card.update(question([], { ...URL_Q, outcome: "completed" }));
    expect(card.pending).toBe(false);
    expect(root.textContent).toBe("Opened xn--bcher-kva.example:8443");
  });

  it("declines and cancels as a form does, and a declined card closes", async () => {
    const { card, root, bodies } = urlCard();
    buttons(root).get("Decline")?.click();
    await settle();
    expect(bodies).toEqual([
      { type: "chat:elicitation.respond", requestId: "q1", action: "decline" },
    ]);
    card.update(question([], { ...URL_Q, outcome: "declined" }));
    expect(root.textContent).toBe("Declined");
    expect(opened).toEqual([]);
  });

  // The bridge states these hosts (tests/test_elicitation.py); the browser opens them.
  const hosts = JSON.parse(
    // A path, not a URL: under jsdom, URL is jsdom's, which node:url does not take.
    readFileSync(
      join(dirname(fileURLToPath(import.meta.url)), "../../tests/vectors/url_hosts.json"),
      "utf8",
    ),
  ) as { shown: { url: string; host: string }[] };
  it.each(hosts.shown.map((v) => [v.url, v.host]))("opens %s on host %s", (url, host) => {
    expect(linkTarget(url)).toEqual({ href: new URL(url).href, host });
  });

  it.each([
    ["javascript:alert(1)", "only http and https"],
    ["https://bank.example@evil.example/", "credentials"],
    ["not a url", "not a URL"],
  ])("never offers %s as a link", (url, why) => {
    const { ctx } = context();
    const root = mount(new ElicitationCard(question([], { ...URL_Q, url }), ctx));
    expect(root.textContent).toContain(why);
    expect(root.textContent).not.toContain("evil.example");
    expect([...buttons(root).keys()]).toEqual(["Decline", "Cancel"]);
    expect(root.querySelectorAll("a, [href]")).toHaveLength(0);
    expect(linkTarget(url)).toEqual({ refused: expect.stringContaining(why) });
  });
});
