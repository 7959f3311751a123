// A small line diff for tool-call diffs (oldText/newText), shown as a unified diff.

export type DiffLine = { op: "hunk" | "context" | "add" | "del"; text: string };

type Op = { op: "context" | "add" | "del"; text: string };

/** Above this many LCS cells the middle is shown as a plain delete + add (bounded cost). */
const MAX_CELLS = 1_000_000;
const CONTEXT = 3;

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

// Longest common subsequence over the lines that differ (common ends trimmed first).
function middleOps(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0 || n * m > MAX_CELLS) {
    return [
      ...a.map((text): Op => ({ op: "del", text })),
      ...b.map((text): Op => ({ op: "add", text })),
    ];
  }
  // lcs(i, j) = LCS length of a[i:] and b[j:], in a flat (n+1) x (m+1) table.
  const width = m + 1;
  const table = new Uint32Array((n + 1) * width);
  const lcs = (i: number, j: number): number => table[i * width + j] ?? 0;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * width + j] =
        a[i] === b[j] ? lcs(i + 1, j + 1) + 1 : Math.max(lcs(i + 1, j), lcs(i, j + 1));
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    const x = a[i];
    const y = b[j];
    if (x !== undefined && x === y) {
      ops.push({ op: "context", text: x });
      i++;
      j++;
    } else if (x !== undefined && (y === undefined || lcs(i + 1, j) >= lcs(i, j + 1))) {
      ops.push({ op: "del", text: x });
      i++;
    } else {
      ops.push({ op: "add", text: y ?? "" });
      j++;
    }
  }
  return ops;
}

function lineOps(a: string[], b: string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  return [
    ...a.slice(0, start).map((text): Op => ({ op: "context", text })),
    ...middleOps(a.slice(start, endA), b.slice(start, endB)),
    ...a.slice(endA).map((text): Op => ({ op: "context", text })),
  ];
}

/**
 * Unified diff lines of `oldText` -> `newText` with three lines of context.
 * `oldText` null means a new file: every line is an addition.
 */
export function unifiedDiff(oldText: string | null, newText: string): DiffLine[] {
  const ops = lineOps(splitLines(oldText ?? ""), splitLines(newText));
  // Mark the ops within CONTEXT lines of a change; the rest are elided between hunks.
  const keep = new Uint8Array(ops.length);
  ops.forEach((o, k) => {
    if (o.op === "context") return;
    for (let d = Math.max(0, k - CONTEXT); d <= Math.min(ops.length - 1, k + CONTEXT); d++) {
      keep[d] = 1;
    }
  });
  const out: DiffLine[] = [];
  let oldLine = 1;
  let newLine = 1;
  let k = 0;
  while (k < ops.length) {
    if (keep[k] === 0) {
      oldLine++;
      newLine++;
      k++;
      continue;
    }
    let end = k;
    while (end < ops.length && keep[end] === 1) end++;
    const hunk = ops.slice(k, end);
    const oldLen = hunk.filter((o) => o.op !== "add").length;
    const newLen = hunk.filter((o) => o.op !== "del").length;
    const oldStart = oldLen === 0 ? oldLine - 1 : oldLine;
    const newStart = newLen === 0 ? newLine - 1 : newLine;
    out.push({ op: "hunk", text: `@@ -${oldStart},${oldLen} +${newStart},${newLen} @@` });
    for (const o of hunk) out.push(o);
    oldLine += oldLen;
    newLine += newLen;
    k = end;
  }
  return out;
}
