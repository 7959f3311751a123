// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { Composer } from "../src/composer";
import type { Attachment } from "../src/contracts";
import { translator } from "../src/i18n";
import { matching, mentionAt } from "../src/mentions";
import type { RequestBody, RequestResult } from "../src/transport";

const t = translator("en");
const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe("mentionAt", () => {
  it("finds the @word that ends at the caret", () => {
    expect(mentionAt("look at @d", 10)).toEqual({ start: 8, query: "d" });
    expect(mentionAt("@", 1)).toEqual({ start: 0, query: "" });
    expect(mentionAt("mail me@home", 12)).toBeNull();
    expect(mentionAt("look at @df now", 15)).toBeNull();
    expect(mentionAt("数据 @表", 5)).toEqual({ start: 3, query: "表" });
  });

  it("offers names that start with the query first", () => {
    const vars = [
      { name: "model_df", type: "pandas.DataFrame" },
      { name: "df", type: "pandas.DataFrame" },
      { name: "x", type: "int" },
    ];
    expect(matching(vars, "df").map((v) => v.name)).toEqual(["df", "model_df"]);
    expect(matching(vars, "").map((v) => v.name)).toEqual(["model_df", "df", "x"]);
  });
});

describe("@ in the composer", () => {
  it("offers the kernel's variables and attaches the picked one", async () => {
    const frame: Attachment = {
      label: "df · DataFrame 3x2",
      block: {
        type: "resource",
        resource: {
          uri: "notebook://variables/df",
          text: "pandas DataFrame",
          mimeType: "text/plain",
        },
      },
    };
    const sent: RequestBody[] = [];
    const request = async (body: RequestBody): Promise<RequestResult> => {
      sent.push(body);
      if (body.type === "chat:variables") {
        return {
          ok: true,
          ack: {
            variables: [
              { name: "df", type: "pandas.DataFrame" },
              { name: "x", type: "int" },
            ],
          },
        };
      }
      if (body.type === "chat:mention") return { ok: true, ack: { attachment: frame } };
      return { ok: true };
    };
    const composer = new Composer(t, request);
    document.body.append(composer.el);
    const { input } = composer;
    input.value = "summarize @d";
    input.setSelectionRange(12, 12);
    input.dispatchEvent(new Event("input"));
    await tick();
    const options = [...composer.el.querySelectorAll(".acpnb-mention")];
    expect(options.map((o) => o.textContent)).toEqual(["dfpandas.DataFrame"]);
    expect(input.getAttribute("aria-controls")).toBe(
      composer.el.querySelector(".acpnb-mentions:not([hidden])")?.id,
    );

    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", cancelable: true }));
    await tick();
    expect(input.value).toBe("summarize @df ");
    expect(sent.map((b) => b.type)).toEqual(["chat:variables", "chat:mention"]);
    expect(composer.el.querySelector(".acpnb-attachment")?.textContent).toContain(
      "df · DataFrame 3x2",
    );
    expect(composer.el.querySelector<HTMLElement>(".acpnb-mentions")?.hidden).toBe(true);

    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    await tick();
    expect(sent.at(-1)).toEqual({
      type: "chat:prompt",
      text: "summarize @df ",
      attachments: [frame],
    });
    composer.el.remove();
  });

  it("says why when the kernel cannot be asked", async () => {
    const composer = new Composer(t, async () => ({
      ok: false,
      code: "INVALID",
      detail: "no kernel",
    }));
    composer.input.value = "@";
    composer.input.setSelectionRange(1, 1);
    composer.input.dispatchEvent(new Event("input"));
    await tick();
    expect(composer.el.querySelector(".acpnb-composer-error")?.textContent).toContain("no kernel");
    expect(composer.el.querySelector<HTMLElement>(".acpnb-mentions")?.hidden).toBe(true);
  });
});
