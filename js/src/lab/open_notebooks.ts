// The notebooks of this JupyterLab / Notebook 7 page as documents.ts sees them: each
// NotebookPanel adapted to an OpenNotebook (its model, running a cell as the user would, the
// active cell, the "agent" mark), the tracker's changes as reports, the socket's URL.

import { type Cell, CodeCell, MarkdownCell } from "@jupyterlab/cells";
import { URLExt } from "@jupyterlab/coreutils";
import type { INotebookTracker, NotebookPanel } from "@jupyterlab/notebook";
import { ServerConnection } from "@jupyterlab/services";
import type { Translate } from "../i18n";
import {
  type ActiveResult,
  type OpenNotebook,
  type PageHost,
  Refused,
  type RunResult,
} from "./documents";

/** The class of a cell the agent wrote, until the user edits it (lab.css draws the mark). */
export const AGENT_MARK = "acpnb-agent-cell";
/** How long a run that timed out has, once interrupted, to end. */
const INTERRUPT_GRACE_MS = 5000;

/** The page socket's URL, with the token where JupyterLab sends one on its own sockets. */
export function pagesSocketUrl(): string {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.wsUrl, "acp-notebook/ws/pages");
  return settings.appendToken && settings.token
    ? `${url}?token=${encodeURIComponent(settings.token)}`
    : url;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function cellWidget(panel: NotebookPanel, cellId: string): Cell {
  const cell = panel.content.widgets.find((w) => w.model.id === cellId);
  if (cell === undefined) throw new Refused(`no cell ${cellId}`);
  return cell;
}

/** Runs the cell as the toolbar's Run would, without moving the selection or the focus. */
async function run(panel: NotebookPanel, cellId: string, timeoutMs: number): Promise<RunResult> {
  const cell = cellWidget(panel, cellId);
  if (cell instanceof MarkdownCell) {
    cell.rendered = true;
    return { outputs: [], executionCount: null, timedOut: false };
  }
  if (!(cell instanceof CodeCell)) throw new Refused("a raw cell does not run");
  const done = CodeCell.execute(cell, panel.sessionContext).then(
    () => null,
    (error: unknown) => error,
  );
  const ended = await Promise.race([done.then(() => true), sleep(timeoutMs).then(() => false)]);
  if (!ended) {
    await panel.sessionContext.session?.kernel?.interrupt();
    await Promise.race([done, sleep(INTERRUPT_GRACE_MS)]);
  } else {
    const error = await done;
    if (error !== null) {
      const why = error instanceof Error ? error.message : String(error);
      throw new Refused(`the cell did not run: ${why}`);
    }
  }
  const model = cell.model;
  return {
    outputs: model.outputs.toJSON(),
    executionCount: model.executionCount,
    timedOut: !ended,
  };
}

function active(panel: NotebookPanel): ActiveResult | null {
  const notebook = panel.content;
  const cell = notebook.activeCell;
  if (cell === null) return null;
  let selection = "";
  const editor = cell.editor;
  if (editor !== null) {
    const range = editor.getSelection();
    const [a, b] = [editor.getOffsetAt(range.start), editor.getOffsetAt(range.end)];
    selection = cell.model.sharedModel.getSource().slice(Math.min(a, b), Math.max(a, b));
  }
  return { cellId: cell.model.id, index: notebook.activeCellIndex, selection };
}

function mark(panel: NotebookPanel, cellId: string, source: string, t: Translate): void {
  const cell = panel.content.widgets.find((w) => w.model.id === cellId);
  if (cell === undefined) return;
  cell.addClass(AGENT_MARK);
  // A custom property inherits down to the prompt, whose ::after shows it (attr() would not).
  cell.node.style.setProperty("--acpnb-mark", JSON.stringify(t("agentCellMark")));
  const clear = (): void => {
    if (cell.model.sharedModel.getSource() === source) return;
    cell.removeClass(AGENT_MARK);
    cell.model.contentChanged.disconnect(clear);
  };
  cell.model.contentChanged.connect(clear);
}

function adapt(panel: NotebookPanel, t: Translate): OpenNotebook | null {
  const model = panel.content.model;
  if (model === null || panel.isDisposed || !panel.context.isReady) return null;
  return {
    // By its path on the server, as open_files.ts reports text files (a drive's prefix off).
    path: panel.context.localPath,
    kernelId: panel.sessionContext.session?.kernel?.id ?? null,
    model: model.sharedModel,
    run: (cellId, timeoutMs) => run(panel, cellId, timeoutMs),
    active: () => active(panel),
    mark: (cellId, source) => mark(panel, cellId, source, t),
  };
}

/** The tracker's notebooks (ready ones only: a loading model has no cells yet). */
export function trackerHost(tracker: INotebookTracker, t: Translate): PageHost {
  return {
    notebooks: () => {
      const open: OpenNotebook[] = [];
      tracker.forEach((panel) => {
        const notebook = adapt(panel, t);
        if (notebook !== null) open.push(notebook);
      });
      return open;
    },
    watch: (changed, focused) => {
      const wire = (panel: NotebookPanel): void => {
        void panel.context.ready.then(changed);
        panel.context.pathChanged.connect(changed);
        panel.sessionContext.kernelChanged.connect(changed);
        panel.disposed.connect(changed);
        panel.content.activeCellChanged.connect(() => focused(panel.context.path));
      };
      tracker.forEach(wire);
      tracker.widgetAdded.connect((_, panel) => {
        wire(panel);
        changed();
      });
      const current = (): void => {
        const panel = tracker.currentWidget;
        if (panel !== null) focused(panel.context.path);
      };
      tracker.currentChanged.connect(current);
      // Another tab with the same notebook: the one the user comes back to, or clicks or
      // types in (answering the edit's card there, say), is theirs. Reports are throttled.
      window.addEventListener("focus", current);
      window.addEventListener("pointerdown", current, { capture: true, passive: true });
      window.addEventListener("keydown", current, { capture: true, passive: true });
    },
  };
}
