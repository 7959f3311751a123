// @vitest-environment jsdom
// Continue on an untrusted notebook's saved chat (issue 27): it asks once per click,
// says what will start, never sends the file's mode, and never an option- or path-like id.
import { describe, expect, it } from "vitest";
import { type ContinueWhat, continueQuestion } from "../src/continue_confirm";
import { initialState, snapshot } from "../src/fold";
import { translator } from "../src/i18n";
import { type OpenChatBody, readSavedChat, renderSavedChat } from "../src/saved";

const t = translator("en");

/** A downloaded notebook's saved chat: it asks for the bypass mode. */
const DOWNLOADED = { agent: "claude-code", cwd: "/home/me/project", mode: "bypassPermissions" };

function saved(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const chat = { version: 1, chatId: "c1", kernelId: "k-old", sessionId: "s-1", canLoad: true };
  return { ...chat, ...DOWNLOADED, snapshot: snapshot(initialState()), ...overrides };
}

function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** A saved chat whose Continue asks `answers` in turn; what was asked and posted. */
function untrusted(answers: boolean[]) {
  const host = document.createElement("div");
  const asked: ContinueWhat[] = [];
  const posted: OpenChatBody[] = [];
  renderSavedChat(host, saved(), {
    t,
    kernelId: () => "k",
    showLive: () => {},
    openChat: async (body) => {
      posted.push(body);
      return "c-new";
    },
    confirm: async (what) => {
      asked.push(what);
      return answers.shift() ?? false;
    },
    copyNote: null,
  });
  const button = host.querySelector<HTMLButtonElement>(".acpnb-continue-btn");
  if (button === null) throw new Error("no Continue");
  return { host, button, asked, posted };
}

describe("Continue on an untrusted notebook", () => {
  it("asks once per click, and a cancel starts nothing", async () => {
    const { host, button, asked, posted } = untrusted(Array(11).fill(false));
    for (let i = 0; i < 11; i++) {
      button.click();
      await tick();
    }
    expect(asked).toHaveLength(11);
    expect(asked[0]).toEqual({ agent: "claude-code", cwd: "/home/me/project", sessionId: "s-1" });
    expect(posted).toEqual([]);
    expect(host.textContent).toContain("not continued");
    expect(button.disabled).toBe(false);
  });

  it("continues once confirmed, in the agent's default mode (the file's mode is not sent)", async () => {
    const { button, asked, posted } = untrusted([true]);
    button.click();
    await tick();
    expect(asked).toHaveLength(1);
    expect(posted).toEqual([
      { kernel: "k", agent: "claude-code", cwd: "/home/me/project", loadSessionId: "s-1" },
    ]);
  });

  it("says what will start: the agent, the directory and the session", () => {
    const text = continueQuestion(t, { agent: "codex", cwd: null, sessionId: "s-9" }).textContent;
    expect(text).toContain("not trusted");
    expect(text).toContain("agent: codex");
    expect(text).toContain("directory: the notebook's directory");
    expect(text).toContain("session: s-9");
    expect(text).toContain("default mode");
  });
});

describe("a saved session id that looks like an option or a path", () => {
  it("is never offered to Continue, and the note says why", () => {
    for (const sessionId of ["--dangerously-skip-permissions", "../../../../etc/passwd", "a\\b"]) {
      const data = readSavedChat(saved({ sessionId }));
      expect(data?.canLoad, sessionId).toBe(false);
      expect(data?.badSessionId).toBe(true);
    }
    expect(readSavedChat(saved({ sessionId: "ses_4bd1.c9a" }))?.canLoad).toBe(true);
  });
});
