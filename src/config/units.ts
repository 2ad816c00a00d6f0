// Textual values of gateway.yaml that stand for numbers: durations, sizes and the listen
// address. Pure parsers that throw a message fit to show after "file:line:col: path: ".

const durationUnits: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

const sizeUnits: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

const durationPattern = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/;
const sizePattern = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b|b)?\s*$/i;

/**
 * Parses a duration into milliseconds. A number (or a bare numeric string) is seconds;
 * a string takes one unit: ms, s, m, h or d ("250ms", "30s", "5m", "1h").
 */
export function parseDuration(value: string | number): number {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value < 0) throw new Error(`invalid duration ${value}: must be a number of seconds ≥ 0`);
    return Math.round(value * 1000);
  }
  const match = durationPattern.exec(value);
  if (!match) {
    throw new Error(`invalid duration "${value}": write a number with one unit (ms, s, m, h, d), e.g. "30s" or "5m"`);
  }
  return Math.round(Number(match[1]) * durationUnits[match[2] ?? "s"]);
}

/**
 * Parses a size into bytes. A number (or a bare numeric string) is bytes; a string takes
 * one unit, case-insensitive: B, KB/MB/GB/TB (powers of 1000) or KiB/MiB/GiB/TiB (of 1024).
 */
export function parseSize(value: string | number): number {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value < 0) throw new Error(`invalid size ${value}: must be a number of bytes ≥ 0`);
    return Math.floor(value);
  }
  const match = sizePattern.exec(value);
  if (!match) {
    throw new Error(`invalid size "${value}": write a number with a unit such as "512KiB", "32MiB", "1GiB" or "10MB"`);
  }
  return Math.floor(Number(match[1]) * sizeUnits[(match[2] ?? "b").toLowerCase()]);
}

const datePattern = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Parses an ISO 8601 date ("2027-01-01", midnight UTC) or date-time
 * ("2027-01-01T00:00:00Z"; without a zone it is local time) into epoch milliseconds.
 */
export function parseDate(value: string): number {
  const ms = datePattern.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new Error(`invalid date "${value}": write an ISO 8601 date or date-time, e.g. 2027-01-01T00:00:00Z`);
  }
  return ms;
}

/** A parsed `server.listen` address. */
export interface ListenAddress {
  host: string;
  port: number;
}

/**
 * Parses "host:port" ("127.0.0.1:8080", "localhost:80", "0.0.0.0:0") or "[v6]:port"
 * ("[::1]:8080"). The host is returned without brackets.
 */
export function parseListen(value: string): ListenAddress {
  const match = /^(?:\[([0-9A-Fa-f:.%\w]+)\]|([^:\[\]\s]+)):(\d{1,5})$/.exec(value);
  if (!match) {
    throw new Error(`invalid listen address "${value}": write host:port, e.g. "127.0.0.1:8080" or "[::1]:8080"`);
  }
  const port = Number(match[3]);
  if (port > 65535) throw new Error(`invalid listen address "${value}": port ${port} is above 65535`);
  return { host: match[1] ?? match[2], port };
}

const relativeUnits: Record<string, number> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 };

/**
 * Epoch ms of a time as an operator writes one: an ISO 8601 date or date-time, or a span
 * back from `now` like `90m`, `24h`, `7d`, `2w`. Throws an Error otherwise.
 */
export function parseTimeOrSpan(value: string, now: number): number {
  const relative = /^(\d+(?:\.\d+)?)([smhdw])$/.exec(value);
  if (relative) return now - Math.round(Number(relative[1]) * relativeUnits[relative[2]]);
  return parseDate(value);
}
