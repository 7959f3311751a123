// @vitest-environment jsdom
// The header's "Accept edits" toggle: it shows the folded setting and asks to change it.
import { describe, expect, it } from "vitest";
import { fold, initialState } from "../src/fold";
import { Header } from "../src/header";
import { translator } from "../src/i18n";
import { recorder, settle } from "./helpers";

function toggle(header: Header): HTMLInputElement {
  const input = header.el.querySelector<HTMLInputElement>(".acpnb-accept-edits input");
  if (input === null) throw new Error("no accept-edits toggle");
  return input;
}

describe("accept edits toggle", () => {
  it("reflects the folded setting and sends chat:accept_edits", async () => {
    const { request, bodies, results } = recorder();
    const header = new Header(translator("en"), request);
    document.body.append(header.el); // a click changes a checkbox in the document only
    const state = initialState();
    header.update(state, true);
    expect(toggle(header).checked).toBe(false);
    expect(header.el.querySelector(".acpnb-accept-edits")?.textContent).toBe("Accept edits");
    fold(state, { kind: "edit_policy", seq: 1, acceptEdits: true, by: "bob" });
    header.update(state, true);
    expect(toggle(header).checked).toBe(true);
    toggle(header).click(); // off
    await settle();
    expect(bodies).toEqual([{ type: "chat:accept_edits", value: false }]);
    // Refused: the toggle goes back to what it was.
    results.push({ ok: false, code: "FORBIDDEN", detail: null });
    toggle(header).click();
    await settle();
    expect(bodies.at(-1)).toEqual({ type: "chat:accept_edits", value: true });
    expect(toggle(header).checked).toBe(false);
    expect(header.el.querySelector("[role=alert]")?.textContent).toContain("owner");
  });
});
