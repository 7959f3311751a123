// The history list's logic, apart from its DOM (history.ts): which past sessions show for
// a search, how pages add up, and "yesterday" for a time.

import type { PastSession } from "./api";

/** Rows shown at first, and added by each "More". */
export const PAGE_ROWS = 20;
/** Pages a search fetches by itself to fill its rows; "More" goes on past them. */
export const SEARCH_PAGES = 5;
/** Sessions the list holds at most, whatever the agent keeps. */
export const MAX_ENTRIES = 2000;

/** Whether the session's title holds `query` (case- and spacing-insensitive). */
export function matches(session: PastSession, query: string): boolean {
  const wanted = query.trim().toLocaleLowerCase();
  return wanted === "" || (session.title ?? "").toLocaleLowerCase().includes(wanted);
}

/** `entries` and then `page`'s sessions not among them (a new session shifts the agent's
 * pages), up to MAX_ENTRIES. */
export function addPage(
  entries: readonly PastSession[],
  page: readonly PastSession[],
): PastSession[] {
  const known = new Set(entries.map((s) => s.sessionId));
  const all = [...entries];
  for (const session of page) {
    if (known.has(session.sessionId)) continue;
    known.add(session.sessionId);
    all.push(session);
  }
  return all.slice(0, MAX_ENTRIES);
}

export interface Shown {
  rows: PastSession[];
  /** More matching sessions are loaded than shown. */
  hidden: boolean;
}

/** The first `count` sessions that match `query`. */
export function shownRows(entries: readonly PastSession[], query: string, count: number): Shown {
  const found = entries.filter((s) => matches(s, query));
  return { rows: found.slice(0, count), hidden: found.length > count };
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 86_400],
  ["month", 30 * 86_400],
  ["week", 7 * 86_400],
  ["day", 86_400],
  ["hour", 3600],
  ["minute", 60],
];

/** `then` (ms) as seen at `now`: "5 minutes ago", "yesterday", "last week". */
export function relativeTime(then: number, now: number, locale?: string): string {
  const format = new Intl.RelativeTimeFormat(locale, { numeric: "auto" });
  const seconds = (then - now) / 1000;
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  }
  return format.format(0, "second");
}
