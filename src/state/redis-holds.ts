// Lua of the limits a request holds from admission until it finishes, for the admit and
// finish scripts (redis-admit.ts). Concurrency: per key a sorted set of the request ids in
// flight (score = deadline). Tokens per minute: per key a hash of the tokens used in each
// second of the last minute (field = epoch second) and `held`, the estimates of requests in
// flight, each also a member "tokens:id" of a sorted set (score = deadline). Deadlines are
// Redis's clock + the reservation TTL, so what a crashed process held is swept like its
// reservations; usage seconds are the callers' clocks, as the rate windows'. The arithmetic
// is MinuteTokens' (minute-tokens.ts).

import { HELD_RETRY_MS, TOKENS_WINDOW_MS } from "./minute-tokens.js";

export const HOLDS_LUA = `
local TOKENS_WINDOW_S = ${TOKENS_WINDOW_MS / 1000}
local HELD_RETRY_MS = ${HELD_RETRY_MS}
local function slot_take(zset, id, max, clock, ttl)
  redis.call('ZREMRANGEBYSCORE', zset, '-inf', clock)
  if redis.call('ZCARD', zset) >= max then return 0 end
  redis.call('ZADD', zset, clock + ttl, id)
  redis.call('PEXPIRE', zset, ttl)
  return 1
end
local function tokens_unhold(hash, holds, member)
  if redis.call('ZREM', holds, member) == 1 then
    redis.call('HINCRBY', hash, 'held', -tonumber(string.match(member, '^(%d+):')))
  end
end
-- 0 when tokens fit (and are held), else ms until enough usage leaves the window.
local function tokens_hold(hash, holds, member, tokens, max, now, clock, ttl)
  local expired = redis.call('ZRANGEBYSCORE', holds, '-inf', clock, 'LIMIT', 0, 256)
  for _, m in ipairs(expired) do tokens_unhold(hash, holds, m) end
  local first = math.floor(now / 1000) - TOKENS_WINDOW_S + 1
  local flat = redis.call('HGETALL', hash)
  local need, seconds, used = tokens - max, {}, {}
  for i = 1, #flat, 2 do
    local field, v = flat[i], tonumber(flat[i + 1])
    if field == 'held' then
      need = need + v
    elseif tonumber(field) < first then
      redis.call('HDEL', hash, field)
    else
      local s = tonumber(field)
      need = need + v
      seconds[#seconds + 1] = s
      used[s] = v
    end
  end
  if need > 0 then
    table.sort(seconds)
    local freed = 0
    for _, s in ipairs(seconds) do
      freed = freed + used[s]
      if freed >= need then return (s + TOKENS_WINDOW_S) * 1000 - now end
    end
    return HELD_RETRY_MS
  end
  redis.call('HINCRBY', hash, 'held', tokens)
  redis.call('ZADD', holds, clock + ttl, member)
  redis.call('PEXPIRE', hash, ttl + TOKENS_WINDOW_S * 1000)
  redis.call('PEXPIRE', holds, ttl + TOKENS_WINDOW_S * 1000)
  return 0
end
local function tokens_count(hash, used, now, ttl)
  if used > 0 then
    redis.call('HINCRBY', hash, tostring(math.floor(now / 1000)), used)
    redis.call('PEXPIRE', hash, ttl + TOKENS_WINDOW_S * 1000)
  end
end
`;

/** A hold's sorted-set member: its tokens travel with it, for the sweep. */
export function holdMember(tokens: number, requestId: string): string {
  return `${tokens}:${requestId}`;
}

/** Key names of the holds, in one place. */
export function slotsKey(prefix: string, key: string): string {
  return `${prefix}slots:${key}`;
}

export function tokensKeys(prefix: string, key: string): [used: string, holds: string] {
  return [`${prefix}tpm:${key}`, `${prefix}tpm-held:${key}`];
}
