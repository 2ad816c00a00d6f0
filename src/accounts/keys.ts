// Secrets the gateway makes: token keys and redemption codes. Each is random, shown once,
// and kept only as its sha256; a hint (its first and last characters) tells keys apart.

import { randomBytes } from "node:crypto";
import { sha256Hex } from "../config/hash.js";

/** Prefix of every key the gateway makes, so a leaked one is recognisable (and scannable). */
export const TOKEN_KEY_PREFIX = "sk-gw-";
/** Prefix of redemption codes. */
export const CODE_PREFIX = "gw-";

export interface MadeSecret {
  /** The secret itself: shown to the operator once. */
  readonly secret: string;
  /** sha256 hex: what is stored. */
  readonly hash: string;
}

/** A new token key: 32 random bytes (256 bits) in base64url after the prefix. */
export function makeTokenKey(): MadeSecret & { readonly hint: string } {
  const secret = TOKEN_KEY_PREFIX + randomBytes(32).toString("base64url");
  return { secret, hash: sha256Hex(secret), hint: keyHint(secret)! };
}

/** A new redemption code: 20 random bytes (160 bits) in base64url after the prefix. */
export function makeCode(): MadeSecret {
  const secret = CODE_PREFIX + randomBytes(20).toString("base64url");
  return { secret, hash: sha256Hex(secret) };
}

/** First 10 and last 4 characters of a key of at least 24; none of a shorter one. */
export function keyHint(key: string): string | undefined {
  return key.length >= 24 ? `${key.slice(0, 10)}…${key.slice(-4)}` : undefined;
}
