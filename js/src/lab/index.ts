// The JupyterLab / Notebook 7 extension: the Agent panel, "Ask the agent" on errors and on
// selected cells, "Insert cell below" on the agent's code blocks, and the renderer of saved
// chats. Everything it shows is the widget's own view code (../view.ts and friends).

import "../widget.css";
import "./lab.css";
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from "@jupyterlab/application";
import { ICommandPalette } from "@jupyterlab/apputils";
import type { CodeCell } from "@jupyterlab/cells";
import { INotebookTracker, NotebookActions, type NotebookPanel } from "@jupyterlab/notebook";
import { IRenderMimeRegistry } from "@jupyterlab/rendermime";
import type { IRenderMime } from "@jupyterlab/rendermime-interfaces";
import { LabIcon } from "@jupyterlab/ui-components";
import { Widget } from "@lumino/widgets";
import { POINTER_MIME, SAVED_MIME } from "../contracts";
import { resolveLocale, type Translate, translator } from "../i18n";
import { setLabHooks } from "../lab_hooks";
import { cellError, notebookLanguage, watchErrors } from "./ask_agent";
import { WaitingCards } from "./card_notices";
import { showPointer } from "./card_pointer";
import { PageDocuments } from "./documents";
import { withFiles } from "./open_files";
import { pagesSocketUrl, trackerHost } from "./open_notebooks";
import { AgentPanel } from "./panel";
import { cellsPrompt, errorPrompt } from "./prompt";
import { SAVED_RANK, SavedChatRenderer, WIDGET_MIME } from "./saved_renderer";
import { boundWithin } from "./shortcuts";

const COMMAND_OPEN = "acp-notebook:open-panel";
const COMMAND_ASK = "acp-notebook:ask-selected";
/** Free in JupyterLab's and Notebook 7's default shortcuts (checked against their schemas). */
export const OPEN_KEYS = ["Accel Shift Y"];

const icon = new LabIcon({
  name: "acp-notebook:agent",
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path class="jp-icon3" fill="#616161" d="M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2zm3 6a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3zm5 0a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3zm5 0a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3z"/></svg>',
});

/** Puts `code` in a new code cell below the active cell; it is never run. */
function insertBelow(tracker: INotebookTracker, code: string): boolean {
  const panel = tracker.currentWidget;
  if (panel === null) return false;
  const notebook = panel.content;
  NotebookActions.insertBelow(notebook);
  if (notebook.activeCell?.model.type !== "code") NotebookActions.changeCellType(notebook, "code");
  notebook.activeCell?.model.sharedModel.setSource(code);
  return true;
}

/** A cell's pointer to a card of its chat (card_pointer.ts). */
class CardPointer extends Widget implements IRenderMime.IRenderer {
  constructor(private readonly t: Translate) {
    super();
    this.addClass("acpnb-pointer");
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    showPointer(this.node, model.data[POINTER_MIME], this.t);
  }
}

function activate(
  app: JupyterFrontEnd,
  tracker: INotebookTracker,
  rendermime: IRenderMimeRegistry,
  palette: ICommandPalette | null,
): void {
  const t = translator(resolveLocale(""));
  const panel = new AgentPanel(t);
  panel.title.icon = icon;
  app.shell.add(panel, "right", { rank: 900 });
  const follow = (): void => panel.setNotebook(tracker.currentWidget);
  tracker.currentChanged.connect(follow);
  follow();
  const show = (): void => app.shell.activateById(panel.id);

  // Opened by its keys or the palette, the panel takes the focus into its composer.
  app.commands.addCommand(COMMAND_OPEN, {
    label: t("openPanel"),
    execute: () => {
      panel.focusComposer();
      show();
    },
  });
  app.commands.addCommand(COMMAND_ASK, {
    label: t("askSelected"),
    isEnabled: () => tracker.currentWidget !== null,
    execute: () => {
      const current = tracker.currentWidget;
      if (current === null) return;
      const notebook = current.content;
      const sources = notebook.widgets
        .filter((cell) => notebook.isSelectedOrActive(cell))
        .map((cell) => cell.model.sharedModel.getSource());
      show();
      void panel.ask(cellsPrompt(t, sources, notebookLanguage(current)));
    },
  });
  app.commands.addKeyBinding({ command: COMMAND_OPEN, keys: OPEN_KEYS, selector: "body" });
  for (const command of [COMMAND_OPEN, COMMAND_ASK]) {
    palette?.addItem({ command, category: t("agent") });
  }

  watchErrors(tracker, t, (notebook: NotebookPanel, cell: CodeCell) => {
    const error = cellError(cell);
    if (error === null) return;
    panel.setNotebook(notebook);
    show();
    void panel.ask(errorPrompt(t, error.source, error.traceback, notebookLanguage(notebook)));
  });

  const waiting = new WaitingCards(t, () => void panel.refresh());
  setLabHooks({
    insertCellBelow: (code) => insertBelow(tracker, code),
    boundWithin: (event, top) => boundWithin(app.commands, event, top),
    cardOpened: (chatId, key, notice) => waiting.opened(chatId, key, notice),
    cardClosed: (chatId, key) => waiting.closed(chatId, key),
  });

  // The agent's edits land in the notebooks open here (without real-time collaboration), its
  // reads and writes of text files in the editors open here.
  new PageDocuments(pagesSocketUrl(), withFiles(trackerHost(tracker, t), app)).start();

  rendermime.addFactory(
    {
      safe: true,
      mimeTypes: [SAVED_MIME],
      defaultRank: SAVED_RANK,
      createRenderer: (options) => {
        // The output's notebook: its document's path is what its URL resolver resolves from.
        const path = (options.resolver as { path?: unknown } | null)?.path;
        const owner = (): NotebookPanel | undefined => tracker.find((p) => p.context.path === path);
        return new SavedChatRenderer(
          {
            widgetRenderer: () => {
              const registry = owner()?.content.rendermime;
              return registry?.mimeTypes.includes(WIDGET_MIME)
                ? registry.createRenderer(WIDGET_MIME)
                : null;
            },
            kernelId: () => owner()?.sessionContext.session?.kernel?.id ?? null,
            kernelReady: async () => {
              const session = owner()?.sessionContext;
              // Not ready, ever (the kernel failed to start): no kernel to ask.
              const ready = await session?.ready.then(
                () => true,
                () => false,
              );
              return ready === true ? (session?.session?.kernel?.id ?? null) : null;
            },
          },
          options.sanitizer,
        );
      },
    },
    SAVED_RANK,
  );
  rendermime.addFactory(
    { safe: true, mimeTypes: [POINTER_MIME], createRenderer: () => new CardPointer(t) },
    SAVED_RANK,
  );
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: "acp-notebook:plugin",
  description: "The Agent panel, Ask the agent, code blocks into cells, saved chats.",
  autoStart: true,
  requires: [INotebookTracker, IRenderMimeRegistry],
  optional: [ICommandPalette],
  activate,
};

export default [plugin];
