// Lua fragments the Redis scripts share. Redis's Lua has only doubles (exact below 2^53)
// while money in nano-units reaches 2^63, so amounts travel as decimal strings and are
// compared here as two limbs of base 10^9: value = hi·10^9 + lo, 0 ≤ lo < 10^9. An int64
// has at most 19 digits, so hi stays below 10^10 even for sums of several values: exact.
// Writes never go through Lua numbers: HINCRBY takes the decimal string and Redis adds
// in exact 64-bit integers.

import type { Redis } from "ioredis";

/** `big(s)` parses, `add` sums, `lt` compares; exact for |value| < 2^63 and sums of a few. */
export const EXACT_LUA = `
local B = 1000000000
local function big(s)
  if not s or s == '' then return 0, 0 end
  local neg = string.sub(s, 1, 1) == '-'
  if neg then s = string.sub(s, 2) end
  local n = #s
  local hi, lo = 0, tonumber(s)
  if n > 9 then
    hi = tonumber(string.sub(s, 1, n - 9))
    lo = tonumber(string.sub(s, n - 8))
  end
  if neg then
    hi, lo = -hi, -lo
    if lo < 0 then lo = lo + B; hi = hi - 1 end
  end
  return hi, lo
end
local function add(ah, al, bh, bl)
  local h, l = ah + bh, al + bl
  if l >= B then l = l - B; h = h + 1 end
  return h, l
end
local function lt(ah, al, bh, bl)
  return ah < bh or (ah == bh and al < bl)
end
`;

/** Limbs of int64's largest value: amounts beyond it are clamped before they reach Lua. */
export const INT64_MAX = 2n ** 63n - 1n;

/** An amount as Redis's exact integer arithmetic accepts it. */
export function int64(nano: bigint): string {
  return (nano > INT64_MAX ? INT64_MAX : nano < -INT64_MAX ? -INT64_MAX : nano).toString();
}

/** A script run with EVALSHA (EVAL once when Redis does not know it yet): keys, then args
 * (preceded by the number of keys when the script was defined without one). */
export type Script = (...keysThenArgs: string[]) => Promise<unknown>;

/** Registers `lua` on the client (ioredis caches its SHA) and returns a typed caller. */
export function defineScript(client: Redis, name: string, numberOfKeys: number | undefined, lua: string): Script {
  client.defineCommand(name, { numberOfKeys, lua });
  const command = (client as unknown as Record<string, (...args: string[]) => Promise<unknown>>)[name];
  return (...keysThenArgs) => command.apply(client, keysThenArgs);
}

/** The sorted set of hits and the hit sequence of a limiter key (RedisLimiter's layout). */
export function limiterKeys(keyPrefix: string, key: string): [hits: string, seq: string] {
  return [`${keyPrefix}rl:${key}`, `${keyPrefix}rl-seq:${key}`];
}
