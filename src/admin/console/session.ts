// Console sessions: a random 256-bit id in an HttpOnly, SameSite=Strict cookie; the record
// lives in the state's KeyedStore (shared by every process on Redis) under the id's sha256,
// with an idle TTL. It holds who signed in and the CSRF token, never the secret they typed.

import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { sha256Hex } from "../../config/hash.js";
import type { KeyedStore } from "../../state/interfaces.js";

export const SESSION_COOKIE = "gateway_console";
/** A session unused this long ends. */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
const KEY_PREFIX = "console:session:";

/** Who a session is, as stored. `keyHash` is the sha256 the token or admin key is stored
 * under (what the gateway keeps anyway), so the session can be checked against the live one. */
export interface SessionRecord {
  readonly role: "customer" | "operator";
  /** The token's name, or the admin key's. */
  readonly name: string;
  readonly keyHash: string;
  /** The admin key's scopes when it signed in (the live key's are what count). */
  readonly scopes: readonly string[];
  readonly csrf: string;
  readonly createdAt: number;
}

/** A session found by its cookie. */
export interface FoundSession {
  readonly id: string;
  readonly record: SessionRecord;
}

export class ConsoleSessions {
  constructor(readonly keyed: KeyedStore, readonly idleMs: number = SESSION_IDLE_MS) {}

  /** Starts a session for `who`; the id goes into the cookie, only its hash into the store. */
  async create(who: Omit<SessionRecord, "csrf" | "createdAt">, now: number): Promise<FoundSession> {
    const id = randomBytes(32).toString("base64url");
    const record: SessionRecord = { ...who, csrf: randomBytes(32).toString("base64url"), createdAt: now };
    await this.keyed.set(storeKey(id), JSON.stringify(record), this.idleMs);
    return { id, record };
  }

  /** The session the request's cookie names (its idle TTL restarted), or undefined. */
  async find(headers: IncomingHttpHeaders): Promise<FoundSession | undefined> {
    const id = sessionIdOf(headers.cookie);
    if (id === undefined) return undefined;
    const text = await this.keyed.get(storeKey(id), { refreshTtlMs: this.idleMs });
    return text === undefined ? undefined : { id, record: JSON.parse(text) as SessionRecord };
  }

  async end(id: string): Promise<void> {
    await this.keyed.delete(storeKey(id));
  }
}

function storeKey(id: string): string {
  return KEY_PREFIX + sha256Hex(id);
}

/** The session id of a Cookie header, when it has one of the right shape. */
export function sessionIdOf(cookie: string | undefined): string | undefined {
  if (!cookie) return undefined;
  for (const part of cookie.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (/^[A-Za-z0-9_-]{43}$/.test(value)) return value;
  }
  return undefined;
}

/** The Set-Cookie of a new session (Secure when the request came over TLS). */
export function sessionCookie(id: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/console${secure ? "; Secure" : ""}`;
}

/** The Set-Cookie that removes the session's cookie. */
export function clearedCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/console; Max-Age=0${secure ? "; Secure" : ""}`;
}

/** Whether a request's x-csrf-token is the session's (compared in constant time). */
export function csrfMatches(headers: IncomingHttpHeaders, record: SessionRecord): boolean {
  const sent = headers["x-csrf-token"];
  if (typeof sent !== "string") return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(record.csrf);
  return a.length === b.length && timingSafeEqual(a, b);
}
