// Calls of the chat's own `notebook` MCP tools, shown as notebook actions ("Read
// variables", "Ran code" with the code as Python and its output) instead of a tool
// name and raw JSON. Claude names them `mcp__notebook__<tool>`; other agents may use
// the bare tool name.

import { IMAGE_TYPES } from "./attach";
import { clip, el, isRecord, str } from "./dom";
import type { StringKey, Translate } from "./i18n";

const ACTIONS: Record<string, StringKey> = {
  list_variables: "nbListVariables",
  inspect_variable: "nbInspectVariable",
  read_cells: "nbReadCells",
  last_error: "nbLastError",
  run_code: "nbRunCode",
};
const MAX_IMAGE = 2 * 1024 * 1024; // base64 characters
const MAX_CODE = 20_000;

/** The notebook tool a tool call's title names (`mcp__notebook__run_code`, `run_code`), or null. */
export function notebookTool(title: string | null): string | null {
  if (title === null) return null;
  const name = title.startsWith("mcp__notebook__") ? title.slice("mcp__notebook__".length) : title;
  return Object.hasOwn(ACTIONS, name) ? name : null;
}

/** run_code's heading by the call's status: it has not run until it runs. */
const RUN_CODE: Record<string, StringKey> = {
  pending: "nbRunCodePending",
  in_progress: "nbRunCodeRunning",
};

/** The action's heading: "Ran code" ("Run code" while it waits), "Inspected sales". */
export function actionTitle(
  tool: string,
  rawInput: unknown,
  t: Translate,
  status: string | null = "completed",
): string {
  const key = (tool === "run_code" ? RUN_CODE[status ?? "pending"] : undefined) ?? ACTIONS[tool];
  const name = isRecord(rawInput) ? str(rawInput.name) : null;
  if (key === undefined) return tool;
  return t(key, { name: clip(name ?? "") });
}

/** The code a run_code call runs, shown as Python. */
export function codeBlock(rawInput: unknown): HTMLElement | null {
  const code = isRecord(rawInput) ? str(rawInput.code) : null;
  if (code === null) return null;
  const pre = el("pre", "acpnb-nb-code");
  const inner = el("code", "language-python", clip(code, MAX_CODE));
  pre.append(inner);
  return pre;
}

// Claude's wrapper puts a tool's text output in a Markdown code fence.
function unfenced(text: string): string {
  const match = /^```[\w-]*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return match?.[1] ?? text;
}

function image(block: Record<string, unknown>): HTMLElement | null {
  const mime = str(block.mimeType);
  const data = str(block.data);
  if (mime === null || data === null || !IMAGE_TYPES.has(mime) || data.length > MAX_IMAGE) {
    return null;
  }
  if (!/^[A-Za-z0-9+/=\s]*$/.test(data)) return null;
  const img = el("img", "acpnb-nb-image");
  img.src = `data:${mime};base64,${data.replace(/\s/g, "")}`;
  img.alt = "";
  return img;
}

/** A notebook tool's output: its text (unfenced) and images. */
export function renderOutput(content: readonly unknown[]): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const item of content) {
    if (!isRecord(item)) continue;
    const block = isRecord(item.content) ? item.content : item;
    if (block.type === "image") {
      const img = image(block);
      if (img !== null) fragment.append(img);
    } else if (block.type === "text") {
      const text = unfenced(str(block.text) ?? "");
      if (text !== "") fragment.append(el("pre", "acpnb-nb-output", clip(text, MAX_CODE)));
    }
  }
  return fragment;
}
