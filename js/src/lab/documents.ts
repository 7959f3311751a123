// The agent's edits in the open notebook (no real-time collaboration): one socket per page
// to the server (acp-notebook/ws/pages) reports the notebooks this page holds open and which
// one the user is in; the server asks for a notebook's cells, applies an edit to its model, runs
// a cell as the user would, reads the active cell, or reads the whole notebook as the text its
// save would write (an agent's fs/read_text_file of it). An edit is one undo step where the user's
// own would be: an insert, delete or move in the notebook's history (`z` in command mode), a
// new source in the cell's (Ctrl+Z in its editor). The file on disk is not touched, so no "file
// changed on disk" dialog. The protocol's other half is notebook_tools/page_document.py.
// The same socket reports the text files open in the page's editors: the agent reads them with
// their unsaved changes (fs/read_text_file), and its reviewed writes land in the editor's
// model as one undo step (fs/write_text_file), after the same `before` check.

import {
  type CellEdit,
  MAX_EDIT_SOURCE,
  MAX_PAGE_ERROR,
  MAX_PAGE_FRAME,
  MAX_PAGE_NOTEBOOKS,
  MAX_SELECTION,
  type PageNotebook,
  type PageReply,
  type PageRequest,
} from "../contracts";
import { isRecord } from "../dom";

/** The part of a notebook cell's shared model an edit uses (@jupyter/ydoc's ISharedCell). */
export interface SharedCellLike {
  readonly id: string;
  readonly cell_type: string;
  getSource(): string;
  setSource(source: string): void;
  toJSON(): unknown;
}

/** The part of a notebook's shared model an edit uses (@jupyter/ydoc's ISharedNotebook). */
export interface SharedNotebookLike {
  readonly cells: readonly SharedCellLike[];
  insertCell(
    index: number,
    cell: { cell_type: CellEdit["cellType"]; source: string; id: string },
  ): unknown;
  deleteCell(index: number): void;
  moveCell(fromIndex: number, toIndex: number): void;
  transact(f: () => void): void;
  /** The whole notebook as nbformat JSON, unsaved cells included. */
  toJSON(): unknown;
}

export interface RunResult {
  outputs: unknown[];
  executionCount: number | null;
  timedOut: boolean;
}

export interface ActiveResult {
  cellId: string;
  index: number;
  selection: string;
}

/** One notebook this page holds open, as the socket needs it (lab.ts adapts a NotebookPanel). */
export interface OpenNotebook {
  path: string;
  kernelId: string | null;
  model: SharedNotebookLike;
  /** Runs the cell as the user would (its outputs land in the notebook). */
  run(cellId: string, timeoutMs: number): Promise<RunResult>;
  active(): ActiveResult | null;
  /** Shows the "agent" mark on the cell until its source is no longer `source`. */
  mark(cellId: string, source: string): void;
}

/** The part of a text file's shared model a read and a write use (@jupyter/ydoc's YFile). */
export interface SharedFileLike {
  getSource(): string;
  setSource(source: string): void;
}

/** One text file open in an editor of this page (open_files.ts adapts a document widget). */
export interface OpenFile {
  path: string;
  model: SharedFileLike;
}

/** The page's notebooks, and who to tell when they or the user's notebook change. */
export interface PageHost {
  notebooks(): OpenNotebook[];
  /** The text files open in editors; a host without it reports none. */
  files?(): OpenFile[];
  /** `changed`: the open notebooks changed; `focused`: the user is in `path` now. */
  watch(changed: () => void, focused: (path: string) => void): void;
}

/** An edit not made, with the cell's current source when it changed since it was read. */
export class Refused extends Error {
  constructor(
    message: string,
    readonly source?: string,
  ) {
    super(message);
  }
}

export interface Applied {
  cellId: string;
  index: number;
}

/** Bytes of one output's JSON a `cells` answer carries; a larger one is replaced by a note. */
export const MAX_OUTPUT_JSON = 1024 * 1024;
/** Focus reports at most this often (the server only ranks pages by it). */
const FOCUS_EVERY_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

