// The page's half of the agent's edits: an edit applied to a (fake) notebook model in one
// transaction after the `before` check, the cells and the active cell answered, the open
// notebooks reported, the socket reconnecting.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { CellEdit, PageRequest } from "../src/contracts";
import {
  type ActiveResult,
  applyEdit,
  cellsOf,
  MAX_OUTPUT_JSON,
  type OpenFile,
  type OpenNotebook,
  PageDocuments,
  Refused,
  type RunResult,
  type SharedCellLike,
  type SharedNotebookLike,
} from "../src/lab/documents";
import { FakeSocket, settle } from "./helpers";

class FakeCell implements SharedCellLike {
  constructor(
    readonly id: string,
    private source: string,
    readonly cell_type = "code",
    readonly outputs: unknown[] = [],
  ) {}
  getSource(): string {
    return this.source;
  }
  setSource(source: string): void {
    this.source = source;
  }
  toJSON(): unknown {
    return { id: this.id, cell_type: this.cell_type, source: this.source, outputs: this.outputs };
  }
}

/** A notebook model that counts its transactions and refuses changes outside one. */
class FakeNotebook implements SharedNotebookLike {
  cells: FakeCell[];
  transactions = 0;
  private inside = false;

  constructor(...sources: string[]) {
    this.cells = sources.map((source, i) => new FakeCell(`c${i}`, source));
  }
  private check(): void {
    if (!this.inside) throw new Error("changed outside a transaction (not one undo step)");
  }
  insertCell(index: number, cell: { cell_type: string; source: string; id: string }): unknown {
    this.check();
    this.cells.splice(index, 0, new FakeCell(cell.id, cell.source, cell.cell_type));
    return this.cells[index];
  }
  deleteCell(index: number): void {
    this.check();
    this.cells.splice(index, 1);
  }
  moveCell(from: number, to: number): void {
    this.check();
    const [cell] = this.cells.splice(from, 1);
    if (cell) this.cells.splice(to, 0, cell);
  }
  transact(f: () => void): void {
    this.transactions += 1;
    this.inside = true;
    try {
      f();
    } finally {
      this.inside = false;
    }
  }
  sources(): string[] {
    return this.cells.map((c) => c.getSource());
  }
  toJSON(): unknown {
    return {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: {},
      cells: this.cells.map((c) => c.toJSON()),
    };
  }
}

function edit(fields: Partial<CellEdit>): CellEdit {
  return {
    op: "edit",
    path: "a.ipynb",
    cellType: "code",
    index: 0,
    before: "",
    after: "",
    ...fields,
  };
}

