// @vitest-environment jsdom
// The sign-in card (the fold's `auth`) and the header's Sign out.
import { afterEach, describe, expect, it } from "vitest";
import type { AuthMethodView, StreamEvent } from "../src/contracts";
import { ev, mountedView, settle, unmountViews } from "./helpers";

const METHODS: AuthMethodView[] = [
  { id: "own", name: "Agent sign-in", type: "agent", description: "It signs you in" },
  {
    id: "tty",
    name: "Terminal login",
    type: "terminal",
    command: ["agent", "--login"],
    env: [{ name: "BY", value: "terminal" }],
    commandLine: "BY=terminal agent --login",
  },
  {
    id: "key",
    name: "API key",
    type: "env_var",
    vars: [{ name: "AGENT_KEY", secret: true, optional: false }],
    link: "https://example.com/keys",
  },
];

afterEach(unmountViews);

function setup() {
  const { view, apply, ...rec } = mountedView();
  apply(ev({ kind: "agent_status", status: "starting", agent: "demo" }));
  return { view, apply, card: view.el.querySelector(".acpnb-signin") as HTMLElement, ...rec };
}

function auth(state: string, more: Record<string, unknown> = {}): StreamEvent {
  return ev({ kind: "auth", state, methods: METHODS, logout: true, ...more });
}

describe("the sign-in card", () => {
  it("shows each method with what it does, and runs one only on a click", async () => {
    const { apply, card, bodies } = setup();
    expect(card.hidden).toBe(true);
    apply(auth("required", { detail: "Authentication required" }));
    expect(card.hidden).toBe(false);
    expect(card.textContent).toContain("demo needs you to sign in");
    expect(card.textContent).toContain("Authentication required");
    const tty = card.querySelector('[data-method="tty"]') as HTMLElement;
    expect(tty.querySelector("code")?.textContent).toBe("BY=terminal agent --login");
    const key = card.querySelector('[data-method="key"]') as HTMLElement;
    expect(key.textContent).toContain("AGENT_KEY");
    expect(key.textContent).toContain("Chat(env={...})");
    // The agent's link is text, never a link, and the env method has no button.
    expect(key.querySelector("a, button")).toBeNull();
    expect(bodies).toEqual([]);
    (tty.querySelector("button") as HTMLButtonElement).click();
    await settle();
    expect(bodies).toEqual([{ type: "chat:auth", op: "start", methodId: "tty" }]);
  });

  it("takes a masked line for a running terminal method and keeps none of it", async () => {
    const { apply, card, bodies } = setup();
    apply(auth("required"));
    apply(auth("signing_in", { methodId: "tty", toolCallId: "acp-notebook-sign-in-1" }));
    expect(card.textContent).toContain("Signing in: Terminal login");
    const input = card.querySelector("input.acpnb-signin-input") as HTMLInputElement;
    const form = card.querySelector("form") as HTMLFormElement;
    expect(form.hidden).toBe(false);
    expect(input.type).toBe("password");
    const mask = card.querySelector(".acpnb-signin-mask input") as HTMLInputElement;
    mask.click();
    expect(input.type).toBe("text");
    input.value = "hunter2";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", cancelable: true }));
    await settle();
    expect(input.value).toBe("");
    expect(bodies).toEqual([{ type: "chat:auth", op: "input", text: "hunter2" }]);
    // An agent's own method has no line to type; both can be stopped.
    apply(auth("signing_in", { methodId: "own" }));
    expect(form.hidden).toBe(true);
    (card.querySelector(".acpnb-signin-stop") as HTMLButtonElement).click();
    await settle();
    expect(bodies[1]).toEqual({ type: "chat:auth", op: "stop" });
    apply(auth("signed_in", { methodId: "own" }));
    expect(card.hidden).toBe(true);
  });

  it("is hidden once the agent exited, and says why a request was refused", async () => {
    const { apply, card, results } = setup();
    apply(auth("required"));
    results.push({ ok: false, code: "INVALID", detail: "a sign-in is running already" });
    (card.querySelector('[data-method="own"] button') as HTMLButtonElement).click();
    await settle();
    expect(card.querySelector(".acpnb-signin-note")?.textContent).toContain(
      "a sign-in is running already",
    );
    apply(ev({ kind: "agent_status", status: "exited", detail: "gone" }));
    expect(card.hidden).toBe(true);
  });
});

describe("Sign out", () => {
  it("shows where the agent offers logout, and asks a second click", async () => {
    const { view, apply, bodies } = setup();
    const button = view.el.querySelector(".acpnb-sign-out") as HTMLButtonElement;
    expect(button.hidden).toBe(true);
    const capabilities = { auth: { logout: {} } };
    apply(ev({ kind: "agent_status", status: "ready", agentCapabilities: capabilities }));
    expect(button.hidden).toBe(false);
    button.click();
    expect(button.textContent).toBe("Sign out? Click again");
    expect(bodies).toEqual([]);
    button.click();
    await settle();
    expect(bodies).toEqual([{ type: "chat:auth", op: "logout" }]);
    apply(auth("signed_out"));
    expect(button.hidden).toBe(true);
    expect(view.el.querySelector(".acpnb-signin")?.textContent).toContain("Signed out of demo");
  });
});
