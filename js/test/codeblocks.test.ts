// @vitest-environment jsdom
// Code blocks of agent messages: Copy always, "Insert cell below" only with the lab hook.
import { afterEach, describe, expect, it } from "vitest";
import { translator } from "../src/i18n";
import { AgentItem } from "../src/items";
import { setLabHooks } from "../src/lab_hooks";

const t = translator("en");
const MESSAGE = "Try this:\n\n```python\nx = 1\nprint(x)\n```\n";

function buttons(item: AgentItem): string[] {
  return [...item.el.querySelectorAll("button")].map((b) => b.textContent ?? "");
}

describe("code block actions", () => {
  afterEach(() => setLabHooks(undefined));

  it("offers Copy only without the JupyterLab extension", () => {
    const item = new AgentItem(t);
    item.update(MESSAGE);
    expect(buttons(item)).toEqual(["Copy"]);
  });

  it("inserts exactly the block's code through the hook", () => {
    const inserted: string[] = [];
    setLabHooks({
      insertCellBelow: (code) => {
        inserted.push(code);
        return true;
      },
    });
    const item = new AgentItem(translator("zh"));
    item.update(MESSAGE);
    expect(buttons(item)).toEqual(["复制", "在下方插入单元格"]);
    item.el.querySelectorAll("button")[1]?.click();
    expect(inserted).toEqual(["x = 1\nprint(x)"]);
  });
});