describe("applyEdit", () => {
  it("inserts a cell with a new id in one transaction", () => {
    const nb = new FakeNotebook("a", "b");
    const applied = applyEdit(nb, edit({ op: "insert", index: 1, after: "new" }), () => "n1");
    expect(applied).toEqual({ cellId: "n1", index: 1 });
    expect(nb.sources()).toEqual(["a", "new", "b"]);
    expect(nb.cells[1]?.id).toBe("n1");
    expect(nb.transactions).toBe(1);
  });

  it("edits, deletes and moves by id, each as one step", () => {
    const nb = new FakeNotebook("a", "b", "c");
    expect(applyEdit(nb, edit({ cellId: "c1", index: 9, before: "b", after: "B" }))).toEqual({
      cellId: "c1",
      index: 1,
    });
    expect(applyEdit(nb, edit({ op: "move", cellId: "c0", before: "a", toIndex: 2 }))).toEqual({
      cellId: "c0",
      index: 2,
    });
    expect(nb.sources()).toEqual(["B", "c", "a"]);
    expect(applyEdit(nb, edit({ op: "delete", cellId: "c2", before: "c" }))).toEqual({
      cellId: "c2",
      index: 1,
    });
    expect(nb.sources()).toEqual(["B", "a"]);
    // The new source is the cell's own step (its setSource); the move and the delete the notebook's.
    expect(nb.transactions).toBe(2);
  });

  it("refuses a cell the user changed, with its current source, and changes nothing", () => {
    const nb = new FakeNotebook("x = 1  # typed by the user");
    const refused = (() => {
      try {
        applyEdit(nb, edit({ cellId: "c0", before: "x = 1", after: "x = 2" }));
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(refused).toBeInstanceOf(Refused);
    expect((refused as Refused).source).toBe("x = 1  # typed by the user");
    expect(nb.sources()).toEqual(["x = 1  # typed by the user"]);
    expect(nb.transactions).toBe(0);
  });

  it("refuses unknown cells and indexes out of range", () => {
    const nb = new FakeNotebook("a");
    expect(() => applyEdit(nb, edit({ cellId: "nope" }))).toThrow("no cell nope");
    expect(() => applyEdit(nb, edit({ index: 5 }))).toThrow("no cell at index 5");
    expect(() => applyEdit(nb, edit({ op: "insert", index: 2 }))).toThrow("no index 2");
    expect(() => applyEdit(nb, edit({ op: "move", before: "a", toIndex: 1 }))).toThrow(
      "no index 1",
    );
    expect(nb.transactions).toBe(0);
  });
});

describe("cellsOf", () => {
  it("replaces an output too large to send by a note", () => {
    const nb = new FakeNotebook();
    const big = { output_type: "stream", name: "stdout", text: "x".repeat(MAX_OUTPUT_JSON) };
    const small = { output_type: "stream", name: "stdout", text: "ok" };
    nb.cells.push(new FakeCell("c0", "print()", "code", [small, big]));
    const [cell] = cellsOf(nb) as { outputs: { text: string }[] }[];
    expect(cell?.outputs[0]).toEqual(small);
    expect(cell?.outputs[1]?.text).toMatch(/too large to send/);
  });
});

function openNotebook(path: string, model: FakeNotebook, extra: Partial<OpenNotebook> = {}) {
  const marks: [string, string][] = [];
  const notebook: OpenNotebook = {
    path,
    kernelId: "k1",
    model,
    run: async (): Promise<RunResult> => ({ outputs: [], executionCount: 1, timedOut: false }),
    active: (): ActiveResult | null => null,
    mark: (cellId, source) => marks.push([cellId, source]),
    ...extra,
  };
  return { notebook, marks };
}

function page(notebooks: OpenNotebook[]) {
  let changed = (): void => {};
  let focused = (_path: string): void => {};
  const documents = new PageDocuments(
    "ws://x/acp-notebook/ws/pages",
    {
      notebooks: () => notebooks,
      watch: (onChanged, onFocused) => {
        changed = onChanged;
        focused = onFocused;
      },
    },
    FakeSocket as unknown as typeof WebSocket,
  );
  documents.start();
  const socket = FakeSocket.instances.at(-1) as FakeSocket;
  socket.open();
  return { documents, socket, changed: () => changed(), focused: (p: string) => focused(p) };
}

function request(fields: Partial<PageRequest>): PageRequest {
  return { type: "page:request", id: 1, path: "a.ipynb", op: "cells", ...fields };
}

describe("PageDocuments", () => {
  beforeEach(() => {
    FakeSocket.instances.length = 0;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("reports the open notebooks once per path, and again only when they change", () => {
    const a = openNotebook("a.ipynb", new FakeNotebook()).notebook;
    const notebooks = [a, { ...a }];
    const { socket, changed } = page(notebooks);
    expect(socket.sent).toEqual([
      { type: "page:notebooks", notebooks: [{ path: "a.ipynb", kernelId: "k1" }] },
    ]);
    changed();
    expect(socket.sent).toHaveLength(1);
    notebooks.push(openNotebook("b.ipynb", new FakeNotebook()).notebook);
    changed();
    expect(socket.sent.at(-1)).toEqual({
      type: "page:notebooks",
      notebooks: [
        { path: "a.ipynb", kernelId: "k1" },
        { path: "b.ipynb", kernelId: "k1" },
      ],
    });
  });

  it("applies an edit, marks the cell, and answers where it is", async () => {
    const model = new FakeNotebook("a");
    const { notebook, marks } = openNotebook("a.ipynb", model);
    const { socket } = page([notebook]);
    const insert = edit({ op: "insert", index: 1, after: "x = 1" });
    socket.receive(request({ id: 7, op: "apply", edit: insert }));
    await settle();
    const reply = socket.sent.at(-1) as { id: number; result: { cellId: string; index: number } };
    expect(reply.id).toBe(7);
    expect(reply.result.index).toBe(1);
    expect(model.sources()).toEqual(["a", "x = 1"]);
    expect(marks).toEqual([[reply.result.cellId, "x = 1"]]);
  });

  it("answers a refusal with the current source, and an unknown path with an error", async () => {
    const { notebook } = openNotebook("a.ipynb", new FakeNotebook("typed"));
    const { socket } = page([notebook]);
    socket.receive(request({ id: 2, op: "apply", edit: edit({ cellId: "c0", before: "old" }) }));
    socket.receive(request({ id: 3, path: "gone.ipynb" }));
    await settle();
    const refused = socket.sent.find((f) => f.id === 2);
    const unknown = socket.sent.find((f) => f.id === 3);
    expect(refused).toMatchObject({ id: 2, source: "typed" });
    expect(refused?.error).toMatch(/changed since it was read/);
    expect(unknown).toMatchObject({ id: 3, error: "this page no longer holds gone.ipynb" });
  });

  it("answers cells, run, the active cell (its selection bounded) and the whole notebook", async () => {
    const runs: [string, number][] = [];
    const { notebook } = openNotebook("a.ipynb", new FakeNotebook("print(1)"), {
      run: async (cellId, timeoutMs) => {
        runs.push([cellId, timeoutMs]);
        return { outputs: [{ output_type: "stream" }], executionCount: 4, timedOut: false };
      },
      active: () => ({ cellId: "c0", index: 0, selection: "s".repeat(20_000) }),
    });
    const { socket } = page([notebook]);
    socket.receive(request({ id: 1 }));
    socket.receive(request({ id: 2, op: "run", cellId: "c0", timeout: 2.5 }));
    socket.receive(request({ id: 3, op: "active" }));
    socket.receive(request({ id: 4, op: "notebook" }));
    await settle();
    const byId = new Map(socket.sent.slice(1).map((r) => [r.id, r.result]));
    expect(byId.get(1)).toEqual([{ id: "c0", cell_type: "code", source: "print(1)", outputs: [] }]);
    // The whole notebook, as its model holds it (the server writes it as nbformat).
    expect((byId.get(4) as { notebook: unknown }).notebook).toMatchObject({
      nbformat: 4,
      cells: [{ id: "c0", source: "print(1)" }],
    });
    expect(byId.get(2)).toMatchObject({ executionCount: 4 });
    expect(runs).toEqual([["c0", 2500]]);
    expect((byId.get(3) as ActiveResult).selection).toHaveLength(10_000);
  });

  it("reports the text files open in editors, answers their text and writes over `before`", async () => {
    let text = "saved\nunsaved\n";
    const file: OpenFile = {
      path: "notes.md",
      model: { getSource: () => text, setSource: (source) => (text = source) },
    };
    const files = [file];
    const { socket, changed } = page([]);
    // A host with files (the lab's) reports them with the notebooks.
    const withFiles = new PageDocuments(
      "ws://x/acp-notebook/ws/pages",
      { notebooks: () => [], files: () => files, watch: () => {} },
      FakeSocket as unknown as typeof WebSocket,
    );
    withFiles.start();
    const fileSocket = FakeSocket.instances.at(-1) as FakeSocket;
    fileSocket.open();
    expect(fileSocket.sent).toEqual([
      { type: "page:notebooks", notebooks: [], files: ["notes.md"] },
    ]);
    changed();
    expect(socket.sent).toEqual([{ type: "page:notebooks", notebooks: [] }]); // a host without
    fileSocket.receive(request({ id: 1, path: "notes.md", op: "text" }));
    fileSocket.receive(
      request({ id: 2, path: "notes.md", op: "write", before: "other", text: "agent" }),
    );
    await settle();
    fileSocket.receive(
      request({ id: 3, path: "notes.md", op: "write", before: "saved\nunsaved\n", text: "agent" }),
    );
    fileSocket.receive(request({ id: 4, path: "gone.md", op: "text" }));
    fileSocket.receive(request({ id: 5, path: "notes.md", op: "cells" }));
    await settle();
    const byId = new Map(fileSocket.sent.slice(1).map((r) => [r.id, r]));
    expect(byId.get(1)).toMatchObject({ result: { text: "saved\nunsaved\n" } });
    expect(byId.get(2)?.error).toMatch(/changed in its editor/);
    expect(byId.get(3)).toEqual({ type: "page:reply", id: 3, result: null });
    expect(text).toBe("agent");
    expect(byId.get(4)?.error).toBe("this page no longer holds gone.md");
    expect(byId.get(5)?.error).toBe("this page no longer holds notes.md"); // not a notebook
  });

  it("reports focus at most once a second", () => {
    vi.useFakeTimers();
    const { notebook } = openNotebook("a.ipynb", new FakeNotebook());
    const { socket, focused } = page([notebook]);
    focused("a.ipynb");
    focused("a.ipynb");
    vi.advanceTimersByTime(1500);
    focused("a.ipynb");
    const focus = socket.sent.filter((f) => f.type === "page:focus");
    expect(focus).toEqual([
      { type: "page:focus", path: "a.ipynb" },
      { type: "page:focus", path: "a.ipynb" },
    ]);
  });

  it("reconnects with a growing delay and reports again; dispose stops it", () => {
    vi.useFakeTimers();
    const { notebook } = openNotebook("a.ipynb", new FakeNotebook());
    const { documents, socket } = page([notebook]);
    socket.drop();
    vi.advanceTimersByTime(999);
    expect(FakeSocket.instances).toHaveLength(1);
    vi.advanceTimersByTime(1);
    const second = FakeSocket.instances.at(-1) as FakeSocket;
    expect(FakeSocket.instances).toHaveLength(2);
    second.drop();
    vi.advanceTimersByTime(1999);
    expect(FakeSocket.instances).toHaveLength(2);
    vi.advanceTimersByTime(1);
    const third = FakeSocket.instances.at(-1) as FakeSocket;
    third.open();
    expect(third.sent[0]).toMatchObject({ type: "page:notebooks" });
    documents.dispose();
    expect(third.closed).toBe(true);
    third.drop();
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.instances).toHaveLength(3);
  });
});
