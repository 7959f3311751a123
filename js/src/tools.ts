// Tool calls: title, kind, status badge, locations, content (diffs as unified diffs),
// raw output collapsed. Every agent string goes in as text.

import type { ToolCallView } from "./contracts";
import { unifiedDiff } from "./diff";
import { bdi, clip, codeTitle, el, isRecord, records, str } from "./dom";
import { hasKey, type StringKey, type Translate, tIsolated } from "./i18n";
import { BreakingText } from "./longtext";
import { actionTitle, codeBlock, notebookTool, renderOutput } from "./notebook";

const STATUS_KEYS: Record<string, StringKey> = {
  pending: "toolPending",
  in_progress: "toolInProgress",
  completed: "toolCompleted",
  failed: "toolFailed",
};

function blockText(block: unknown): string {
  if (!isRecord(block)) return "";
  if (block.type === "text") return str(block.text) ?? "";
  if (block.type === "resource_link") {
    return `[resource: ${str(block.name) ?? str(block.uri) ?? ""}]`;
  }
  if (block.type === "resource") {
    // An embedded resource in tool output is usually the output itself: show its text.
    const inner = isRecord(block.resource) ? block.resource : {};
    return str(inner.text) ?? `[resource: ${str(inner.uri) ?? ""}]`;
  }
  return `[${str(block.type) ?? "?"}]`;
}

/**
 * A diff with more lines than this (on either side), or more characters, is shown folded
 * and built when opened: a saved chat of 1,000 diffs of 999 lines held the page for 16 s.
 */
const EAGER_DIFF_LINES = 200;
const EAGER_DIFF_CHARS = 20_000;
/** An opened diff shows this many lines at most, each cut to MAX_DIFF_LINE characters. */
const MAX_DIFF_LINES = 2000;
const MAX_DIFF_LINE = 1000;

function lineCount(text: string): number {
  let lines = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
  return lines;
}

function renderDiff(item: Record<string, unknown>, t: Translate): HTMLElement {
  const box = el("div", "acpnb-diff");
  const oldText = str(item.oldText);
  const newText = str(item.newText) ?? "";
  const header = el("div", "acpnb-diff-path");
  header.append(bdi(clip(str(item.path) ?? "")));
  if (oldText === null) header.append(el("span", "acpnb-badge", t("newFile")));
  const lines = Math.max(lineCount(oldText ?? ""), lineCount(newText));
  const chars = (oldText?.length ?? 0) + newText.length;
  if (lines <= EAGER_DIFF_LINES && chars <= EAGER_DIFF_CHARS) {
    box.append(header, diffBody(oldText, newText, t));
    return box;
  }
  const fold = el("details", "acpnb-diff-fold");
  fold.append(el("summary", undefined, t("largeDiff", { lines: lines.toLocaleString() })));
  fold.addEventListener("toggle", () => {
    if (fold.open && fold.childElementCount === 1) fold.append(diffBody(oldText, newText, t));
  });
  box.append(header, fold);
  return box;
}

/**
 * `oldText` -> `newText` as a unified diff (`oldText` null: all added), its first
 * MAX_DIFF_LINES lines, each cut to MAX_DIFF_LINE characters.
 */
export function diffBody(oldText: string | null, newText: string, t: Translate): HTMLElement {
  const pre = el("pre", "acpnb-diff-body");
  const lines = unifiedDiff(oldText, newText);
  for (const line of lines.slice(0, MAX_DIFF_LINES)) {
    const prefix =
      line.op === "add" ? "+" : line.op === "del" ? "-" : line.op === "hunk" ? "" : " ";
    const text = clip(line.text, MAX_DIFF_LINE);
    pre.append(el("span", `acpnb-diff-${line.op}`, `${prefix}${text}\n`));
  }
  if (lines.length > MAX_DIFF_LINES) {
    const more = (lines.length - MAX_DIFF_LINES).toLocaleString();
    pre.append(el("span", "acpnb-diff-hunk", `${t("moreDiffLines", { lines: more })}\n`));
  }
  return pre;
}

/** The content list of a tool call (text, diffs, terminals) as DOM. */
export function renderToolContent(content: unknown, t: Translate): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const item of records(content)) {
    if (item.type === "diff") fragment.append(renderDiff(item, t));
    else if (item.type === "terminal") {
      const line = el("div", "acpnb-tool-text");
      line.append(tIsolated(t, "terminal", { id: str(item.terminalId) ?? "" }));
      fragment.append(line);
    } else {
      const text = el("pre", "acpnb-tool-text");
      // In sections: a long output is laid out a section at a time (see SECTION).
      new BreakingText(text).extend(blockText(item.content));
      fragment.append(text);
    }
  }
  return fragment;
}

