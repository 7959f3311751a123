// Tool calls: title, kind, status badge, locations, content (diffs as unified diffs),
// raw output collapsed. Every agent string goes in as text.

import type { ToolCallView } from "./contracts";
import { unifiedDiff } from "./diff";
import { bdi, clip, el, isRecord, records, str } from "./dom";
import { hasKey, type StringKey, type Translate, tIsolated } from "./i18n";
import { breakable } from "./longtext";
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

function renderDiff(item: Record<string, unknown>, t: Translate): HTMLElement {
  const box = el("div", "acpnb-diff");
  const oldText = str(item.oldText);
  const header = el("div", "acpnb-diff-path");
  header.append(bdi(str(item.path) ?? ""));
  if (oldText === null) header.append(el("span", "acpnb-badge", t("newFile")));
  box.append(header, diffBody(oldText, str(item.newText) ?? ""));
  return box;
}

/** `oldText` -> `newText` as a unified diff (`oldText` null: all added). */
export function diffBody(oldText: string | null, newText: string): HTMLElement {
  const pre = el("pre", "acpnb-diff-body");
  for (const line of unifiedDiff(oldText, newText)) {
    const prefix =
      line.op === "add" ? "+" : line.op === "del" ? "-" : line.op === "hunk" ? "" : " ";
    pre.append(el("span", `acpnb-diff-${line.op}`, `${prefix}${line.text}\n`));
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
      text.append(breakable(blockText(item.content)));
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
    bdi(actionTitle(tool, call.rawInput, t), "acpnb-tool-title"),
  );
  const parts: HTMLElement[] = [head];
  const body = el("div", "acpnb-tool-body acpnb-nb-body");
  const code = tool === "run_code" ? codeBlock(call.rawInput) : null;
  if (code !== null) body.append(code);
  body.append(renderOutput(call.content));
  if (body.childElementCount > 0) parts.push(body);
  box.replaceChildren(...parts);
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
  head.append(bdi(clip(call.title ?? call.toolCallId), "acpnb-tool-title"));
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
  body.append(renderToolContent(call.content, t));
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
