// @vitest-environment jsdom
// The saved chat: its transcript without a kernel, and Continue.
import { describe, expect, it } from "vitest";
import type { StreamEvent } from "../src/contracts";
import { fold, initialState, snapshot } from "../src/fold";
import { translator } from "../src/i18n";
import {
  type OpenChatBody,
  readSavedChat,
  renderSavedChat,
  type SavedChatDeps,
  showUnreadable,
} from "../src/saved";

const events = [
  {
    kind: "agent_status",
    seq: 1,
    status: "ready",
    agent: "claude-code",
    sessionId: "s-1",
    agentCapabilities: { loadSession: true },
  },
  { kind: "turn_started", seq: 2, turn: 1, prompt: "remember 42" },
  {
    kind: "update",
    seq: 3,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Noted." } },
  },
  { kind: "turn_ended", seq: 4, turn: 1, stopReason: "end_turn" },
  { kind: "turn_started", seq: 5, turn: 2, prompt: "ask me" },
  { kind: "elicitation_request", seq: 6, requestId: "r1", message: "Pick one", fields: [] },
] as StreamEvent[];

function saved(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  let state = initialState();
  for (const event of events) state = fold(state, event);
  return {
    version: 1,
    chatId: "c1",
    kernelId: "k-old",
    agent: "claude-code",
    cwd: "/home/me/project",
    mode: "default",
    sessionId: "s-1",
    canLoad: true,
    snapshot: snapshot(state),
    ...overrides,
  };
}

/** No test here may open a chat: Continue is not clicked. */
async function noChat(): Promise<string> {
  throw new Error("no chat is opened here");
}

/** The deps of a saved chat that ended, with `overrides`. */
function deps(overrides: Partial<SavedChatDeps> = {}): SavedChatDeps {
  return {
    t: translator("en"),
    kernelId: () => null,
    showLive: () => {},
    openChat: noChat,
    confirm: null,
    copyNote: null,
    ...overrides,
  };
}

function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

