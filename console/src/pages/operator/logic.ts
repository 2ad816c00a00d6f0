// The operator pages' pure logic, kept apart from Preact so node:test can hold it: the
// usage report's query and its CSV link, server-side paging by cursor, and chart scaling.

/** What the usage report groups by (the admin API's `by`). */
export const USAGE_DIMENSIONS = ["channel", "key", "user", "token", "model", "group", "day"] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

/** The report's query as the page holds it (since/until as typed: a date or a span like 7d). */
export interface UsageQuery {
  readonly by: UsageDimension;
  readonly since?: string;
  readonly until?: string;
  readonly timezone?: string;
}

/** The query string of a usage report: empty fields left out, timezone only with by=day
 * (the API refuses it otherwise). */
export function usageSearch(q: UsageQuery, format?: "csv"): string {
  const params = new URLSearchParams({ by: q.by });
  const since = q.since?.trim();
  const until = q.until?.trim();
  if (since) params.set("since", since);
  if (until) params.set("until", until);
  if (q.by === "day" && q.timezone) params.set("timezone", q.timezone);
  if (format) params.set("format", format);
  return params.toString();
}

/** The console's path of the same report as a CSV download (the session cookie's Path is
 * /console, so a plain link carries it). */
export function usageCsvHref(q: UsageQuery): string {
  return `/console/api/admin/usage?${usageSearch(q, "csv")}`;
}

/** Where a paged list stands: the cursor of every page shown so far, the first's being
 * undefined; the last is the current page's. */
export type Cursors = readonly (string | undefined)[];

export const FIRST_PAGE: Cursors = [undefined];

export function currentCursor(c: Cursors): string | undefined {
  return c[c.length - 1];
}

/** The cursors after moving to the page `next` names. */
export function nextPage(c: Cursors, next: string): Cursors {
  return [...c, next];
}

/** The cursors after moving back one page (the first stays the first). */
export function previousPage(c: Cursors): Cursors {
  return c.length > 1 ? c.slice(0, -1) : c;
}

/** A list's path with its filters, page size and cursor (`after` or `before`, as the
 * admin API names it for that list); empty filters left out. */
export function listPath(base: string, filters: Readonly<Record<string, string | undefined>>, limit: number,
  cursorName: "after" | "before", cursor: string | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v !== undefined && v.trim() !== "") params.set(k, v.trim());
  params.set("limit", String(limit));
  if (cursor !== undefined) params.set(cursorName, cursor);
  return `${base}?${params}`;
}

/** A chart's vertical scale: a round top at or above the largest value (1, 2 or 5 × 10^n),
 * and the height in pixels of a value. Zero or no values still give a top of 1. */
export interface Scale {
  readonly top: number;
  readonly height: (value: number) => number;
}

export function niceTop(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

export function scale(values: readonly number[], pixels: number): Scale {
  const top = niceTop(Math.max(0, ...values));
  return { top, height: (v) => (Math.max(0, v) / top) * pixels };
}

/** Requests per second over a minute, to 2 decimals (a display figure, not money). */
export function perSecond(requestsInMinute: number): string {
  return (requestsInMinute / 60).toFixed(2);
}

/** A key's state as a person reads it. */
export function keyStateText(state: string): string {
  switch (state) {
    case "in_rotation": return "In rotation";
    case "cooling_down": return "Cooling down";
    case "taken_out": return "Taken out";
    default: return "Unknown";
  }
}

/** A batch's codes as the text file the page offers: one code a line. */
export function codesText(codes: readonly string[]): string {
  return codes.length === 0 ? "" : `${codes.join("\n")}\n`;
}

/** An error rate (0 to 1, or null) as a percentage with 2 decimals, or "—". */
export function ratePercent(rate: number | null | undefined): string {
  return rate === null || rate === undefined ? "—" : `${(rate * 100).toFixed(2)} %`;
}

/** The part of the admin API's OpenAPI document the pages read to learn what this gateway
 * offers (an endpoint, a query parameter), so they show only what works. */
export interface ApiDocument {
  readonly paths?: Readonly<Record<string, Readonly<Record<string, { readonly parameters?: readonly { readonly name: string; readonly in: string }[] }>>>>;
}

/** Whether the document lists `method path` (a path as the API writes it, /admin/v1/…),
 * and, given `query`, that query parameter of it. */
export function offers(doc: ApiDocument, method: string, path: string, query?: string): boolean {
  const op = doc.paths?.[path]?.[method.toLowerCase()];
  if (op === undefined) return false;
  return query === undefined || (op.parameters ?? []).some((p) => p.in === "query" && p.name === query);
}
