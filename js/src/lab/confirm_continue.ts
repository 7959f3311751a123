// Continue's question in JupyterLab: one dialog per click on an untrusted notebook's
// Continue (../continue_confirm.ts says what it asks and why).

import { Dialog, showDialog } from "@jupyterlab/apputils";
import { Widget } from "@lumino/widgets";
import { type ContinueWhat, continueQuestion } from "../continue_confirm";
import type { Translate } from "../i18n";

export async function confirmContinue(t: Translate, what: ContinueWhat): Promise<boolean> {
  const result = await showDialog({
    title: t("continueConfirmTitle"),
    body: new Widget({ node: continueQuestion(t, what) }),
    buttons: [
      Dialog.cancelButton({ label: t("cancel") }),
      Dialog.okButton({ label: t("continueChat") }),
    ],
    // Nothing starts unless the person chose Continue.
    defaultButton: 0,
  });
  return result.button.accept;
}