describe("renderSavedChat", () => {
  it("paints the transcript read-only and shows the open question as cancelled", () => {
    const host = document.createElement("div");
    renderSavedChat(host, saved(), deps());
    expect([...host.querySelectorAll(".acpnb-user")].map((e) => e.textContent?.trim())).toEqual([
      "remember 42",
      "ask me",
    ]);
    expect(host.querySelector(".acpnb-agent")?.textContent).toContain("Noted.");
    expect(host.querySelector(".acpnb-card-elicitation")).toBeNull();
    expect(host.textContent).toContain("questions still open were cancelled");
    expect(host.querySelector(".acpnb-root")?.classList.contains("acpnb-saved")).toBe(true);
    expect(host.querySelector<HTMLTextAreaElement>("textarea")?.disabled).toBe(true);
  });

  it("as a copy, says what it shows, leaves the open question as saved and offers no Continue", () => {
    const host = document.createElement("div");
    renderSavedChat(host, saved(), deps({ copyNote: "waiting for the kernel…" }));
    expect(host.querySelector(".acpnb-status")?.textContent).toBe("waiting for the kernel…");
    expect(host.textContent).not.toContain("cancelled");
    expect(host.textContent).not.toContain("exited");
    const card = host.querySelector(".acpnb-card-elicitation");
    expect(card?.textContent).toContain("Pick one");
    expect(card?.hasAttribute("inert")).toBe(true);
    // Its chat may live on elsewhere: no Continue that would start its session twice.
    expect(host.querySelector(".acpnb-continue")).toBeNull();
    expect(host.querySelector<HTMLTextAreaElement>("textarea")?.disabled).toBe(true);
  });

  it("continues on the notebook's kernel, then hands the output to the live chat", async () => {
    const host = document.createElement("div");
    const bodies: OpenChatBody[] = [];
    const shown: string[] = [];
    let kernel: string | null = null;
    renderSavedChat(
      host,
      saved(),
      deps({
        kernelId: () => kernel,
        showLive: (target, kernelId, chatId) => {
          expect(target).toBe(host);
          shown.push(`${kernelId}/${chatId}`);
        },
        openChat: async (body) => {
          bodies.push(body);
          if (bodies.length === 1)
            throw new Error("agent claude-code is not allowed on this server");
          return "c-new";
        },
      }),
    );
    const button = host.querySelector<HTMLButtonElement>(".acpnb-continue-btn");
    expect(button?.textContent).toBe("Continue");
    button?.click();
    expect(host.textContent).toContain("start this notebook's kernel to continue");
    expect(bodies).toEqual([]);

    kernel = "k-new";
    button?.click();
    await tick();
    expect(bodies[0]).toEqual({
      kernel: "k-new",
      agent: "claude-code",
      cwd: "/home/me/project",
      loadSessionId: "s-1",
    });
    expect(host.textContent).toContain("not allowed on this server");
    expect(button?.disabled).toBe(false);
    button?.click();
    await tick();
    expect(shown).toEqual(["k-new/c-new"]);
  });

  it("offers no Continue to an agent that cannot load, and ignores what is not a saved chat", () => {
    const host = document.createElement("div");
    renderSavedChat(host, saved({ canLoad: false }), deps({ kernelId: () => "k" }));
    expect(host.querySelector(".acpnb-continue-btn")).toBeNull();
    expect(host.textContent).toContain("claude-code cannot continue an earlier session");
    expect(readSavedChat({ ...saved(), version: 2 })?.newer).toBe(true);
    expect(readSavedChat({ ...saved(), snapshot: null })).toBeNull();
    const huge = {
      ...(saved().snapshot as object),
      items: Array(5000).fill({ type: "user", text: "x" }),
    };
    // Only the last items of a file holding far more than we write.
    const read = readSavedChat({ ...saved(), snapshot: huge })?.snapshot as {
      items: unknown[];
      dropped: unknown;
    };
    expect(read.items).toHaveLength(1000);
    expect(read.dropped).toEqual({
      items: 4000,
      characters: 0,
    });
    expect(readSavedChat("<script>")).toBeNull();
    // canLoad without a session id cannot be honoured.
    expect(readSavedChat({ ...saved(), sessionId: null })?.canLoad).toBe(false);
    // What cannot be shown is left to the renderer's fallback (the output's text/html).
    const empty = document.createElement("div");
    const why: string[] = [];
    renderSavedChat(empty, { version: 1 }, deps({ fallback: (w) => why.push(w) }));
    expect(empty.childElementCount).toBe(0);
    expect(why).toEqual(["savedNoSnapshot"]);
  });
});

/** The snapshot of `saved()` with `changes`. */
function snap(changes: Record<string, unknown>): Record<string, unknown> {
  return { ...(saved().snapshot as Record<string, unknown>), ...changes };
}

const USER = { type: "user", text: "remember 42" };

