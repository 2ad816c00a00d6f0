// The console's customer data endpoints, as data: method, path under /console/api/me, and a
// handler of (the signed-in customer, the query, the body) → a JSON answer. The console's
// shell mounts them behind its session check; nothing here reads a cookie or a socket.
// Every handler scopes what it reads and changes to the customer server-side: nothing in
// the query or the body can widen it.

import type { MeRoute } from "./route.js";
import { quickstartRoute } from "./quickstart.js";
import { redeemRoute } from "./redeem.js";
import { requestsRoute } from "./requests.js";
import { spendRoute } from "./spend.js";
import { tokenRoutes } from "./tokens.js";

export type { Customer, MeAnswer, MeCall, MeDeps, MeRoute } from "./route.js";

export const meRoutes: readonly MeRoute[] = Object.freeze([spendRoute, requestsRoute, ...tokenRoutes, redeemRoute, quickstartRoute]);
