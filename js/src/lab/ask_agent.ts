// "Ask the agent" under a cell whose outputs hold an error: one click sends the cell's
// source and its traceback to the Agent panel's chat.

import type { CodeCell } from "@jupyterlab/cells";
import type { INotebookTracker, NotebookPanel } from "@jupyterlab/notebook";
import { el } from "../dom";
import type { Translate } from "../i18n";

export interface CellError {
  source: string;
  traceback: string;
}

/** The cell's source and its first error output's traceback; null when it has none. */
export function cellError(cell: CodeCell): CellError | null {
  const outputs = cell.model.outputs;
  for (let i = 0; i < outputs.length; i++) {
    const output = outputs.get(i);
    if (output.type !== "error") continue;
    const json = output.toJSON() as { ename?: unknown; evalue?: unknown; traceback?: unknown };
    const lines = Array.isArray(json.traceback) ? json.traceback.map(String) : [];
    const traceback = lines.length > 0 ? lines.join("\n") : `${json.ename}: ${json.evalue}`;
    return { source: cell.model.sharedModel.getSource(), traceback };
  }
  return null;
}

/** The notebook's kernel language, for the code fence. */
export function notebookLanguage(panel: NotebookPanel): string {
  const info = panel.content.model?.getMetadata("language_info") as { name?: unknown } | undefined;
  return typeof info?.name === "string" ? info.name : "";
}

/** Keeps an "Ask the agent" button under every cell with an error output, in every notebook. */
export function watchErrors(
  tracker: INotebookTracker,
  t: Translate,
  ask: (panel: NotebookPanel, cell: CodeCell) => void,
): void {
  const buttons = new WeakMap<CodeCell, HTMLButtonElement>();
  const wired = new WeakSet<CodeCell>();

  const sync = (panel: NotebookPanel, cell: CodeCell): void => {
    let button = buttons.get(cell);
    if (cellError(cell) === null) {
      button?.remove();
      return;
    }
    if (button === undefined) {
      button = el("button", "acpnb-btn acpnb-ask-error", t("askAgent"));
      button.type = "button";
      button.addEventListener("click", () => ask(panel, cell));
      buttons.set(cell, button);
    }
    // Last in the output area, after outputs added since (they are appended too).
    cell.outputArea.node.append(button);
  };

  const scan = (panel: NotebookPanel): void => {
    for (const cell of panel.content.widgets) {
      if (cell.model.type !== "code") continue;
      const code = cell as CodeCell;
      if (!wired.has(code)) {
        wired.add(code);
        // After the output area has rendered the change (it connected first).
        code.model.outputs.changed.connect(() => sync(panel, code));
      }
      sync(panel, code);
    }
  };

  tracker.widgetAdded.connect((_, panel) => {
    void panel.context.ready.then(() => {
      scan(panel);
      // Cells added later (their widgets exist once the notebook has handled the change).
      panel.content.model?.cells.changed.connect(() => queueMicrotask(() => scan(panel)));
    });
  });
}
