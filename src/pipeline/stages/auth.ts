// Authenticates the access token from the header its protocol uses, compares it in
// constant time, and finds it by hash (O(1); the plaintext key is never stored).

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { AccountDirectory } from "../../accounts/directory.js";
import type { Protocol, Token } from "../../runtime/types.js";
import { sha256Hex } from "../../config/hash.js";
import { give, type Has, type Needs, type Stage } from "../context.js";
import { KEY_PROTOCOL } from "../key-protocol.js";
import { stateFailure } from "../state-failure.js";


/** Compares two equal-length strings in time independent of where they differ. */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** A token is visible ASCII only: surrounding whitespace or line breaks make it invalid. */
const tokenShape = /^[\x21-\x7e]{1,512}$/;

/** Where each protocol carries the token, first match wins. */
function presentedToken(ctx: Needs<"target">, protocol: Protocol): string | undefined {
  const h = ctx.req.headers;
  if (protocol === "anthropic" && h["x-api-key"] !== undefined) return String(h["x-api-key"]);
  if (protocol === "gemini") {
    if (h["x-goog-api-key"] !== undefined) return String(h["x-goog-api-key"]);
    const fromQuery = new URLSearchParams(ctx.query).get("key");
    if (fromQuery !== null) return fromQuery;
  }
  const auth = h.authorization;
  if (auth === undefined) return ctx.upgrade ? protocolToken(h["sec-websocket-protocol"]) : undefined;
  // "Bearer <token>": exactly one space; anything else is kept so it fails the shape check.
  return /^bearer /i.test(auth) ? auth.slice(7) : auth;
}

/** Browsers cannot set headers on a WebSocket: the token rides as a subprotocol. */
function protocolToken(header: string | undefined): string | undefined {
  for (const p of (header ?? "").split(",")) {
    const v = p.trim();
    if (v.startsWith(KEY_PROTOCOL)) return v.slice(KEY_PROTOCOL.length);
  }
  return undefined;
}

const headerHint: Record<Protocol, string> = {
  openai: "Send it as 'Authorization: Bearer <token>'.",
  anthropic: "Send it as 'x-api-key: <token>'.",
  gemini: "Send it as 'x-goog-api-key: <token>'.",
};

/** The auth phase: the caller is the token presented (gateway.yaml's or a stored one), or
 * the request is refused (401). */
export function authStage(directory: AccountDirectory): Stage<Needs<"target">, Has<"caller">> {
  // Synchronous checks: returning next() directly spares a promise per request.
  return (ctx, next) => {
    const protocol = ctx.target.protocol;
    const presented = presentedToken(ctx, protocol);
    if (presented === undefined || presented === "") {
      throw new GatewayError(errors.missingToken, `No access token was provided. ${headerHint[protocol]}`);
    }
    if (!tokenShape.test(presented)) throw new GatewayError(errors.invalidToken);
    const hash = sha256Hex(presented);
    const found = directory.token(ctx.runtime, hash);
    if (found instanceof Promise) {
      return found.then((token) => next(give(ctx, "caller", checked(hash, token))), (err: unknown) => {
        throw stateFailure(err, "accounts");
      });
    }
    return next(give(ctx, "caller", checked(hash, found)));
  };
}

/** The token, when its hash equals the presented key's (compared in constant time). */
function checked(hash: string, token: Token | undefined): Token {
  if (!token || !constantTimeEqual(hash, token.keyHash)) throw new GatewayError(errors.invalidToken);
  return token;
}
