// The hot path in one round trip each way: a request's rate windows, concurrency slots,
// tokens-per-minute holds and pre-deduction in one Lua script, all or nothing; and its
// settlement, holds replaced by the tokens really used and slots freed, in another.
// Windows are taken first (a refused request is a 429 before money is looked at, as the
// stages order it); when a limit refuses, or the money does not fit, what the script took
// is given back. Keys and members are the ones RedisLimiter and RedisAccounts use, so
// their refund, settle and release apply unchanged. The Admitter of a Redis store.

import type { Redis } from "ioredis";
import type { AdmitRequest, AdmitResult, Admitter, Finish, LimitKind, TokenBudgetTake } from "./interfaces.js";
import { RESERVE_FN_LUA, SETTLE_FN_LUA, UNSEEDED, type RedisAccounts, type ReserveReply } from "./redis-accounts.js";
import { HOLDS_LUA, holdMember, slotsKey, tokensKeys, windowArgs } from "./redis-holds.js";
import type { BudgetSeeder } from "./budget-seed.js";
import { usedBy } from "./budget-counters.js";
import type { RedisLease } from "./redis-leases.js";
import { batchedLua, defineScript, ScriptBatch } from "./redis-lua.js";
import { TAKE_LUA } from "./redis-limiter.js";

/**
 * KEYS: the five of reserve, then hits and sequence of each window, the set of each slot
 * limit, used and holds of each budget, then this process's registry (redis-leases.ts),
 * where an admitted request records what it holds.
 * ARGV: the five of reserve (ARGV[3] is the ttl), now, the number of windows, slot limits
 * and budgets, the request id, then perMs and max of each window, max of each slot limit,
 * max, amount, bucket ms, buckets, period end and seeds (1 or 0) of each budget.
 * Reply: {'limited', kind, index, retry-after}, {'unseeded', index} (that budget's counter
 * needs the usage log's past first), or {'money', reserve's reply...}, or {'ok', hit of
 * each window...}.
 */
const ADMIT_ONE_LUA = `
local now = tonumber(ARGV[6])
local nw, ns, nb = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local id = ARGV[10]
local ttl = tonumber(ARGV[3])
local clock = now_ms()
local k, a = 6, 11
local taken, slots, holds = {}, {}, {}
local function undo()
  for i, hit in ipairs(taken) do redis.call('ZREM', KEYS[4 + 2 * i], hit) end
  for _, z in ipairs(slots) do redis.call('ZREM', z, id) end
  for _, h in ipairs(holds) do tokens_unhold(h[1], h[2], h[3]) end
end
for i = 1, nw do
  local r = take(KEYS[k], KEYS[k + 1], now, tonumber(ARGV[a]), tonumber(ARGV[a + 1]))
  if r[1] == 0 then
    undo()
    return {'limited', 'window', i - 1, r[2]}
  end
  taken[i] = r[2]
  k, a = k + 2, a + 2
end
for i = 1, ns do
  if slot_take(KEYS[k], id, tonumber(ARGV[a]), clock, ttl) == 0 then
    undo()
    return {'limited', 'slots', i - 1, HELD_RETRY_MS}
  end
  slots[i] = KEYS[k]
  k, a = k + 1, a + 1
end
for i = 1, nb do
  local member = ARGV[a + 1] .. ':' .. id
  local wait = tokens_hold(KEYS[k], KEYS[k + 1], member, tonumber(ARGV[a + 1]), tonumber(ARGV[a]), now, clock, ttl,
    tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]))
  if wait < 0 then
    undo()
    return {'unseeded', i - 1}
  end
  if wait > 0 then
    undo()
    return {'limited', 'tokens', i - 1, wait}
  end
  holds[i] = {KEYS[k], KEYS[k + 1], member}
  k, a = k + 2, a + 6
end
local r = reserve(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
if r[1] ~= 0 then
  undo()
  return {'money', unpack(r)}
end
local budgetHolds = {}
for _, h in ipairs(holds) do
  budgetHolds[#budgetHolds + 1] = h[1]
  budgetHolds[#budgetHolds + 1] = h[2]
  budgetHolds[#budgetHolds + 1] = h[3]
end
redis.call('HSET', KEYS[k], id, cjson.encode({m = {KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1]}, s = slots, t = budgetHolds}))
return {'ok', unpack(taken)}
`;

