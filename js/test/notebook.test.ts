// @vitest-environment jsdom
// Calls of the notebook tools render as notebook actions, in the transcript and in the
// permission card: words for the action, the code as Python, the output unfenced.
import { describe, expect, it } from "vitest";
import { type CardContext, PermissionCard } from "../src/cards";
import type { ToolCallView } from "../src/contracts";
import { translator } from "../src/i18n";
import { notebookTool } from "../src/notebook";
import { renderToolCall } from "../src/tools";
import { recorder } from "./helpers";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function call(extra: Partial<ToolCallView>): ToolCallView {
  return {
    toolCallId: "t1",
    title: null,
    kind: "other",
    status: "completed",
    content: [],
    locations: [],
    rawInput: {},
    rawOutput: null,
    ...extra,
  };
}

function render(view: ToolCallView, locale: "en" | "zh" = "en"): HTMLElement {
  const box = document.createElement("div");
  renderToolCall(box, view, translator(locale));
  return box;
}

describe("notebook actions", () => {
  it("knows claude's names and the bare ones, and nothing else", () => {
    expect(notebookTool("mcp__notebook__run_code")).toBe("run_code");
    expect(notebookTool("list_variables")).toBe("list_variables");
    expect(notebookTool("mcp__picker__run_code")).toBeNull();
    expect(notebookTool("mcp__notebook__toString")).toBeNull();
    expect(notebookTool("constructor")).toBeNull();
    expect(notebookTool(null)).toBeNull();
  });

  it("shows run_code as the code in Python and its output, not raw JSON", () => {
    const box = render(
      call({
        title: "mcp__notebook__run_code",
        rawInput: { code: "total = df.revenue.sum()\nprint(total)" },
        content: [
          { type: "content", content: { type: "text", text: "```\n[stdout]\n361.75\n```" } },
          { type: "content", content: { type: "image", mimeType: "image/png", data: PNG } },
        ],
        rawOutput: { result: "ignored" },
      }),
    );
    expect(box.querySelector(".acpnb-tool-title")?.textContent).toBe("Ran code");
    expect(box.querySelector(".acpnb-tool-kind")?.textContent).toBe("notebook");
    const code = box.querySelector("pre.acpnb-nb-code code.language-python");
    expect(code?.textContent).toBe("total = df.revenue.sum()\nprint(total)");
    expect(box.querySelector(".acpnb-nb-output")?.textContent).toBe("[stdout]\n361.75");
    expect(box.querySelector("img")?.getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
    expect(box.querySelector(".acpnb-raw")).toBeNull();
    expect(box.textContent).not.toContain("ignored");
  });

  it.each([
    ["pending", "Run code"],
    ["in_progress", "Running code"],
    ["completed", "Ran code"],
    ["failed", "Ran code"],
    [null, "Run code"],
  ] as const)("titles run_code by its status (%s: %s)", (status, title) => {
    const box = render(call({ title: "mcp__notebook__run_code", status, rawInput: { code: "1" } }));
    expect(box.querySelector(".acpnb-tool-title")?.textContent).toBe(title);
  });

  it("names the other actions, in the widget's language", () => {
    const read = render(call({ title: "list_variables", content: [] }));
    expect(read.querySelector(".acpnb-tool-title")?.textContent).toBe("Read variables");
    const inspect = render(
      call({ title: "mcp__notebook__inspect_variable", rawInput: { name: "sales" } }),
      "zh",
    );
    expect(inspect.querySelector(".acpnb-tool-title")?.textContent).toBe("查看了 sales");
  });

  it("shows no hostile image and no markup from the agent", () => {
    const box = render(
      call({
        title: "mcp__notebook__run_code",
        rawInput: { code: '<img src=x onerror="alert(1)">' },
        content: [
          { type: "image", mimeType: "text/html", data: PNG },
          { type: "image", mimeType: "image/png", data: "javascript:alert(1)" },
        ],
      }),
    );
    expect(box.querySelector("img")).toBeNull();
    expect(box.querySelector("code")?.textContent).toBe('<img src=x onerror="alert(1)">');
  });

  it("asks for run_code with the code shown as Python", () => {
    const rec = recorder();
    const ctx: CardContext = {
      t: translator("en"),
      agentName: () => "Claude",
      toolTitle: () => null,
      answerer: (by) => by,
      request: rec.request,
    };
    const card = new PermissionCard(
      {
        requestId: "p1",
        toolCall: {
          toolCallId: "t1",
          title: "mcp__notebook__run_code",
          rawInput: { code: "df.head()" },
        },
        options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
        deadline: null,
        outcome: null,
        by: null,
        optionId: null,
      },
      ctx,
    );
    expect(card.el.querySelector(".acpnb-card-title")?.textContent).toBe("Run code in the kernel");
    expect(card.el.querySelector("code.language-python")?.textContent).toBe("df.head()");
  });
});
