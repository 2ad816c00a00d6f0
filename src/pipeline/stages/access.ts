// Token and account policy: status, expiry, the owning user, group access and the IP
// allowlist. Runs after auth, before anything costly.

import { isIP } from "node:net";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";

export function accessStage(): Stage<RequestContext> {
  return async (ctx, next) => {
    const token = ctx.token!;
    if (!token.active) throw new GatewayError(errors.tokenDisabled);
    if (token.expiresAt !== undefined && token.expiresAt <= Date.now()) throw new GatewayError(errors.tokenExpired);
    const user = ctx.runtime.users.get(token.user);
    if (!user || !user.active) throw new GatewayError(errors.userDisabled);
    if (!user.groups.has(token.group)) {
      throw new GatewayError(errors.groupNotAllowed, `The account level has no access to group '${token.group}'.`);
    }
    ctx.user = user;
    ctx.group = ctx.runtime.groups.get(token.group);
    if (token.allowIp) {
      ctx.clientIp = clientIp(ctx);
      if (!token.allowIp(ctx.clientIp)) throw new GatewayError(errors.ipNotAllowed);
    }
    await next();
  };
}

/** The client address: the socket's, or with trust_proxy the first X-Forwarded-For entry. */
export function clientIp(ctx: RequestContext): string {
  if (ctx.runtime.server.trustProxy) {
    const forwarded = ctx.req.headers["x-forwarded-for"];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim();
    if (first && isIP(first)) return first;
  }
  return ctx.req.socket.remoteAddress ?? "";
}
