// Actions on the code blocks of agent messages: "Copy" always, "Insert cell below" only
// when the JupyterLab extension is in the page (it registers the hook; the inline widget
// and the panel both look it up, so either shows the button when it can work).

import { el } from "./dom";
import type { Translate } from "./i18n";
import { labHooks } from "./lab_hooks";

/** The code of a rendered block: its text without the newline Markdown ends it with. */
export function blockCode(pre: HTMLElement): string {
  return (pre.textContent ?? "").replace(/\n$/, "");
}

function flash(button: HTMLButtonElement, text: string): void {
  const label = button.textContent;
  button.textContent = text;
  setTimeout(() => {
    button.textContent = label;
  }, 1500);
}

/** Adds the actions above every `<pre>` of freshly rendered Markdown blocks. */
export function decorateCodeBlocks(root: ParentNode, t: Translate): void {
  const hooks = labHooks();
  for (const pre of root.querySelectorAll("pre")) {
    const bar = el("div", "acpnb-code-actions");
    const copy = el("button", "acpnb-btn acpnb-code-copy", t("copy"));
    copy.type = "button";
    copy.addEventListener("click", () => {
      void navigator.clipboard?.writeText(blockCode(pre)).then(
        () => flash(copy, t("copied")),
        () => flash(copy, t("copyFailed")),
      );
    });
    bar.append(copy);
    if (hooks !== undefined) {
      const insert = el("button", "acpnb-btn acpnb-code-insert", t("insertCellBelow"));
      insert.type = "button";
      insert.addEventListener("click", () => {
        if (!hooks.insertCellBelow(blockCode(pre))) flash(insert, t("noNotebook"));
      });
      bar.append(insert);
    }
    pre.before(bar);
  }
}