/**
 * KEYS: the six of settle, then the set of each slot limit, used and holds of each budget,
 * then this process's registry: the request's record becomes the charge counted (kept
 * until its usage-log entry is written), or goes when nothing was charged.
 * ARGV: the three of settle, now, the number of slot limits and budgets, the request id,
 * the ttl, then of each budget: its hold's member, what the request used (tokens, or
 * nano-units for a money budget), bucket ms, buckets and period end.
 */
const FINISH_ONE_LUA = `
local code = settle(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1], ARGV[2], ARGV[3])
if code ~= 0 then return code end
local now = tonumber(ARGV[4])
local ns, nb = tonumber(ARGV[5]), tonumber(ARGV[6])
local id, ttl = ARGV[7], tonumber(ARGV[8])
local k, a = 7, 9
for i = 1, ns do
  redis.call('ZREM', KEYS[k], id)
  k = k + 1
end
for i = 1, nb do
  tokens_unhold(KEYS[k], KEYS[k + 1], ARGV[a])
  tokens_count(KEYS[k], tonumber(ARGV[a + 1]), now, ttl, tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]))
  k, a = k + 2, a + 5
end
if ARGV[2] == '0' then
  redis.call('HDEL', KEYS[k], id)
else
  redis.call('HSET', KEYS[k], id, cjson.encode({c = ARGV[2], a = {KEYS[1], KEYS[2], KEYS[5]}}))
end
return 0
`;

export class RedisAdmitter implements Admitter {
  readonly #accounts: RedisAccounts;
  readonly #prefix: string;
  readonly #admit: ScriptBatch;
  readonly #finish: ScriptBatch;
  readonly #lease: RedisLease;
  readonly #seedFrom: BudgetSeeder | undefined;
  readonly #seedScript: (keys: readonly string[], args: readonly string[]) => Promise<unknown>;