/** An nbformat cell id (randomUUID needs a secure context; a page on plain http has none). */
function newCellId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function cellAt(model: SharedNotebookLike, edit: CellEdit): [SharedCellLike, number] {
  const byId = edit.cellId ?? null;
  const index = byId === null ? edit.index : model.cells.findIndex((c) => c.id === byId);
  const cell = model.cells[index];
  if (cell === undefined) {
    throw new Refused(byId === null ? `no cell at index ${edit.index}` : `no cell ${byId}`);
  }
  if (cell.getSource() !== edit.before) {
    const source = cell.getSource().slice(0, MAX_EDIT_SOURCE);
    throw new Refused("the cell changed since it was read (the user's edit is kept)", source);
  }
  return [cell, index];
}

/**
 * Makes `edit` in the notebook's model in one undoable step, after checking that the live
 * cell holds `edit.before`; where the cell is now (a delete: where it was).
 */
export function applyEdit(
  model: SharedNotebookLike,
  edit: CellEdit,
  newId: () => string = newCellId,
): Applied {
  const count = model.cells.length;
  if (edit.op === "insert") {
    if (edit.index < 0 || edit.index > count) throw new Refused(`no index ${edit.index}`);
    const id = newId();
    const cell = { cell_type: edit.cellType, source: edit.after, id };
    model.transact(() => model.insertCell(edit.index, cell));
    return { cellId: id, index: edit.index };
  }
  const [cell, index] = cellAt(model, edit);
  if (edit.op === "edit") {
    // The cell's own transaction: its editor's Ctrl+Z undoes it, as the user's typing.
    cell.setSource(edit.after);
    return { cellId: cell.id, index };
  }
  if (edit.op === "delete") {
    model.transact(() => model.deleteCell(index));
    return { cellId: cell.id, index };
  }
  const to = edit.toIndex ?? -1;
  if (to < 0 || to >= count) throw new Refused(`no index ${to} to move the cell to`);
  model.transact(() => model.moveCell(index, to));
  return { cellId: cell.id, index: to };
}

/** The notebook's cells as nbformat JSON, each output larger than MAX_OUTPUT_JSON replaced. */
export function cellsOf(model: SharedNotebookLike): unknown[] {
  return model.cells.map((cell) => {
    const json = cell.toJSON();
    if (!isRecord(json) || !Array.isArray(json.outputs)) return json;
    const outputs = json.outputs.map((output: unknown) => {
      const size = JSON.stringify(output).length;
      if (size <= MAX_OUTPUT_JSON) return output;
      const text = `[an output of ${size} bytes, too large to send]`;
      return { output_type: "stream", name: "stdout", text };
    });
    return { ...json, outputs };
  });
}

async function answer(notebook: OpenNotebook, request: PageRequest): Promise<unknown> {
  switch (request.op) {
    case "cells":
      return cellsOf(notebook.model);
    case "notebook":
      return { notebook: notebook.model.toJSON() }; // the server writes it as nbformat
    case "apply": {
      if (!request.edit) throw new Refused("no edit in the request");
      const applied = applyEdit(notebook.model, request.edit);
      if (request.edit.op !== "delete") notebook.mark(applied.cellId, request.edit.after);
      return applied;
    }
    case "run": {
      if (!request.cellId) throw new Refused("no cell in the request");
      return notebook.run(request.cellId, (request.timeout ?? 30) * 1000);
    }
    case "active": {
      const active = notebook.active();
      return active && { ...active, selection: active.selection.slice(0, MAX_SELECTION) };
    }
    default:
      throw new Refused(`no ${request.op} on a notebook`);
  }
}

/** The one of `open` at `path`, or the refusal that says the page no longer holds it. */
function held<T extends { path: string }>(open: T[], path: string): T {
  const found = open.find((n) => n.path === path);
  if (found === undefined) throw new Refused(`this page no longer holds ${path}`);
  return found;
}

