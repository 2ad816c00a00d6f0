// The customer's own data under /console/api/me, as a table: each route gets the session's
// customer (token and user, re-checked on this call) and answers JSON. Nothing a client
// sends widens what it sees: a route reads only the customer it is handed.

import type { IncomingHttpHeaders } from "node:http";
import type { AccountDirectory } from "../../accounts/directory.js";
import type { AccountService } from "../../accounts/service.js";
import type { Runtime } from "../../runtime/types.js";
import type { UsageLog } from "../../state/interfaces.js";
import type { Customer } from "./caller.js";
import { customerOverview } from "./overview.js";

/** What the customer routes work with, for the server's life. */
export interface CustomerDeps {
  readonly service: AccountService;
  readonly usageLog: UsageLog;
  readonly directory: AccountDirectory;
}

/** One call, the session checked: its customer, the query, the JSON body (non-GET only). */
export interface CustomerCall {
  readonly customer: Customer;
  readonly query: URLSearchParams;
  readonly body: unknown;
  readonly headers: IncomingHttpHeaders;
  readonly runtime: Runtime;
  readonly deps: CustomerDeps;
}

export interface CustomerRoute {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  /** The exact path, e.g. /console/api/me. */
  readonly path: string;
  readonly handle: (call: CustomerCall) => Promise<{ readonly status: number; readonly body: unknown }>;
}

export const customerRoutes: readonly CustomerRoute[] = [
  {
    method: "GET", path: "/console/api/me",
    async handle({ customer, deps }) {
      return { status: 200, body: await customerOverview(customer, deps.service) };
    },
  },
];