/** Malformed and future saved chats, each with a text it must show. */
const SHAPES: [string, unknown, string][] = [
  ["not an object", "<script>", "its data is not a chat (10 B)"],
  ["null", null, "its data is not a chat"],
  ["an array", [saved()], "its data is not a chat"],
  ["version 2", saved({ version: 2 }), "saved by a newer version"],
  ["version 17", saved({ version: 17 }), "saved by a newer version"],
  [
    "version 2 with unknown items",
    saved({ version: 2, snapshot: snap({ items: [USER, { type: "video" }] }) }),
    "1 item could not be shown",
  ],
  ['version "1"', saved({ version: "1" }), "remember 42"],
  ['version "2"', saved({ version: "2" }), "saved by a newer version"],
  ["version 0", saved({ version: 0 }), "its format version is unknown"],
  ["version 1.5", saved({ version: 1.5 }), "its format version is unknown"],
  ['version "one"', saved({ version: "one" }), "its format version is unknown"],
  ["no version", saved({ version: undefined }), "its format version is unknown"],
  ["no snapshot", saved({ snapshot: undefined }), "it holds no transcript"],
  ["a null snapshot", saved({ snapshot: null }), "it holds no transcript"],
  ["items not a list", saved({ snapshot: snap({ items: {} }) }), "it holds no transcript"],
  [
    "one unknown item",
    saved({ snapshot: snap({ items: [USER, { type: "nonesuch" }] }) }),
    "1 item could not be shown",
  ],
  [
    "items not objects",
    saved({ snapshot: snap({ items: [USER, 7, null, "x"] }) }),
    "3 items could not be shown",
  ],
  [
    "a tool item without an id",
    saved({ snapshot: snap({ items: [USER, { type: "tool" }] }) }),
    "1 item could not be shown",
  ],
  [
    "a non-string text",
    saved({ snapshot: snap({ items: [{ type: "user", text: 42 }] }) }),
    "[number]",
  ],
  [
    "an agent text object",
    saved({ snapshot: snap({ items: [{ type: "agent", text: { a: 1 } }] }) }),
    "[object]",
  ],
  ["a non-string agent", saved({ agent: 42 }), "[number] cannot continue"],
  [
    "a non-string agent name",
    saved({ snapshot: snap({ agent: { status: "ready", name: ["x"] } }) }),
    "[array]",
  ],
  [
    "more than 1,000 items",
    saved({ snapshot: snap({ items: Array(1500).fill(USER) }) }),
    "500 earlier items",
  ],
  [
    "tables of the wrong type",
    saved({
      snapshot: snap({
        toolCalls: 7,
        permissions: [],
        elicitations: "x",
        turn: null,
        agent: null,
        seq: "9",
      }),
    }),
    "remember 42",
  ],
  [
    "a tool call of the wrong types",
    saved({
      snapshot: snap({
        items: [{ type: "tool", toolCallId: "tool-xyz" }],
        toolCalls: { "tool-xyz": { title: 42, content: "x", locations: 1, status: [] } },
      }),
    }),
    "tool-xyz",
  ],
  ["a 2 MB agent name", saved({ agent: "a".repeat(2_000_000) }), "aaaa…"],
];

describe("a malformed or future saved chat", () => {
  it.each(SHAPES)("shows something readable: %s", (_, data, text) => {
    const host = document.createElement("div");
    const t = translator("en");
    renderSavedChat(
      host,
      data,
      deps({ kernelId: () => "k", fallback: (why) => showUnreadable(host, data, why, t, null) }),
    );
    expect(host.textContent).toContain(text);
    expect(host.textContent?.length ?? 0).toBeLessThan(20_000);
  });

  it("shows the output's own transcript in place of what it cannot read", () => {
    const host = document.createElement("div");
    const html = document.createElement("div");
    html.textContent = "the static transcript";
    showUnreadable(host, { version: 9 }, "savedVersion", translator("en"), html);
    expect(host.textContent).toBe("the static transcript");
  });
});

describe("a saved session id", () => {
  it("is never sent when no agent could have given it, and the note says why", () => {
    const bad = ["", "a b", "s-1\n", "\u202es-1", "x".repeat(257), "é"];
    for (const sessionId of bad) {
      const data = readSavedChat(saved({ sessionId }));
      expect(data?.canLoad, JSON.stringify(sessionId)).toBe(false);
      expect(data?.sessionId).toBeNull();
      expect(data?.badSessionId).toBe(true);
    }
    expect(readSavedChat(saved({ sessionId: 42 }))?.canLoad).toBe(false);
    const uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
    expect(readSavedChat(saved({ sessionId: uuid }))?.canLoad).toBe(true);

    const host = document.createElement("div");
    const posted: OpenChatBody[] = [];
    renderSavedChat(
      host,
      saved({ sessionId: "x".repeat(10_000_000) }),
      deps({
        kernelId: () => "k",
        openChat: async (body) => {
          posted.push(body);
          return "c";
        },
      }),
    );
    // The transcript stays; no Continue, and the note says why.
    expect(host.querySelector(".acpnb-continue-btn")).toBeNull();
    expect(host.textContent).toContain("remember 42");
    expect(host.textContent).toContain("session id is not valid");
    expect(posted).toEqual([]);
  });
});
