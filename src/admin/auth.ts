// Who is calling the admin API: the Bearer key's sha256, compared in constant time with every
// key admin.keys declares, and whether that key holds the scope the route needs. The key
// itself is never logged, kept or repeated in an answer.

import { timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { sha256Hex } from "../config/hash.js";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { AdminKey, AdminScope } from "../runtime/types.js";

/** Asks for the key again: clients and curl show the realm. */
const challenge = { "www-authenticate": 'Bearer realm="gateway-admin"' };

/** The admin key a request carries; throws the 401 when it carries none or an unknown one. */
export function adminKeyOf(headers: IncomingHttpHeaders, keys: readonly AdminKey[]): AdminKey {
  const presented = bearer(headers.authorization);
  if (presented === undefined) throw new GatewayError(errors.missingAdminKey, undefined, { headers: challenge });
  const found = adminKeyFor(presented, keys);
  if (!found) throw new GatewayError(errors.invalidAdminKey, undefined, { headers: challenge });
  return found;
}

/** The declared admin key whose sha256 is the presented key's, or undefined (the console's
 * sign-in asks this of a secret that may be a token instead). */
export function adminKeyFor(presented: string, keys: readonly AdminKey[]): AdminKey | undefined {
  const hash = Buffer.from(sha256Hex(presented), "hex");
  let found: AdminKey | undefined;
  // Every key is compared, so the time taken says nothing about which one came close.
  for (const key of keys) {
    const declared = Buffer.from(key.keyHash, "hex");
    if (declared.length === hash.length && timingSafeEqual(declared, hash) && found === undefined) found = key;
  }
  return found;
}

/** Throws the 403 naming the missing scope when `key` lacks `scope`. */
export function requireScope(key: AdminKey, scope: AdminScope): void {
  if (key.scopes.has(scope)) return;
  throw new GatewayError(errors.adminScopeMissing,
    `The admin key '${key.name}' lacks the '${scope}' scope this request needs (it has: ${[...key.scopes].join(", ") || "none"}).`);
}

/** The key of `Authorization: Bearer <key>` (scheme case-insensitive), or undefined. */
function bearer(header: string | undefined): string | undefined {
  const m = header === undefined ? null : /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : undefined;
}
