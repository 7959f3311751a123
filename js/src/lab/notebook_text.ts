// A notebook as the text its save writes, for an agent's read of an open notebook
// (fs/read_text_file): what nbformat's JSON writer (which the server saves a notebook with)
// makes of the model's toJSON. Multi-line text is split into lines as nbformat splits it,
// the transient fields are left out, keys are sorted, the indent is one space, and the text
// ends with a newline.

import { isRecord } from "../dom";

type Json = Record<string, unknown>;

/** Where Python's str.splitlines breaks a line ("\r\n" is one break). */
const BREAKS = new Set([
  "\n",
  "\r",
  "\v",
  "\f",
  "\x1c",
  "\x1d",
  "\x1e",
  "\x85",
  "\u2028",
  "\u2029",
]);
/** Mime types nbformat splits into lines besides text/*. */
const SPLIT_MIMES = new Set(["application/javascript", "image/svg+xml"]);
/** The notebook's metadata a file never holds (nbformat's strip_transient). */
const TRANSIENT = ["orig_nbformat", "orig_nbformat_minor", "signature"];

/** Python's `text.splitlines(keepends=True)`. */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charAt(i);
    if (!BREAKS.has(c)) continue;
    if (c === "\r" && text.charAt(i + 1) === "\n") i += 1;
    lines.push(text.slice(start, i + 1));
    start = i + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

function without(record: unknown, keys: readonly string[]): unknown {
  if (!isRecord(record)) return record;
  return Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key)));
}

function splitBundle(bundle: unknown): unknown {
  if (!isRecord(bundle)) return bundle;
  return Object.fromEntries(
    Object.entries(bundle).map(([mime, value]) => [
      mime,
      typeof value === "string" && (mime.startsWith("text/") || SPLIT_MIMES.has(mime))
        ? splitLines(value)
        : value,
    ]),
  );
}

function splitOutput(output: unknown): unknown {
  if (!isRecord(output)) return output;
  const type = output.output_type;
  if (type === "execute_result" || type === "display_data") {
    return "data" in output ? { ...output, data: splitBundle(output.data) } : output;
  }
  if (type === "stream" && typeof output.text === "string") {
    return { ...output, text: splitLines(output.text) };
  }
  return output;
}

function cellForFile(cell: unknown): unknown {
  if (!isRecord(cell)) return cell;
  const out: Json = { ...cell, metadata: without(cell.metadata, ["trusted"]) };
  if (typeof cell.source === "string") out.source = splitLines(cell.source);
  if (isRecord(cell.attachments)) {
    const attachments = Object.entries(cell.attachments);
    out.attachments = Object.fromEntries(attachments.map(([k, v]) => [k, splitBundle(v)]));
  }
  if (cell.cell_type === "code" && Array.isArray(cell.outputs)) {
    out.outputs = cell.outputs.map(splitOutput);
  }
  return out;
}

/** JSON as Python's json.dumps(indent=1, sort_keys=True, ensure_ascii=False) writes it. */
function dumps(value: unknown, indent: string): string {
  const inner = `${indent} `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const items = value.map((item: unknown) => inner + dumps(item, inner));
    return `[\n${items.join(",\n")}\n${indent}]`;
  }
  if (isRecord(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined) // absent, as JSON.stringify leaves it
      .sort();
    if (keys.length === 0) return "{}";
    const items = keys.map((key) => `${inner}${JSON.stringify(key)}: ${dumps(value[key], inner)}`);
    return `{\n${items.join(",\n")}\n${indent}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The notebook's JSON (its shared model's toJSON) as the text of its saved file. */
export function notebookText(notebook: unknown): string {
  if (!isRecord(notebook)) return `${dumps(notebook, "")}\n`;
  const cells = Array.isArray(notebook.cells) ? notebook.cells.map(cellForFile) : notebook.cells;
  const file = { ...notebook, metadata: without(notebook.metadata, TRANSIENT), cells };
  return `${dumps(file, "")}\n`;
}
