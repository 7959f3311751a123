// The text files open in this page's editors as documents.ts sees them: every document widget
// of the main area whose shared model is a text file (a YFile: getSource and setSource; a
// notebook's has them too, with its JSON, and cells: open_notebooks.ts reports notebooks),
// found through the shell without depending on the file editor package, and reported whenever
// the shell's widgets change.

import type { JupyterFrontEnd } from "@jupyterlab/application";
import type { ISignal } from "@lumino/signaling";
import type { Widget } from "@lumino/widgets";
import type { OpenFile, PageHost, SharedFileLike } from "./documents";

/** What a document widget's context offers (DocumentRegistry.IContext, as far as used here). */
interface ContextLike {
  path?: unknown;
  isReady?: unknown;
  model?: { sharedModel?: unknown } | null;
}

/** Reports also run this often: a shell without a layout signal (Notebook 7) still tells. */
const POLL_MS = 2000;

function isFileModel(model: unknown): model is SharedFileLike {
  const m = model as Partial<SharedFileLike> | null | undefined;
  const text = typeof m?.getSource === "function" && typeof m.setSource === "function";
  return text && !("cells" in (m as object));
}

/** The widget's text file, by its path on the server (a drive's prefix, "RTC:", taken off). */
function openFile(app: JupyterFrontEnd, widget: Widget): OpenFile | null {
  const context = (widget as { context?: ContextLike }).context;
  if (context === undefined || widget.isDisposed || context.isReady !== true) return null;
  const model = context.model?.sharedModel;
  if (typeof context.path !== "string" || !isFileModel(model)) return null;
  return { path: app.serviceManager.contents.localPath(context.path), model };
}

function shellFiles(app: JupyterFrontEnd): OpenFile[] {
  const files: OpenFile[] = [];
  for (const widget of app.shell.widgets("main")) {
    const file = openFile(app, widget);
    if (file !== null) files.push(file);
  }
  return files;
}

/** `host` with the text files of the page's editors too. */
export function withFiles(host: PageHost, app: JupyterFrontEnd): PageHost {
  return {
    notebooks: () => host.notebooks(),
    files: () => shellFiles(app),
    watch: (changed, focused) => {
      host.watch(changed, focused);
      const shell = app.shell as { layoutModified?: ISignal<unknown, void> };
      shell.layoutModified?.connect(changed);
      app.shell.currentChanged?.connect((_, args) => {
        changed();
        const file = args.newValue === null ? null : openFile(app, args.newValue);
        if (file !== null) focused(file.path);
      });
      setInterval(changed, POLL_MS);
    },
  };
}