  /** @param seedFrom reads a new budget counter's past from the usage log */
  constructor(client: Redis, accounts: RedisAccounts, keyPrefix: string, lease: RedisLease, seedFrom?: BudgetSeeder) {
    this.#accounts = accounts;
    this.#prefix = keyPrefix;
    this.#lease = lease;
    this.#seedFrom = seedFrom;
    const seed = defineScript(client, "gatewayBudgetSeed", 1, `${HOLDS_LUA}
return budget_seed(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), 7, tonumber(ARGV[6]))`);
    this.#seedScript = (keys, args) => seed(...keys, ...args);
    // The admissions and settlements of one event-loop turn each go as one command (key
    // counts are given per call).
    this.#admit = new ScriptBatch(defineScript(client, "gatewayAdmitBatch", undefined,
      batchedLua(`${RESERVE_FN_LUA}${TAKE_LUA}${HOLDS_LUA}`, ADMIT_ONE_LUA)));
    this.#finish = new ScriptBatch(defineScript(client, "gatewayFinishBatch", undefined,
      batchedLua(`${SETTLE_FN_LUA}${HOLDS_LUA}`, FINISH_ONE_LUA)));
  }

  async admit(request: AdmitRequest): Promise<AdmitResult> {
    const { requestId, token, user, amountNano, windows, now } = request;
    const slots = request.slots ?? [];
    const budgets = request.budgets ?? [];
    const call = this.#accounts.reserveCall(requestId, token, user, amountNano);
    const keys = [...call.keys];
    const args = [...call.args, String(Math.floor(now)), String(windows.length), String(slots.length), String(budgets.length), requestId];
    for (const { key, window } of windows) {
      keys.push(...this.#accounts.limiterKeys(key));
      args.push(String(window.perMs), String(window.max));
    }
    for (const { key, max } of slots) {
      keys.push(slotsKey(this.#prefix, key));
      args.push(String(max));
    }
    for (const { key, max, tokens, window } of budgets) {
      keys.push(...tokensKeys(this.#prefix, key));
      args.push(String(max), String(tokens), ...windowArgs(window));
    }
    keys.push(this.#lease.registry);
    let reply = await this.#run(this.#admit, keys, args);
    // A new budget counter gets the usage log's past, then the admission runs again (each
    // budget is seeded once: at most one more round per budget).
    for (let seeded = 0; reply[0] === "unseeded" && seeded < budgets.length; seeded++) {
      await this.#seedBudget(budgets[Number(reply[1])], now);
      reply = await this.#run(this.#admit, keys, args);
    }
    if (reply[0] === "money" && Number(reply[1]) === UNSEEDED) {
      await this.#accounts.seed(); // Redis lost the counters: rebuild, then once more
      reply = await this.#run(this.#admit, keys, args);
    }
    if (reply[0] === "unseeded") throw new Error("redis: a budget's counter was lost again while it was being seeded; retry");
    if (reply[0] === "limited") {
      return { ok: false, refused: reply[1] as LimitKind, index: Number(reply[2]), retryAfterMs: Number(reply[3]) };
    }
    const money: ReserveReply = reply[0] === "money" ? [Number(reply[1]), reply[2] as string, reply[3] as string] : [0];
    const reservation = this.#accounts.reserveAnswered(money, requestId, token, user, amountNano); // throws a refusal
    return { ok: true, reservation, hits: reply.slice(1).map(Number), holds: { requestId, slots, budgets } };
  }

  async finish({ reservation, holds, charge, usedTokens, now }: Finish): Promise<void> {
    const slots = holds?.slots ?? [];
    const budgets = holds?.budgets ?? [];
    const requestId = holds?.requestId ?? charge.requestId;
    let call = this.#accounts.settleCall(reservation, charge);
    if (!call) {
      // Money held in other accounts than the charge names (not on the request path).
      await this.#accounts.settle(reservation, charge);
      call = this.#accounts.settleCall(undefined, { ...charge, costNano: 0n })!;
    }
    const keys = [...call.keys];
    const args = [...call.args, String(Math.floor(now)), String(slots.length), String(budgets.length), requestId,
      String(this.#accounts.reservationTtlMs)];
    for (const { key } of slots) keys.push(slotsKey(this.#prefix, key));
    for (const budget of budgets) {
      keys.push(...tokensKeys(this.#prefix, budget.key));
      const used = Math.max(0, Math.ceil(usedBy(budget, usedTokens, charge.costNano)));
      args.push(holdMember(budget.tokens, requestId), String(used), ...windowArgs(budget.window).slice(0, 3));
    }
    keys.push(this.#lease.registry);
    // The counters were lost since admission: rebuilt first, the charge counted after.
    if (Number(await this.#finish.call(keys, args)) === UNSEEDED) {
      await this.#accounts.seed();
      if (Number(await this.#finish.call(keys, args)) === UNSEEDED) {
        throw new Error("redis: the spend counters were lost again while being rebuilt from the usage log; retry");
      }
    }
  }

  /** Adds the usage log's past to a budget's counter, unless another process did first. */
  async #seedBudget(budget: TokenBudgetTake, now: number): Promise<void> {
    const window = budget.window!;
    const used = this.#seedFrom ? await this.#seedFrom(window) : [];
    const args = [String(Math.floor(now)), String(this.#accounts.reservationTtlMs), ...windowArgs(window).slice(0, 3), String(used.length)];
    for (const u of used) args.push(String(u.bucket), String(Math.max(0, Math.ceil(u.amount))));
    await this.#seedScript(tokensKeys(this.#prefix, budget.key).slice(0, 1), args);
  }

  whenLogged(requestId: string, logged: Promise<unknown>): void {
    this.#lease.forgetWhen(requestId, logged);
  }

  async #run(script: ScriptBatch, keys: readonly string[], args: readonly string[]): Promise<[string, ...(number | string)[]]> {
    return (await script.call(keys, args)) as [string, ...(number | string)[]];
  }
}
