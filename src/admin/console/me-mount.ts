// The customer data endpoints (me/routes.ts) at /console/api/me and under it: a path matched to its
// route ({param} is one path segment, decoded), the session's customer handed over as the
// routes take it (names, never the token's key), and nothing else of the request.

import type { Customer } from "./caller.js";
import { meRoutes, type Customer as MeCustomer, type MeRoute } from "./me/routes.js";

/** The customer as the data endpoints scope by it: their token, user and group names. */
export function meCustomer(caller: Customer): MeCustomer {
  const { name, user, group } = caller.token;
  return user ? { token: name, user, group } : { token: name, group };
}

/** The route for `sub` (the path after /console/api/me) and `method`, with its parameters;
 * `allow` lists the methods the path takes when none is `method`'s; undefined: no such path. */
export function meRouteFor(sub: string, method: string): { route?: MeRoute; params: Record<string, string>; allow: string[] } | undefined {
  let found: { route?: MeRoute; params: Record<string, string>; allow: string[] } | undefined;
  for (const route of meRoutes) {
    const params = matched(route.path, sub);
    if (params === undefined) continue;
    found ??= { params, allow: [] };
    found.allow.push(route.method);
    if (route.method === method) return { route, params, allow: found.allow };
  }
  return found;
}

function matched(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split("/");
  const have = path.split("/");
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const name = /^\{(\w+)\}$/.exec(want[i])?.[1];
    if (name === undefined) {
      if (want[i] !== have[i]) return undefined;
      continue;
    }
    if (have[i] === "") return undefined;
    try {
      params[name] = decodeURIComponent(have[i]);
    } catch {
      return undefined; // a malformed escape names nothing
    }
  }
  return params;
}
