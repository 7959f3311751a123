// @vitest-environment jsdom
// The string table and the locale choice.
import { afterEach, describe, expect, it, vi } from "vitest";
import { describeError, isolate, resolveLocale, translator } from "../src/i18n";

afterEach(() => {
  document.documentElement.lang = "";
  vi.restoreAllMocks();
});

describe("i18n", () => {
  it("fills placeholders in both languages", () => {
    expect(translator("en")("thoughtFor", { seconds: 3 })).toBe("Thought for 3s");
    expect(translator("zh")("thoughtFor", { seconds: 3 })).toBe("思考了 3 秒");
    expect(translator("zh")("phaseWaiting")).toBe("等待你的回复");
  });

  it("prefers the locale trait, then JupyterLab's <html lang>, then the browser", () => {
    vi.spyOn(navigator, "language", "get").mockReturnValue("zh-CN");
    expect(resolveLocale("")).toBe("zh");
    document.documentElement.lang = "en";
    expect(resolveLocale("")).toBe("en");
    expect(resolveLocale("zh_CN")).toBe("zh");
    expect(resolveLocale("fr")).toBe("en");
  });

  it("describes error codes, known or not", () => {
    const t = translator("zh");
    expect(describeError(t, "FORBIDDEN")).toBe("失败：只有会话所有者可以这样做");
    // Codes and details are the server's text: isolated from the words around them.
    expect(describeError(translator("en"), "WEIRD", "x")).toBe(
      `Failed: ${isolate("WEIRD")} (${isolate("x")})`,
    );
  });
});
