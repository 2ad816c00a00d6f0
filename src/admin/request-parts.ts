// Small readings of a request the routes share: the page of a list, the version a change is
// based on (`version` or If-Match), a header's one value, and the ETag of an answer.

import type { IncomingHttpHeaders } from "node:http";
import { InvalidField } from "../accounts/money-input.js";
import { parseTimeOrSpan } from "../config/units.js";

/** The prefix/after/limit of a name-ordered list. */
export function pageQuery(query: Readonly<Record<string, string | number | undefined>>): { prefix?: string; after?: string; limit?: number } {
  return {
    ...(query.prefix === undefined ? {} : { prefix: String(query.prefix) }),
    ...(query.after === undefined ? {} : { after: String(query.after) }),
    ...(query.limit === undefined ? {} : { limit: Number(query.limit) }),
  };
}

/** A header's value (the first, when repeated), or undefined. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The version a change is based on: the body's `version`, or If-Match (`"3"`, `W/"3"` or 3;
 * `*` means any). Both given must agree. Undefined: the change applies to whatever is there.
 */
export function expectedVersion(bodyVersion: number | undefined, headers: IncomingHttpHeaders): number | undefined {
  const header = headerValue(headers, "if-match")?.trim();
  let fromHeader: number | undefined;
  if (header !== undefined && header !== "*") {
    const m = /^(?:W\/)?"?(\d{1,15})"?$/.exec(header);
    if (!m) throw new InvalidField("If-Match", "must be a version from an ETag, such as \"3\"");
    fromHeader = Number(m[1]);
  }
  if (bodyVersion !== undefined && fromHeader !== undefined && bodyVersion !== fromHeader) {
    throw new InvalidField("version", `is ${bodyVersion} but If-Match says ${fromHeader}: send one, or the same in both`);
  }
  return bodyVersion ?? fromHeader;
}

/** The ETag header of a versioned resource (none for gateway.yaml's, which have no version). */
export function etagOf(version: number | undefined): Record<string, string> {
  return version === undefined ? {} : { etag: `"${version}"` };
}

/** How a time parameter is written (the document says it). */
export const timeText = "An ISO date or date-time (2026-01-31, 2026-01-31T12:00:00Z) or a span back from now (24h, 7d).";

/** A time parameter as epoch ms (undefined when absent); a bad one is refused naming it. */
export function timeParam(field: string, value: string | number | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  try {
    return parseTimeOrSpan(String(value), now);
  } catch {
    throw new InvalidField(field, `must be ${timeText.charAt(0).toLowerCase()}${timeText.slice(1, -1)}`);
  }
}
