// What a customer data endpoint is: who calls (the signed-in customer), what it is given,
// what it answers, and what it works with. routes.ts lists them.

import type { AccountService } from "../../../accounts/service.js";
import type { AccountStore } from "../../../accounts/store.js";
import type { Runtime } from "../../../runtime/types.js";
import type { Limiter, UsageLog } from "../../../state/interfaces.js";
import { answerOf } from "./answer.js";

/** Who the session is: the token a customer signed in with. */
export interface Customer { readonly token: string; readonly user?: string; readonly group: string }

export interface MeCall {
  readonly customer: Customer;
  readonly query: URLSearchParams;
  readonly body: unknown;
  /** Epoch ms the call is answered at. */
  readonly now: number;
  /** The request's id (X-Gateway-Request-Id), for the log; absent: none is logged. */
  readonly requestId?: string;
}

export interface MeAnswer {
  readonly status: number;
  readonly body: unknown;
  /** Extra headers (Retry-After on a 429, Cache-Control on an answer holding a key). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What the handlers work with, for the server's life. */
export interface MeDeps {
  /** Tokens (read, created, changed, revoked: audited), users' balances, redemptions. */
  readonly service: AccountService;
  /** The audit log: who disabled a token (a customer may re-enable only what they disabled). */
  readonly store: AccountStore;
  /** Spend reports and the request log. */
  readonly usageLog: UsageLog;
  /** The window on failed redemptions (shared with POST /v1/dashboard/redeem). */
  readonly limiter: Limiter;
  /** The current Runtime: groups, models, usage.timezone, console settings. */
  readonly live: () => Runtime;
}

export interface MeRoute {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Under /console/api/me, e.g. "/tokens/{name}"; a {param} matches one path segment. */
  readonly path: string;
  /** Never rejects: an error is answered in the catalogue's shape with its status. */
  readonly handle: (call: MeCall, deps: MeDeps, params: Record<string, string>) => Promise<MeAnswer>;
}

/** A route's handler as written: it may throw (GatewayError, InvalidField, NotFound, …). */
export type MeHandler = (call: MeCall, deps: MeDeps, params: Record<string, string>) => Promise<MeAnswer>;

/** A route whose thrown errors become their answers. */
export function meRoute(method: MeRoute["method"], path: string, handler: MeHandler): MeRoute {
  return Object.freeze({
    method, path,
    handle: (call: MeCall, deps: MeDeps, params: Record<string, string>) =>
      handler(call, deps, params).catch((err: unknown) => answerOf(err, call.requestId)),
  });
}
