// Token and account policy: status, expiry, the owning user, group access and the IP
// allowlist. Runs after auth, before anything costly.

import { isIP } from "node:net";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Accounts } from "../../state/interfaces.js";
import { accountStanding } from "../account-standing.js";
import { stateFailure } from "../state-failure.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";

/** A body larger than this that is still to arrive is not read for a token that cannot pay:
 * its money is checked first. Smaller ones cost little to read, and checking them here would
 * add a round trip on a shared store to every billed request. */
const CHECK_BEFORE_BODY_BYTES = 64 * 1024;

/**
 * @param accounts refuse tokens and users whose money is used up before anything else runs
 * @param admitsLater whether the request's handler reserves money: its reserve stage refuses
 * used-up money in the same round trip, so it is not asked here too, unless a large body
 * would have to be read first
 */
export function accessStage(accounts: Accounts, admitsLater: (ctx: RequestContext) => boolean): Stage<RequestContext> {
  // Synchronous checks first: a poll returns next() directly, sparing a promise.
  return (ctx, next) => {
    const token = ctx.token!;
    const user = accountStanding(ctx.runtime, token, Date.now());
    if (user instanceof GatewayError) throw user;
    ctx.user = user;
    ctx.group = ctx.runtime.groups.get(token.group);
    if (token.allowIp) {
      ctx.clientIp = clientIp(ctx);
      if (!token.allowIp(ctx.clientIp)) throw new GatewayError(errors.ipNotAllowed);
    }
    // Polls (the balance, a paid-for job) still answer when the money is gone.
    if (ctx.route?.poll || (admitsLater(ctx) && !largeBodyToCome(ctx))) return next();
    return accounts.checkNotExhausted(token, user).then(next, (err: unknown) => {
      // The model list costs nothing: it still answers while the accounts are unreachable.
      if (ctx.route?.handler === "models" && !(err instanceof GatewayError)) return next();
      throw stateFailure(err, "accounts");
    });
  };
}

/** Whether a body worth checking the money for is still to be read: chunked, or declared
 * larger than CHECK_BEFORE_BODY_BYTES, and not all here. The rate windows are left to the
 * reserve stage: a request refused here is not counted in them. */
function largeBodyToCome(ctx: RequestContext): boolean {
  if (ctx.upgrade || ctx.req.complete) return false;
  const length = ctx.req.headers["content-length"];
  if (length === undefined) return ctx.req.headers["transfer-encoding"] !== undefined;
  return Number(length) > CHECK_BEFORE_BODY_BYTES;
}

/** The client address: the socket's, or with trust_proxy the last X-Forwarded-For entry —
 * the one the trusted proxy appended. Earlier entries come from the client and can be forged. */
export function clientIp(ctx: RequestContext): string {
  if (ctx.runtime.server.trustProxy) {
    const forwarded = ctx.req.headers["x-forwarded-for"];
    const joined = Array.isArray(forwarded) ? forwarded.join(",") : forwarded;
    const last = joined?.split(",").at(-1)?.trim();
    if (last && isIP(last)) return last;
  }
  return ctx.req.socket.remoteAddress ?? "";
}
