// The prompts the lab extension sends for the user: a failed cell with its error, or the
// selected cells. Pure text in, text out; bounded, so a huge output never becomes a huge prompt.

import type { Translate } from "../i18n";

/** Per cell source, and for the traceback: enough to explain an error, far below MAX_PROMPT. */
export const MAX_SOURCE = 20_000;
export const MAX_TRACEBACK = 12_000;
/** Cells of one "ask about the selected cells". */
export const MAX_CELLS = 20;

// CSI sequences (colours, cursor moves) as IPython writes them into tracebacks.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching the ESC byte is the point
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b[@-Z\\-_]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

/** `text` cut to `max` characters: the start is kept, or the end (`keep: "end"`). */
export function bound(
  text: string,
  max: number,
  t: Translate,
  keep: "start" | "end" = "start",
): string {
  if (text.length <= max) return text;
  const marker = t("cut", { count: text.length - max });
  return keep === "start" ? `${text.slice(0, max)}\n${marker}` : `${marker}\n${text.slice(-max)}`;
}

/** A Markdown fence around `text`, longer than any run of backticks inside it. */
export function fence(text: string, language = ""): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const ticks = "`".repeat(Math.max(3, longest + 1));
  return `${ticks}${language}\n${text}\n${ticks}`;
}

/** The prompt for "Ask the agent" on a failed cell: its source and its traceback. */
export function errorPrompt(
  t: Translate,
  source: string,
  traceback: string,
  language: string,
): string {
  // The end of a traceback names the exception: keep that end when it is cut.
  const error = bound(stripAnsi(traceback), MAX_TRACEBACK, t, "end");
  return [
    t("errorIntro"),
    fence(bound(source, MAX_SOURCE, t), language),
    t("tracebackLabel"),
    fence(error),
  ].join("\n\n");
}

/** The prompt for "Ask the agent about the selected cells". */
export function cellsPrompt(t: Translate, sources: readonly string[], language: string): string {
  const blocks = sources.slice(0, MAX_CELLS).map((s) => fence(bound(s, MAX_SOURCE, t), language));
  return [t("cellsIntro"), ...blocks].join("\n\n");
}
