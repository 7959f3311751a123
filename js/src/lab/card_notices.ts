// Questions that wait while the page's focus is elsewhere: one JupyterLab notification
// each (whichever views of its chat told of it), whose button focuses the card; closed
// once the question is answered anywhere.

import { Notification } from "@jupyterlab/apputils";
import type { Translate } from "../i18n";

interface Waiting {
  notification: string;
  /** The views that told of it; each may still show the card. */
  jumps: (() => boolean)[];
}

export class WaitingCards {
  private readonly waiting = new Map<string, Waiting>();

  /** `changed`: a question began or ended waiting (the panel marks its chat). */
  constructor(
    private readonly t: Translate,
    private readonly changed: () => void,
  ) {}

  opened(chatId: string, key: string, notice: { text: string; jump(): boolean } | null): void {
    if (notice === null) return;
    const id = `${chatId}/${key}`;
    const known = this.waiting.get(id);
    if (known !== undefined) {
      known.jumps.push(notice.jump);
      return;
    }
    const entry: Waiting = { notification: "", jumps: [notice.jump] };
    entry.notification = Notification.warning(notice.text, {
      autoClose: false,
      actions: [
        {
          label: this.t("goToQuestion"),
          displayType: "accent",
          callback: () => {
            entry.jumps.some((jump) => jump());
          },
        },
      ],
    });
    this.waiting.set(id, entry);
    this.changed();
  }

  closed(chatId: string, key: string): void {
    const id = `${chatId}/${key}`;
    const entry = this.waiting.get(id);
    if (entry === undefined) return;
    this.waiting.delete(id);
    Notification.dismiss(entry.notification);
    this.changed();
  }
}
