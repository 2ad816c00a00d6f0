// Which query parameters of the client reach the provider: an allow-list per protocol, so
// the gateway's own `key` (in any spelling: `?%6Bey=` decodes to it) and anything the
// gateway does not know (field masks, user projects, callbacks) never do.

import type { QueryAllowList } from "../protocols/passthrough.js";

/** The client's query rebuilt from `allowed`: parsed (percent-decoded) first, then each
 * allowed name once, with its first value when that value is allowed; "" when nothing is. */
export function forwardedQuery(query: string, allowed: QueryAllowList | undefined): string {
  if (query === "" || allowed === undefined || allowed.size === 0) return "";
  const params = new URLSearchParams(query);
  const out = new URLSearchParams();
  for (const [name, values] of allowed) {
    const value = params.get(name);
    if (value !== null && values.has(value)) out.append(name, value);
  }
  return out.toString();
}
