// Percentiles over raw samples (autocannon's own histogram rounds to whole milliseconds,
// too coarse for a 1–2 ms budget) and number formatting for the tables.

/** Sorted copy of the samples, for repeated percentile reads. */
export function sorted(samples: ArrayLike<number>): Float64Array {
  return Float64Array.from(samples).sort();
}

/** Nearest-rank percentile (p in 0..100) of sorted samples; NaN when empty. */
export function percentile(s: Float64Array, p: number): number {
  if (s.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

/** Median of a few values (the mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export const ms = (v: number, digits = 2): string => (Number.isFinite(v) ? v.toFixed(digits) : "n/a");
export const signedMs = (v: number, digits = 2): string => (Number.isFinite(v) ? `${v >= 0 ? "+" : ""}${v.toFixed(digits)}` : "n/a");
export const int = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a");

/** A markdown table from a header row and body rows. */
export function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}
