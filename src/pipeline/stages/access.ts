// Token and account policy: status, expiry, the owning user, group access and the IP
// allowlist. Runs after auth, before anything costly. Its result (the account) is written
// once every check passed: a request refused here is counted in no rate window.

import { isIP } from "node:net";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { AccountDirectory } from "../../accounts/directory.js";
import type { User } from "../../runtime/types.js";
import type { Accounts } from "../../state/interfaces.js";
import { accountStanding } from "../account-standing.js";
import { stateFailure } from "../state-failure.js";
import { give, type Account, type Core, type Has, type Needs, type Stage } from "../context.js";
import type { Route } from "../routes.js";

/** A body larger than this that is still to arrive is not read for a token that cannot pay:
 * its money is checked first. Smaller ones cost little to read, and checking them here would
 * add a round trip on a shared store to every billed request. */
const CHECK_BEFORE_BODY_BYTES = 64 * 1024;

type In = Needs<"target" | "caller">;

/**
 * @param accounts refuse tokens and users whose money is used up before anything else runs
 * @param route a route whose admission reserves (or opens a session) refuses used-up money
 * in the same round trip, so it is not asked here too, unless a large body would have to be
 * read first; a poll (the balance, a paid-for job) still answers when the money is gone
 */
export function accessStage(accounts: Accounts, directory: AccountDirectory, route: Route): Stage<In, Has<"account">> {
  const admitsLater = route.admission === "reserve" || route.admission === "session";
  // Synchronous checks first: a poll returns next() directly, sparing a promise.
  return (ctx, next) => {
    const found = directory.user(ctx.runtime, ctx.caller.user);
    if (found instanceof Promise) {
      return found.then((user) => admit(ctx, user, next), (err: unknown) => {
        throw stateFailure(err, "accounts");
      });
    }
    return admit(ctx, found, next);
  };

  function admit<C extends In>(ctx: C, owner: User | undefined, next: (ctx: C & Has<"account">) => Promise<void>): Promise<void> {
    const token = ctx.caller;
    const user = accountStanding(token, owner, Date.now());
    if (user instanceof GatewayError) throw user;
    let ip: string | undefined;
    if (token.allowIp) {
      ip = clientIp(ctx);
      if (!token.allowIp(ip)) throw new GatewayError(errors.ipNotAllowed);
    }
    // The config's cross-references name only groups it declares: this is a guard, not a path.
    const group = ctx.runtime.groups.get(token.group);
    if (!group) throw new GatewayError(errors.groupNotAllowed, `The account level has no access to group '${token.group}'.`);
    const account: Account = { user, group, clientIp: ip };
    if (route.poll || (admitsLater && !largeBodyToCome(ctx))) return next(give(ctx, "account", account));
    return accounts.checkNotExhausted(token, user).then(() => next(give(ctx, "account", account)), (err: unknown) => {
      if (route.answersWithoutState && !(err instanceof GatewayError)) return next(give(ctx, "account", account));
      throw stateFailure(err, "accounts");
    });
  }
}

/** Whether a body worth checking the money for is still to be read: chunked, or declared
 * larger than CHECK_BEFORE_BODY_BYTES, and not all here. The rate windows are left to the
 * admit phase: a request refused here is not counted in them. */
function largeBodyToCome(ctx: Core): boolean {
  if (ctx.upgrade || ctx.req.complete) return false;
  const length = ctx.req.headers["content-length"];
  if (length === undefined) return ctx.req.headers["transfer-encoding"] !== undefined;
  return Number(length) > CHECK_BEFORE_BODY_BYTES;
}

/** The client address: the socket's, or with trust_proxy the last X-Forwarded-For entry —
 * the one the trusted proxy appended. Earlier entries come from the client and can be forged. */
export function clientIp(ctx: Core): string {
  if (ctx.runtime.server.trustProxy) {
    const forwarded = ctx.req.headers["x-forwarded-for"];
    const joined = Array.isArray(forwarded) ? forwarded.join(",") : forwarded;
    const last = joined?.split(",").at(-1)?.trim();
    if (last && isIP(last)) return last;
  }
  return ctx.req.socket.remoteAddress ?? "";
}
