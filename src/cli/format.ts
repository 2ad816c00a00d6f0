// Input and output formats of the commands (`gateway usage`, `gateway logs`, …): where they
// write, time and count arguments, exact money, aligned tables and JSON lines.

import { formatNano } from "../billing/cost.js";
import { parseTimeOrSpan } from "../config/units.js";
import { UsageError } from "./args.js";

/** Where a command writes; tests inject one to capture output. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Clock for relative times like `24h`; default Date.now. */
  now?(): number;
}

/** The process's stdout and stderr. */
export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

/**
 * Epoch ms of a time argument: an ISO 8601 date or date-time, or a span back from `now`
 * like `90m`, `24h`, `7d`, `2w`. Throws UsageError naming the flag otherwise.
 */
export function parseTimeArg(flag: string, value: string, now: number): number {
  try {
    return parseTimeOrSpan(value, now);
  } catch {
    throw new UsageError(`--${flag} '${value}': write an ISO date or date-time (2026-01-31, 2026-01-31T12:00:00Z) or a span like 24h or 7d`);
  }
}

/** A positive integer argument; throws UsageError otherwise. */
export function parseCount(flag: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${flag} '${value}': expected a positive integer`);
  }
  return Number(value);
}

export { formatNano };

/**
 * One JSON object on one line. A bigint value is money in nano-units and is written as
 * an exact decimal number of the currency (never through a float); undefined is null.
 */
export function jsonLine(fields: Readonly<Record<string, unknown>>): string {
  const parts = Object.entries(fields).map(([key, value]) => {
    const text = typeof value === "bigint" ? formatNano(value) : JSON.stringify(value ?? null);
    return `${JSON.stringify(key)}:${text}`;
  });
  return `{${parts.join(",")}}\n`;
}

/** A table column: its header and whether values are right-aligned (numbers). */
export interface Column {
  readonly header: string;
  readonly right?: boolean;
}

/** Rows as an aligned text table with a header line, two spaces between columns. */
export function formatTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (columns[i].right ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join("  ")
      .trimEnd() + "\n";
  return line(columns.map((c) => c.header)) + rows.map(line).join("");
}
