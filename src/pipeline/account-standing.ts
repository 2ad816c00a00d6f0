// Whether a token and its user may be used now: the access stage asks it of each request, and
// a realtime session again at each response (the config may have changed since it opened).

import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Token, User } from "../runtime/types.js";

/** The token's user, or the error that refuses the token: disabled, expired, its user
 * disabled or gone, or its group not one its user may use. `user` is the token's user as
 * the directory found it (gateway.yaml's or a stored one). */
export function accountStanding(token: Token, user: User | undefined, now: number): User | GatewayError {
  if (!token.active) return new GatewayError(errors.tokenDisabled);
  if (token.expiresAt !== undefined && token.expiresAt <= now) return new GatewayError(errors.tokenExpired);
  if (!user || !user.active) return new GatewayError(errors.userDisabled);
  if (!user.groups.has(token.group)) {
    return new GatewayError(errors.groupNotAllowed, `The account level has no access to group '${token.group}'.`);
  }
  return user;
}
