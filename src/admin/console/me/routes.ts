// The console's customer data endpoints, as data: method, path under /console/api/me, and a
// handler of (the signed-in customer, the query, the body) → a JSON answer. The console's
// shell mounts them behind its session check; nothing here reads a cookie or a socket.
// Every handler scopes what it reads and changes to the customer server-side (their user's
// data, or their token's when it has no user): nothing in the query or the body can widen it.
//
//   GET    (none)                the overview: balance, reserved, spent (as the CLI shows them)
//   GET    /spend?days=30        spend per day (usage.timezone, oldest first) and per model
//   GET    /requests?limit&before&id   own requests, newest first, `next` to page on
//   GET    /tokens?after&limit   the user's tokens (hints, never keys), customer_tokens flag
//   POST   /tokens {name, quota?, expires?}          ┐ only with console.customer_tokens,
//   PATCH  /tokens/{name} {quota?, expires?, status?} │ audited as token:<name>
//   DELETE /tokens/{name}                             ┘
//   POST   /redeem {code}        as POST /v1/dashboard/redeem
//   GET    /quickstart           callable models and SDK snippets per protocol

import type { MeRoute } from "./route.js";
import { overviewRoute } from "../overview.js";
import { quickstartRoute } from "./quickstart.js";
import { redeemRoute } from "./redeem.js";
import { requestsRoute } from "./requests.js";
import { spendRoute } from "./spend.js";
import { tokenRoutes } from "./tokens.js";

export type { Customer, MeAnswer, MeCall, MeDeps, MeRoute } from "./route.js";

export const meRoutes: readonly MeRoute[] = Object.freeze([overviewRoute, spendRoute, requestsRoute, ...tokenRoutes, redeemRoute, quickstartRoute]);
