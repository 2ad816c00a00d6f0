// Request ids: UUIDv7-shaped, so they sort by time. The usage log is keyed by them, and a
// time-ordered key keeps its index growing at the end instead of splitting random pages.

import { randomBytes } from "node:crypto";

/** The response header every answer carries its request id in. */
export const requestIdHeader = "X-Gateway-Request-Id";

/** Per process: tells apart ids minted in the same millisecond by different gateways. */
const node = randomBytes(6).toString("hex");
let lastMs = 0;
let sequence = 0;
/** "tttttttt-tttt-" of the current millisecond: formatted once per millisecond, not per id. */
let prefix = "";

/** A new request id, e.g. "019a8f3e-5c2b-7001-8000-3fa2c1d9e0b4". */
export function newRequestId(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
    const ts = now.toString(16).padStart(12, "0");
    prefix = `${ts.slice(0, 8)}-${ts.slice(8)}-`;
  } else {
    sequence++; // same millisecond (or the clock stepped back): keep ordering by counter
  }
  const a = (0x7000 | (sequence & 0xfff)).toString(16);
  const b = (0x8000 | ((sequence >>> 12) & 0x3fff)).toString(16);
  return `${prefix}${a}-${b}-${node}`;
}
