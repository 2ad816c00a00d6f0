// The sliding-window limiter on Redis, exact across processes: per key a sorted set of the
// hits inside the window (score = time, member = a per-key sequence number, unique per
// hit). One Lua script trims, counts, admits and sets the TTL, so two processes can never
// both take the last slot. Times are the callers' `now` (every gateway's clock, kept close
// by NTP): a window of seconds tolerates milliseconds of skew.

import type { Redis } from "ioredis";
import type { RateWindow } from "../runtime/types.js";
import type { Admission, Hit, Limiter } from "./interfaces.js";
import { defineScript, limiterKeys, type Script } from "./redis-lua.js";

/**
 * `take(hits, seq, now, perMs, max)`: {1, hit} admitted, or {0, retry-after ms}. Hits at or
 * before now − perMs have left the window (as in the in-memory sliding log). The sequence
 * outlives the window by an hour, so a late refund never removes a newer hit of the same
 * number.
 */
export const TAKE_LUA = `
local function take(hits, seq, now, per, max)
  redis.call('ZREMRANGEBYSCORE', hits, '-inf', now - per)
  local n = redis.call('ZCARD', hits)
  if n >= max then
    if max < 1 then return {0, per} end
    local oldest = redis.call('ZRANGE', hits, n - max, n - max, 'WITHSCORES')
    return {0, math.max(1, math.ceil(tonumber(oldest[2]) + per - now))}
  end
  local hit = redis.call('INCR', seq)
  redis.call('ZADD', hits, now, hit)
  redis.call('PEXPIRE', hits, per)
  redis.call('PEXPIRE', seq, per + 3600000)
  return {1, hit}
end
`;

const TAKE_SCRIPT = `${TAKE_LUA}
return take(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
`;

export class RedisLimiter implements Limiter {
  readonly #client: Redis;
  readonly #prefix: string;
  readonly #take: Script;

  constructor(client: Redis, keyPrefix: string) {
    this.#client = client;
    this.#prefix = keyPrefix;
    this.#take = defineScript(client, "gatewayLimiterTake", 2, TAKE_SCRIPT);
  }

  async take(key: string, window: RateWindow, now: number): Promise<Admission> {
    const [admitted, value] = (await this.#take(
      ...limiterKeys(this.#prefix, key), String(Math.floor(now)), String(window.perMs), String(window.max),
    )) as [number, number];
    return admitted === 1 ? { ok: true, hit: value } : { ok: false, retryAfterMs: value };
  }

  async refund(key: string, hit: Hit): Promise<void> {
    await this.#client.zrem(limiterKeys(this.#prefix, key)[0], String(hit));
  }
}
