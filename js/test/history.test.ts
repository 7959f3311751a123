// The Agent panel's history list: search by title, pages added up, relative times.
import { describe, expect, it } from "vitest";
import type { PastSession } from "../src/lab/api";
import { addPage, MAX_ENTRIES, matches, relativeTime, shownRows } from "../src/lab/history_list";

const session = (sessionId: string, title: string | null = null): PastSession => ({
  sessionId,
  title,
  updatedAt: null,
});

describe("history list", () => {
  it("finds sessions by their title, whatever the case", () => {
    expect(matches(session("a", "Plot the Rainfall"), "  rain ")).toBe(true);
    expect(matches(session("a", "Plot the Rainfall"), "snow")).toBe(false);
    // Untitled sessions show for an empty search only.
    expect(matches(session("b"), "")).toBe(true);
    expect(matches(session("b"), "b")).toBe(false);
  });

  it("shows the first matching rows and says when more are loaded", () => {
    const entries = ["x1", "y", "x2", "x3"].map((t) => session(t, t));
    expect(shownRows(entries, "x", 2)).toEqual({ rows: [entries[0], entries[2]], hidden: true });
    expect(shownRows(entries, "x", 3).hidden).toBe(false);
  });

  it("adds a page without the sessions it holds already, up to its bound", () => {
    const added = addPage([session("a"), session("b")], [session("b"), session("c"), session("c")]);
    expect(added.map((s) => s.sessionId)).toEqual(["a", "b", "c"]);
    const many = Array.from({ length: MAX_ENTRIES + 5 }, (_, i) => session(`s${i}`));
    expect(addPage([], many)).toHaveLength(MAX_ENTRIES);
  });

  it("says when a session was used, relative to now", () => {
    const now = Date.parse("2026-12-02T10:00:00Z");
    const ago = (seconds: number): string => relativeTime(now - seconds * 1000, now, "en");
    expect(ago(5)).toBe("now");
    expect(ago(5 * 60)).toBe("5 minutes ago");
    expect(ago(26 * 3600)).toBe("yesterday");
    expect(ago(3 * 86_400)).toBe("3 days ago");
    expect(ago(400 * 86_400)).toBe("last year");
  });
});
