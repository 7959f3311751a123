// What Continue on a saved chat starts, said before it starts when the notebook is not
// trusted. A downloaded notebook's file chose the agent, the directory and the session;
// the person confirms each Continue once (the server still checks the session is theirs
// and starts the agent in its default mode, never a mode from the file).

import { el } from "./dom";
import { type Translate, tIsolated } from "./i18n";

/** What a Continue will start. `cwd` null: the notebook's directory. */
export interface ContinueWhat {
  agent: string;
  cwd: string | null;
  sessionId: string;
}

/** Asks the person once; resolves true to go on. Null deps: a trusted notebook, no question. */
export type ConfirmContinue = (what: ContinueWhat) => Promise<boolean>;

/** The question's body: why it is asked, then the agent, directory and session, one a line. */
export function continueQuestion(t: Translate, what: ContinueWhat): HTMLElement {
  const body = el("div", "acpnb-continue-question");
  body.append(el("p", undefined, t("continueUntrusted")));
  const list = el("ul");
  const lines: [Parameters<Translate>[0], string][] = [
    ["continueAgent", what.agent],
    ["continueDirectory", what.cwd ?? t("continueNotebookDirectory")],
    ["continueSession", what.sessionId],
  ];
  for (const [key, value] of lines) {
    const item = el("li");
    item.append(tIsolated(t, key, { value }));
    list.append(item);
  }
  body.append(list, el("p", undefined, t("continueDefaultMode")));
  return body;
}