/** A request on a text file open in an editor: its text, or a write over `before`. */
function answerFile(file: OpenFile, request: PageRequest): unknown {
  if (request.op === "text") return { text: file.model.getSource() };
  if (typeof request.text !== "string") throw new Refused("no text in the request");
  if (file.model.getSource() !== request.before) {
    throw new Refused("the file changed in its editor since it was read (the user's edit is kept)");
  }
  // One transaction of the shared model: the editor's Ctrl+Z undoes it, as the user's typing.
  file.model.setSource(request.text);
  return null;
}

/** The notebooks as reported: one per path (two views of one notebook share its model). */
function reported(notebooks: OpenNotebook[]): PageNotebook[] {
  const seen = new Map<string, PageNotebook>();
  for (const n of notebooks) {
    if (!seen.has(n.path)) seen.set(n.path, { path: n.path, kernelId: n.kernelId });
  }
  return [...seen.values()].slice(0, MAX_PAGE_NOTEBOOKS);
}

/** The page's socket: reports, answers requests, reconnects with backoff. */
export class PageDocuments {
  private socket: WebSocket | null = null;
  private attempts = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastReport = "";
  private lastFocus = 0;
  private disposed = false;

  constructor(
    private readonly url: string,
    private readonly host: PageHost,
    private readonly WS: typeof WebSocket = globalThis.WebSocket,
  ) {
    host.watch(
      () => this.report(false),
      (path) => this.focus(path),
    );
  }

  start(): void {
    const socket = new this.WS(this.url);
    this.socket = socket;
    socket.onopen = () => {
      this.attempts = 0;
      this.report(true);
    };
    socket.onmessage = (event: MessageEvent) => {
      if (typeof event.data !== "string") return;
      let frame: unknown;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return; // not ours: the server sends only JSON
      }
      if (isRecord(frame) && frame.type === "page:request")
        void this.handle(frame as unknown as PageRequest);
    };
    socket.onclose = () => {
      if (this.socket !== socket || this.disposed) return;
      this.socket = null;
      const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** this.attempts);
      this.attempts += 1;
      this.timer = setTimeout(() => this.start(), delay);
    };
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
    const socket = this.socket;
    this.socket = null;
    if (socket !== null) {
      socket.onopen = socket.onmessage = socket.onclose = null;
      socket.close();
    }
  }

  private send(frame: object): void {
    const socket = this.socket;
    if (socket !== null && socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
  }

  /** Tells the server the open notebooks when they differ from the last report (or `always`). */
  private report(always: boolean): void {
    const notebooks = reported(this.host.notebooks());
    const files =
      this.host.files &&
      [...new Set(this.host.files().map((f) => f.path))].slice(0, MAX_PAGE_NOTEBOOKS);
    const frame = { type: "page:notebooks", notebooks, ...(files && { files }) };
    const text = JSON.stringify(frame);
    if (!always && text === this.lastReport) return;
    this.lastReport = text;
    this.send(frame);
  }

  private focus(path: string): void {
    const now = Date.now();
    if (now - this.lastFocus < FOCUS_EVERY_MS) return;
    this.lastFocus = now;
    this.send({ type: "page:focus", path });
  }

  private async handle(request: PageRequest): Promise<void> {
    let reply: PageReply;
    try {
      const result =
        request.op === "text" || request.op === "write"
          ? answerFile(held(this.host.files?.() ?? [], request.path), request)
          : await answer(held(this.host.notebooks(), request.path), request);
      reply = { type: "page:reply", id: request.id, result };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      reply = { type: "page:reply", id: request.id, error: message.slice(0, MAX_PAGE_ERROR) };
      if (error instanceof Refused && error.source !== undefined) reply.source = error.source;
    }
    const text = JSON.stringify(reply);
    // Over the server's frame limit the socket would be dropped: say so instead.
    const tooLarge = new TextEncoder().encode(text).length > MAX_PAGE_FRAME;
    const error = `the answer is over ${MAX_PAGE_FRAME} bytes`;
    this.send(tooLarge ? { type: "page:reply", id: request.id, error } : reply);
  }
}
