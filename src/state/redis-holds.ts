// Lua of the limits a request holds from admission until it finishes, for the admit and
// finish scripts (redis-admit.ts). Concurrency: per key a sorted set of the request ids in
// flight (score = deadline). Budgets (tokens per minute, and budgets in money or tokens
// over a rolling window or a calendar period): per key a hash of what was used in each
// bucket (field = bucket number; a calendar period has one, "0"), `held`, the estimates of
// requests in flight, each also a member "amount:id" of a sorted set (score = deadline),
// and `seeded` once a budget that is seeded had the usage log's past added. Deadlines are
// Redis's clock + the reservation TTL, so what a crashed process held is swept like its
// reservations; buckets are the callers' clocks, as the rate windows'. The arithmetic is
// BudgetCounters' (budget-counters.ts).

import { HELD_RETRY_MS, MINUTE } from "./budget-counters.js";
import type { BudgetWindow } from "./interfaces.js";

export const HOLDS_LUA = `
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
-- How long a budget's keys live: a rolling window past its last use, a period past its end.
local function budget_life(now, ttl, bucket_ms, buckets, period_end)
  if period_end > 0 then return math.max(period_end - now, 0) + ttl end
  return ttl + bucket_ms * buckets
end
-- 0 when the amount fits (and is held), -1 when the budget must first be seeded, else ms
-- until enough usage leaves the window (the period's end for a calendar budget).
local function tokens_hold(hash, holds, member, amount, max, now, clock, ttl, bucket_ms, buckets, period_end, seeds)
  if seeds == 1 and redis.call('HEXISTS', hash, 'seeded') == 0 then return -1 end
  local expired = redis.call('ZRANGEBYSCORE', holds, '-inf', clock, 'LIMIT', 0, 256)
  for _, m in ipairs(expired) do tokens_unhold(hash, holds, m) end
  local first = math.floor(now / bucket_ms) - buckets + 1
  local flat = redis.call('HGETALL', hash)
  local need, bucket_list, used = amount - max, {}, {}
  for i = 1, #flat, 2 do
    local field, v = flat[i], tonumber(flat[i + 1])
    if field == 'held' then
      need = need + v
    elseif field ~= 'seeded' then
      local b = tonumber(field)
      if period_end == 0 and b < first then
        redis.call('HDEL', hash, field)
      else
        need = need + v
        bucket_list[#bucket_list + 1] = b
        used[b] = v
      end
    end
  end
  if need > 0 then
    table.sort(bucket_list)
    local freed = 0
    for _, b in ipairs(bucket_list) do
      freed = freed + used[b]
      if freed >= need then
        if period_end > 0 then return period_end - now end
        return (b + buckets) * bucket_ms - now
      end
    end
    return HELD_RETRY_MS
  end
  local life = budget_life(now, ttl, bucket_ms, buckets, period_end)
  redis.call('HINCRBY', hash, 'held', amount)
  redis.call('ZADD', holds, clock + ttl, member)
  redis.call('PEXPIRE', hash, life)
  redis.call('PEXPIRE', holds, life)
  return 0
end
local function tokens_count(hash, used, now, ttl, bucket_ms, buckets, period_end)
  if used > 0 then
    local bucket = '0'
    if period_end == 0 then bucket = tostring(math.floor(now / bucket_ms)) end
    redis.call('HINCRBY', hash, bucket, used)
    redis.call('PEXPIRE', hash, budget_life(now, ttl, bucket_ms, buckets, period_end))
  end
end
-- Adds the usage log's past (pairs of bucket and amount from ARGV[first]) once.
local function budget_seed(hash, now, ttl, bucket_ms, buckets, period_end, first, n)
  if redis.call('HEXISTS', hash, 'seeded') == 1 then return 0 end
  for i = 0, n - 1 do
    local b, v = ARGV[first + 2 * i], tonumber(ARGV[first + 2 * i + 1])
    if period_end > 0 then b = '0' end
    if v > 0 then redis.call('HINCRBY', hash, b, v) end
  end
  redis.call('HSET', hash, 'seeded', '1')
  redis.call('PEXPIRE', hash, budget_life(now, ttl, bucket_ms, buckets, period_end))
  return 1
end
`;

/** tokens_per_minute's window, as the scripts are told it. */
const MINUTE_ARGS: readonly string[] = [String(MINUTE.bucketMs), String(MINUTE.buckets), "0", "0"];

/** A budget's window as the scripts' four arguments: bucket ms, buckets, period end, seeds. */
export function windowArgs(window: BudgetWindow | undefined): readonly string[] {
  if (!window) return MINUTE_ARGS;
  return [String(window.bucketMs), String(window.buckets), String(window.periodEndMs ?? 0), window.seed ? "1" : "0"];
}

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
