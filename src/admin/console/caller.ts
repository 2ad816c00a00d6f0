// Who a console request acts as: a customer (a token, authenticated exactly as the API
// authenticates it: sha256 looked up, compared in constant time, refused when disabled,
// expired, revoked, its user disabled, or used from an address its allow_ips excludes) or an
// operator (a key admin.keys declares). A session is checked again on every call against the
// live token or key, so disabling, revoking or removing one ends its sessions at once.

import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { AccountDirectory } from "../../accounts/directory.js";
import { sha256Hex } from "../../config/hash.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { accountStanding } from "../../pipeline/account-standing.js";
import type { AdminKey, Runtime, Token, User } from "../../runtime/types.js";
import { adminKeyFor } from "../auth.js";
import type { SessionRecord } from "./session.js";

export interface Customer {
  readonly role: "customer";
  readonly token: Token;
  readonly user: User;
}

export interface Operator {
  readonly role: "operator";
  readonly key: AdminKey;
}

export type Caller = Customer | Operator;

/** What identifying a caller needs: the live config, the account cache, the client. */
export interface CallerContext {
  readonly runtime: Runtime;
  readonly directory: AccountDirectory;
  readonly req: IncomingMessage;
  readonly now: number;
}

/** A token's shape, as the API requires it: visible ASCII. */
const SECRET_SHAPE = /^[\x21-\x7e]{1,512}$/;

/** The caller a typed secret makes: an admin key, else a token that may be used now.
 * Undefined when it is neither; the token's own refusal (disabled, expired…) when it is one. */
export async function callerOfSecret(secret: string, c: CallerContext): Promise<Caller | GatewayError | undefined> {
  if (!SECRET_SHAPE.test(secret)) return undefined;
  const key = adminKeyFor(secret, c.runtime.admin?.keys ?? []);
  if (key) return { role: "operator", key };
  const hash = sha256Hex(secret);
  const token = await c.directory.token(c.runtime, hash);
  if (!token || !sameHash(hash, token.keyHash)) return undefined;
  return customerOf(token, c);
}

/** The caller a session is now, or the error that ends it. */
export async function callerOfSession(record: SessionRecord, c: CallerContext): Promise<Caller | GatewayError> {
  if (record.role === "operator") {
    const key = c.runtime.admin?.keys.find((k) => k.name === record.name && sameHash(k.keyHash, record.keyHash));
    return key ? { role: "operator", key } : new GatewayError(errors.consoleNotSignedIn, "The admin key of this session is no longer declared: sign in again.");
  }
  const token = await c.directory.token(c.runtime, record.keyHash);
  if (!token || token.name !== record.name) {
    return new GatewayError(errors.consoleNotSignedIn, "The token of this session was revoked or replaced: sign in again.");
  }
  return customerOf(token, c);
}

/** The token's standing now, as the access stage judges it. */
async function customerOf(token: Token, c: CallerContext): Promise<Customer | GatewayError> {
  const user = accountStanding(token, await c.directory.user(c.runtime, token.user), c.now);
  if (user instanceof GatewayError) return user;
  if (token.allowIp && !token.allowIp(clientAddress(c.req, c.runtime))) return new GatewayError(errors.ipNotAllowed);
  return { role: "customer", token, user };
}

/** The client's address: the socket's, or with server.trust_proxy the last X-Forwarded-For
 * entry (the one the trusted proxy appended), as the API reads it. */
export function clientAddress(req: IncomingMessage, runtime: Runtime): string {
  if (runtime.server.trustProxy) {
    const forwarded = req.headers["x-forwarded-for"];
    const last = (Array.isArray(forwarded) ? forwarded.join(",") : forwarded)?.split(",").at(-1)?.trim();
    if (last && isIP(last)) return last;
  }
  return req.socket.remoteAddress ?? "";
}

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}
