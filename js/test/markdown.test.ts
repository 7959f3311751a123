// @vitest-environment jsdom
// Markdown from the agent is rendered sanitized: no script, no remote loads, safe links.
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../src/markdown";

function render(text: string): HTMLElement {
  const box = document.createElement("div");
  renderMarkdown(box, text);
  return box;
}

describe("renderMarkdown", () => {
  it("renders Markdown with code blocks", () => {
    const box = render("# Title\n\nSome **bold** and `code`.\n\n```py\nprint('<b>')\n```\n");
    expect(box.querySelector("h1")?.textContent).toBe("Title");
    expect(box.querySelector("strong")?.textContent).toBe("bold");
    expect(box.querySelector("pre > code")?.textContent).toBe("print('<b>')\n");
  });

  it("shows raw HTML as text and never creates elements from it", () => {
    const box = render(
      'Hi <img src=x onerror=alert(1)> <script>alert(2)</script> <iframe src="https://e.com"></iframe>',
    );
    expect(box.querySelector("img, script, iframe")).toBeNull();
    expect(box.textContent).toContain("<img src=x onerror=alert(1)>");
    expect(box.textContent).toContain("<script>alert(2)</script>");
    expect(box.innerHTML).not.toMatch(/<img|<script|<iframe/);
  });

  it("turns images into plain links so nothing remote is loaded", () => {
    const box = render("![a cat](https://evil.example/cat.png) ![b](data:image/png;base64,AAAA)");
    expect(box.querySelector("img")).toBeNull();
    const link = box.querySelector("a");
    expect(link?.getAttribute("href")).toBe("https://evil.example/cat.png");
    expect(link?.textContent).toBe("a cat");
    expect(box.querySelectorAll("a")).toHaveLength(1);
    expect(box.textContent).toContain("b");
  });

  it("keeps only http(s) and mailto links, opened safely", () => {
    const box = render(
      "[ok](https://example.com) [mail](mailto:a@b.c) [bad](javascript:alert(1)) [data](data:text/html,x) [rel](/api/kernels)",
    );
    const links = [...box.querySelectorAll("a")];
    const byText = new Map(links.map((a) => [a.textContent, a]));
    expect(byText.get("ok")?.getAttribute("href")).toBe("https://example.com");
    expect(byText.get("ok")?.getAttribute("target")).toBe("_blank");
    expect(byText.get("ok")?.getAttribute("rel")).toBe("noopener noreferrer");
    expect(byText.get("mail")?.getAttribute("href")).toBe("mailto:a@b.c");
    for (const name of ["bad", "data", "rel"]) {
      expect(byText.get(name)?.hasAttribute("href") ?? false).toBe(false);
    }
    expect(box.innerHTML).not.toContain("javascript:");
  });

  it("strips event handlers, styles and forms even if HTML slipped through", () => {
    const box = render(
      '<a href="https://x.y" onclick="alert(1)" style="background:url(https://t.co/p)">x</a><form><input></form><style>*{}</style>',
    );
    expect(box.querySelector("[onclick], [style], form, input, style")).toBeNull();
  });
});
