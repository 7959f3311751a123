// @vitest-environment jsdom
// What a saved chat output shows: nothing says the chat ended unless the server or the
// kernel answered that it is gone.
import { describe, expect, it } from "vitest";
import { savedShows, widgetOutcome, widgetShows } from "../src/lab/saved_choice";

describe("savedShows", () => {
  it("goes live on the server's word, an untrusted output only on the notebook's own kernel", () => {
    expect(savedShows("live", true, "k1", null)).toBe("live");
    expect(savedShows("live", false, "k1", "k1")).toBe("live");
    // A file from elsewhere naming another live chat, or a notebook without a kernel yet.
    expect(savedShows("live", false, "k1", "k2")).toBe("copy");
    expect(savedShows("live", false, "k1", null)).toBe("copy");
  });

  it("says it ended only when the server said the chat is gone", () => {
    for (const trusted of [true, false]) {
      expect(savedShows("gone", trusted, "k1", "k1")).toBe("ended");
      expect(savedShows("unknown", trusted, "k1", "k1")).toBe("copy");
    }
  });
});

describe("widgetShows", () => {
  it("reads ipywidgets' renderer", () => {
    expect(widgetShows("Loading widget...")).toBe("loading");
    expect(widgetShows("Error displaying widget: model not found")).toBe("missing");
    expect(widgetShows("Error displaying widget")).toBe("failed");
    expect(widgetShows("demo idle")).toBe("shown");
    expect(widgetShows("")).toBe("shown");
  });

  it("resolves once the view shows more than loading, or after the wait", async () => {
    const node = document.createElement("div");
    node.textContent = "Loading widget...";
    const shown = widgetOutcome(node, 10_000);
    node.textContent = "";
    node.append(document.createElement("div"));
    expect(await shown).toBe("shown");

    node.textContent = "Loading widget...";
    expect(await widgetOutcome(node, 5)).toBe("loading");
    const missing = widgetOutcome(node, 10_000);
    node.textContent = "Error displaying widget: model not found";
    expect(await missing).toBe("missing");
  });
});