function statusHead(call: ToolCallView, t: Translate): HTMLElement {
  const status = call.status ?? "pending";
  const statusKey = STATUS_KEYS[status];
  const head = el("div", "acpnb-tool-head");
  head.append(
    bdi(
      statusKey === undefined ? status : t(statusKey),
      `acpnb-badge acpnb-status-${statusKey === undefined ? "other" : status}`,
    ),
  );
  return head;
}

/** A call of the chat's notebook tools: the action, its code as Python, its output. */
function renderNotebookAction(
  box: HTMLElement,
  call: ToolCallView,
  tool: string,
  t: Translate,
): void {
  const head = statusHead(call, t);
  head.append(
    el("span", "acpnb-tool-kind", t("nbAction")),
    bdi(actionTitle(tool, call.rawInput, t, call.status), "acpnb-tool-title"),
  );
  const parts: HTMLElement[] = [head];
  const body = el("div", "acpnb-tool-body acpnb-nb-body");
  const code = tool === "run_code" ? codeBlock(call.rawInput) : null;
  if (code !== null) body.append(code);
  body.append(renderOutput(call.content));
  if (body.childElementCount > 0) parts.push(body);
  box.replaceChildren(...parts);
}

/** Output of one line up to this long is shown as it is: a fold would hide no more. */
const SHORT_OUTPUT = 120;

/**
 * A tool's text output goes in a fold, closed (`open`: as the user left it before this
 * render), its summary counting its lines: a transcript is read by its steps, and a
 * file read or a listing in full pushes them apart. Diffs stay shown: they are the change.
 */
function foldOutput(body: HTMLElement, open: boolean, t: Translate): void {
  const texts = [...body.querySelectorAll<HTMLElement>(":scope > .acpnb-tool-text")];
  const text = texts
    .map((node) => node.textContent ?? "")
    .join("\n")
    .replace(/\n$/, "");
  if (texts.length === 0 || (!text.includes("\n") && text.length <= SHORT_OUTPUT)) return;
  const fold = el("details", "acpnb-tool-output");
  fold.open = open;
  const lines = lineCount(text);
  const summary =
    lines === 1 ? t("toolOutputLine") : t("toolOutput", { lines: lines.toLocaleString() });
  fold.append(el("summary", undefined, summary));
  texts[0]?.before(fold);
  fold.append(...texts);
}

function notTerminal(block: Record<string, unknown>): boolean {
  return block.type !== "terminal";
}

/** Fills `box` with the tool call (replacing what was there). */
export function renderToolCall(box: HTMLElement, call: ToolCallView, t: Translate): void {
  const tool = notebookTool(call.title);
  if (tool !== null) {
    renderNotebookAction(box, call, tool, t);
    return;
  }
  const head = statusHead(call, t);
  if (call.kind !== null) {
    const key = `kind_${call.kind}`;
    head.append(bdi(hasKey(key) ? t(key) : call.kind, "acpnb-tool-kind"));
  }
  head.append(codeTitle(clip(call.title ?? call.toolCallId), "acpnb-tool-title"));
  const parts: HTMLElement[] = [head];
  if (call.locations.length > 0) {
    const list = el("ul", "acpnb-tool-locations");
    for (const loc of call.locations) {
      const line = typeof loc.line === "number" ? `:${loc.line}` : "";
      const entry = el("li");
      entry.append(bdi(clip(str(loc.path) ?? "")), line);
      list.append(entry);
    }
    parts.push(list);
  }
  const body = el("div", "acpnb-tool-body");
  // A terminal with its output is shown by the card's TerminalPane (terminal.ts).
  const shown = call.terminal === undefined ? call.content : call.content.filter(notTerminal);
  body.append(renderToolContent(shown, t));
  const open = box.querySelector<HTMLDetailsElement>(".acpnb-tool-output")?.open ?? false;
  foldOutput(body, open, t);
  if (body.childElementCount > 0) parts.push(body);
  if (call.rawOutput !== undefined && call.rawOutput !== null) {
    const raw = el("details", "acpnb-raw");
    const text =
      typeof call.rawOutput === "string" ? call.rawOutput : JSON.stringify(call.rawOutput, null, 2);
    raw.append(el("summary", undefined, t("rawOutput")), el("pre", undefined, text));
    parts.push(raw);
  }
  box.replaceChildren(...parts);
}
