// The session routes: POST signs in with a token or an admin key, GET tells the page who
// is signed in (and its CSRF token, after a reload), DELETE signs out. Failed sign-ins are
// counted per client address in the state's limiter (shared by every process on Redis):
// each attempt takes a hit, a success gives it back, so only failures use the window.

import type { IncomingMessage, ServerResponse } from "node:http";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { RateWindow } from "../../runtime/types.js";
import type { Limiter } from "../../state/interfaces.js";
import { readJsonBody } from "../http.js";
import { sendApiJson } from "./answers.js";
import { callerOfSecret, clientAddress, type CallerContext } from "./caller.js";
import { clearedCookie, sessionCookie, type ConsoleSessions, type FoundSession } from "./session.js";

/** Failed sign-ins one address may make. */
export const SIGNIN_FAILURES: RateWindow = { max: 10, perMs: 60_000 };

/** What the page is told of a session. */
export function sessionAnswer(found: FoundSession): { role: string; name: string; csrf: string } {
  return { role: found.record.role, name: found.record.name, csrf: found.record.csrf };
}

/** Whether the connection is TLS, or a trusted proxy says the client's was: the cookie is
 * then Secure. */
export function overTls(req: IncomingMessage, trustProxy: boolean): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  return trustProxy && req.headers["x-forwarded-proto"] === "https";
}

export interface SignIn {
  readonly sessions: ConsoleSessions;
  readonly limiter: Limiter;
  /** Whether operators may sign in here (not on the main listener when admin.listen is set). */
  readonly operators: boolean;
}

/** POST /console/api/session {secret}. */
export async function signIn(c: CallerContext, res: ServerResponse, s: SignIn): Promise<void> {
  const { req, runtime } = c;
  // A form of another site cannot send JSON without asking first: no login CSRF.
  if (!/^application\/json\b/i.test(req.headers["content-type"] ?? "")) {
    throw new GatewayError(errors.invalidJson, "Send the sign-in as application/json: {\"secret\": \"…\"}.");
  }
  const body = await readJsonBody(req, runtime.server);
  const secret = (body as { secret?: unknown } | null)?.secret;
  if (typeof secret !== "string" || secret === "") throw new GatewayError(errors.invalidParameter, "secret: must be the token or admin key, a string");
  const limitKey = `console:signin:${clientAddress(req, runtime)}`;
  const take = await s.limiter.take(limitKey, SIGNIN_FAILURES, c.now);
  if (!take.ok) {
    const seconds = Math.max(1, Math.ceil(take.retryAfterMs / 1000));
    throw new GatewayError(errors.rateLimited, `Too many failed sign-ins from this address: try again in ${seconds} s.`, { headers: { "retry-after": String(seconds) } });
  }
  const caller = await callerOfSecret(secret, c);
  if (caller instanceof GatewayError) throw caller;
  if (caller === undefined) throw new GatewayError(errors.consoleSignInRefused);
  await s.limiter.refund(limitKey, take.hit);
  if (caller.role === "operator" && !s.operators) throw new GatewayError(errors.consoleOperatorsElsewhere);
  // Signing in again replaces this browser's session rather than leaving the old one alive.
  const previous = await s.sessions.find(req.headers);
  if (previous) await s.sessions.end(previous.id);
  const found = await s.sessions.create(caller.role === "operator"
    ? { role: "operator", name: caller.key.name, keyHash: caller.key.keyHash, scopes: [...caller.key.scopes] }
    : { role: "customer", name: caller.token.name, keyHash: caller.token.keyHash, scopes: [] }, c.now);
  sendApiJson(res, 200, sessionAnswer(found), { "set-cookie": sessionCookie(found.id, overTls(req, runtime.server.trustProxy)) });
}

/** DELETE /console/api/session: ends the session and clears its cookie. */
export async function signOut(req: IncomingMessage, res: ServerResponse, found: FoundSession, sessions: ConsoleSessions, trustProxy: boolean): Promise<void> {
  await sessions.end(found.id);
  sendApiJson(res, 200, { signed_out: true }, { "set-cookie": clearedCookie(overTls(req, trustProxy)) });
}
