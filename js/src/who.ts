// Who answered a card, in words a person reads: "you" for this page's own login, "another
// browser" for another of jupyter_server's made-up logins, the notebook's code, the agent.
// The bridge names them as the server shows them ("Anonymous Aitne", "kernel", "agent").

import type { Viewer } from "./contracts";
import type { Translate } from "./i18n";

/**
 * jupyter_server's name for a token login it knows nothing of: "Anonymous " and a moon of
 * Jupyter (one capitalized word). Every browser holding the token is one of these.
 */
const ANONYMOUS = /^Anonymous [A-Z][a-z]+(?: \d+)?$/;

/**
 * How to name `by` on a settled card, or null to name no one: `viewer` is this page's
 * login (null when no server named it: local mode, a saved copy), `agent` the agent's
 * name. The bridge's own teardown is nobody's answer.
 */
export function answerer(
  by: string | null,
  viewer: Viewer | null,
  agent: string,
  t: Translate,
): string | null {
  if (by === null || by === "" || by === "teardown") return null;
  if (by === "kernel") return t("byKernel");
  if (by === "agent") return agent;
  if (viewer !== null && by === viewer.name) return t("byYou");
  if (ANONYMOUS.test(by)) return viewer === null ? null : t("byAnotherBrowser");
  return by;
}
