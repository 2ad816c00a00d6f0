// Accounts on Redis, shared by every gateway process on it. Per token and per user a hash
// {spent, reserved} (exact int64 decimal strings) and a sorted set of the reservations it
// holds (member "amount:id", score = deadline in Redis's own clock). Reserve, settle,
// release and refund are each one Lua script, so one round trip and atomic across
// processes. A reservation past its deadline (its process crashed or hung) is swept, its
// amount freed, by the next script that looks at the account. Spend counters are rebuilt
// from the usage log when Redis starts empty: the `seeded` marker says they are current.

import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Token, User } from "../runtime/types.js";
import type { Accounts, Charge, Reservation, UsageLog } from "./interfaces.js";
import { preDeductionFailed } from "./money-refusals.js";
import { defineScript, EXACT_LUA, int64, limiterKeys, type Script } from "./redis-lua.js";

/** Frees what expired, releases one member; shared by reserve, settle, release. */
const HELD_LUA = `
local function sweep(acct, held, now)
  local gone = redis.call('ZRANGEBYSCORE', held, '-inf', now, 'LIMIT', 0, 256)
  for _, m in ipairs(gone) do
    redis.call('ZREM', held, m)
    local amount = string.match(m, '^(%d+):')
    if amount ~= '0' then redis.call('HINCRBY', acct, 'reserved', '-' .. amount) end
  end
end
local function release(acct, held, member)
  if redis.call('ZREM', held, member) == 1 then
    local amount = string.match(member, '^(%d+):')
    if amount ~= '0' then redis.call('HINCRBY', acct, 'reserved', '-' .. amount) end
  end
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- 'exhausted' when spent has reached cap; 'short' when spent + reserved + amount exceeds it.
local function fits(spent, reserved, cap, amount)
  local ch, cl = big(cap)
  local sh, sl = big(spent)
  if not lt(sh, sl, ch, cl) then return 'exhausted' end
  local ah, al = big(amount)
  local rh, rl = big(reserved)
  local nh, nl = add(sh, sl, rh, rl)
  nh, nl = add(nh, nl, ah, al)
  if lt(ch, cl, nh, nl) then return 'short' end
  return 'ok'
end
`;

/** Answers of the scripts that check money, as the first element of their reply. */
export const UNSEEDED = -1;
const OK = 0;
const TOKEN_EXHAUSTED = 1;
const USER_EXHAUSTED = 2;
const TOKEN_SHORT = 3;
const USER_SHORT = 4;

/**
 * KEYS: seeded marker, token account, user account.  ARGV: quota ('' for none), credit.
 * Only spend decides exhaustion, so nothing is swept here.
 */
const CHECK_LUA = `${EXACT_LUA}
local function exhausted(acct, cap)
  local sh, sl = big(redis.call('HGET', acct, 'spent'))
  local ch, cl = big(cap)
  return not lt(sh, sl, ch, cl)
end
if redis.call('EXISTS', KEYS[1]) == 0 then return ${UNSEEDED} end
if ARGV[1] ~= '' and exhausted(KEYS[2], ARGV[1]) then return ${TOKEN_EXHAUSTED} end
if exhausted(KEYS[3], ARGV[2]) then return ${USER_EXHAUSTED} end
return ${OK}
`;

/**
 * reserve(seeded, token account, user account, token held, user held, member, amount,
 * ttl ms, quota ('' for none), credit): {code}, or {short code, spent, reserved} of the
 * account that cannot cover it. A function, so one script can also take rate windows first
 * (see redis-admit.ts).
 */
export const RESERVE_FN_LUA = `${EXACT_LUA}${HELD_LUA}
local function reserve(seeded, tacct, uacct, theld, uheld, member, amount, ttl, quota, credit)
  if redis.call('EXISTS', seeded) == 0 then return {${UNSEEDED}} end
  local now = now_ms()
  sweep(tacct, theld, now)
  sweep(uacct, uheld, now)
  local t = redis.call('HMGET', tacct, 'spent', 'reserved')
  local u = redis.call('HMGET', uacct, 'spent', 'reserved')
  local tfit = 'ok'
  if quota ~= '' then tfit = fits(t[1], t[2], quota, amount) end
  local ufit = fits(u[1], u[2], credit, amount)
  if tfit == 'exhausted' then return {${TOKEN_EXHAUSTED}} end
  if ufit == 'exhausted' then return {${USER_EXHAUSTED}} end
  if tfit == 'short' then return {${TOKEN_SHORT}, t[1] or '0', t[2] or '0'} end
  if ufit == 'short' then return {${USER_SHORT}, u[1] or '0', u[2] or '0'} end
  if amount ~= '0' then
    redis.call('HINCRBY', tacct, 'reserved', amount)
    redis.call('HINCRBY', uacct, 'reserved', amount)
  end
  local deadline = now + tonumber(ttl)
  redis.call('ZADD', theld, deadline, member)
  redis.call('ZADD', uheld, deadline, member)
  return {${OK}}
end
`;

const RESERVE_LUA = `${RESERVE_FN_LUA}
return reserve(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
`;

/**
 * settle(token account, user account, token held, user held, settled marker of the request,
 * seeded marker, member ('' when nothing was reserved), cost, settled-marker ttl ms): 0, or
 * UNSEEDED (changing nothing) when a charge finds the counters lost: it is counted once
 * they are rebuilt, after the rebuild's read of the ledger (adding it to counters about to
 * be overwritten would lose it). A function, so one script can also give back a request's
 * limit holds (see redis-admit.ts).
 */
export const SETTLE_FN_LUA = `${EXACT_LUA}${HELD_LUA}
local function settle(tacct, uacct, theld, uheld, marker, seeded, member, cost, markerTtl)
  if cost ~= '0' and redis.call('EXISTS', seeded) == 0 then return ${UNSEEDED} end
  if member ~= '' then
    release(tacct, theld, member)
    release(uacct, uheld, member)
  end
  if cost ~= '0' and redis.call('SET', marker, '1', 'NX', 'PX', markerTtl) then
    redis.call('HINCRBY', tacct, 'spent', cost)
    redis.call('HINCRBY', uacct, 'spent', cost)
  end
  return 0
end
`;

const SETTLE_LUA = `${SETTLE_FN_LUA}
return settle(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1], ARGV[2], ARGV[3])
`;

/** KEYS: token account, user account, token held, user held.  ARGV: member. */
const RELEASE_LUA = `${EXACT_LUA}${HELD_LUA}
release(KEYS[1], KEYS[3], ARGV[1])
release(KEYS[2], KEYS[4], ARGV[1])
return 0
`;

/** KEYS: token account, user account, refunded marker of the request.  ARGV: negated cost, marker ttl ms. */
const REFUND_LUA = `
if redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[2]) then
  redis.call('HINCRBY', KEYS[1], 'spent', ARGV[1])
  redis.call('HINCRBY', KEYS[2], 'spent', ARGV[1])
end
return 0
`;

/** KEYS: seeded marker, an account.  Reply: {code, spent}. */
const SPENT_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {${UNSEEDED}} end
return {${OK}, redis.call('HGET', KEYS[2], 'spent') or '0'}
`;

/** KEYS: user account, user held.  Sweeps first, so only live reservations count. */
const RESERVED_LUA = `${EXACT_LUA}${HELD_LUA}
sweep(KEYS[1], KEYS[2], now_ms())
return redis.call('HGET', KEYS[1], 'reserved') or '0'
`;

/** Deletes the seed lock only when this process still holds it. */
const UNLOCK_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export interface RedisAccountsOptions {
  /** Namespace of every key, e.g. "gw:". */
  readonly keyPrefix: string;
  /** What the counters are rebuilt from when Redis starts empty. */
  readonly usageLog: UsageLog;
  /** How long a reservation lives before it is swept as abandoned. */
  readonly reservationTtlMs: number;
  /** How long a settled request id is remembered (settling it again charges nothing). */
  readonly settledTtlMs: number;
  /** Longest wait for another process's rebuild of the counters. */
  readonly seedWaitMs?: number;
}

/** {code} or {short code, spent, reserved}. */
export type ReserveReply = [code: number, spent?: string, reserved?: string];

interface Scripts {
  readonly check: Script;
  readonly reserve: Script;
  readonly settle: Script;
  readonly release: Script;
  readonly refund: Script;
  readonly spent: Script;
  readonly reserved: Script;
  readonly unlock: Script;
}

export class RedisAccounts implements Accounts {
  readonly #client: Redis;
  readonly #opts: RedisAccountsOptions;
  readonly #scripts: Scripts;
  readonly #keys: AccountKeys;
  /** Reservations this process made and has not settled or released: a count (each
   * reservation marks itself closed), not a set of ids, which would cost every request once
   * in V8's old generation (bench/RESULTS.md). */
  #held = 0;
  #seeding: Promise<void> | undefined;

  constructor(client: Redis, opts: RedisAccountsOptions) {
    this.#client = client;
    this.#opts = opts;
    this.#keys = new AccountKeys(opts.keyPrefix);
    this.#scripts = {
      check: defineScript(client, "gatewayAccountsCheck", 3, CHECK_LUA),
      reserve: defineScript(client, "gatewayAccountsReserve", 5, RESERVE_LUA),
      settle: defineScript(client, "gatewayAccountsSettle", 6, SETTLE_LUA),
      release: defineScript(client, "gatewayAccountsRelease", 4, RELEASE_LUA),
      refund: defineScript(client, "gatewayAccountsRefund", 3, REFUND_LUA),
      spent: defineScript(client, "gatewayAccountsSpent", 2, SPENT_LUA),
      reserved: defineScript(client, "gatewayAccountsReserved", 2, RESERVED_LUA),
      unlock: defineScript(client, "gatewayAccountsUnlock", 1, UNLOCK_LUA),
    };
  }

  get reservationsHeld(): number {
    return this.#held;
  }

  async checkNotExhausted(token: Token, user: User): Promise<void> {
    const k = this.#keys;
    const args = [k.seeded, k.account("t", token.name), k.account("u", user.name), cap(token.quotaNano), int64(user.creditNano)];
    const code = await this.#whenSeeded(async () => Number(await this.#scripts.check(...args)));
    if (code === TOKEN_EXHAUSTED) throw new GatewayError(errors.tokenQuotaExhausted);
    if (code === USER_EXHAUSTED) throw new GatewayError(errors.insufficientQuota);
  }

  async reserve(requestId: string, token: Token, user: User, amountNano: bigint): Promise<Reservation> {
    const { keys, args } = this.reserveCall(requestId, token, user, amountNano);
    const reply = await this.#whenSeeded(async () => (await this.#scripts.reserve(...keys, ...args)) as ReserveReply);
    return this.reserveAnswered(reply, requestId, token, user, amountNano);
  }

  /** The keys and arguments of the reserve function (here, and inside the admit script). */
  reserveCall(requestId: string, token: Token, user: User, amountNano: bigint): { keys: string[]; args: string[] } {
    if (amountNano < 0n) throw new RangeError(`reserve: amount ${amountNano} is negative`);
    const k = this.#keys;
    return {
      keys: [k.seeded, k.account("t", token.name), k.account("u", user.name), k.held("t", token.name), k.held("u", user.name)],
      args: [memberOf(requestId, amountNano), int64(amountNano), String(this.#opts.reservationTtlMs), cap(token.quotaNano), int64(user.creditNano)],
    };
  }

  /** The reservation the reserve function granted, or the GatewayError of its refusal. */
  reserveAnswered(reply: ReserveReply, requestId: string, token: Token, user: User, amountNano: bigint): Reservation {
    const [code, spent, reserved] = reply;
    if (code === TOKEN_EXHAUSTED) throw new GatewayError(errors.tokenQuotaExhausted);
    if (code === USER_EXHAUSTED) throw new GatewayError(errors.insufficientQuota);
    if (code === TOKEN_SHORT) throw preDeductionFailed("token quota", token.quotaNano! - BigInt(spent!) - BigInt(reserved!), amountNano);
    if (code === USER_SHORT) throw preDeductionFailed("balance", user.creditNano - BigInt(spent!) - BigInt(reserved!), amountNano);
    if (code !== OK) throw new Error(`redis: unexpected reserve reply ${code}`);
    this.#held++;
    return new HeldReservation(requestId, token.name, user.name, amountNano);
  }

  /** The sorted set and sequence RedisLimiter keeps for a key. */
  limiterKeys(key: string): [hits: string, seq: string] {
    return limiterKeys(this.#opts.keyPrefix, key);
  }

  async settle(reservation: Reservation | undefined, charge: Charge): Promise<void> {
    const call = this.settleCall(reservation, charge);
    if (call) {
      await this.#whenSeeded(async () => Number(await this.#scripts.settle(...call.keys, ...call.args)));
      return;
    }
    await this.release(reservation!);
    await this.settle(undefined, charge);
  }

  /**
   * The keys and arguments of the settle function (here, and inside the finish script),
   * the reservation no longer counted as held by this process; undefined when the
   * reservation holds money in other accounts than the charge names (release it, then
   * settle the charge alone).
   */
  settleCall(reservation: Reservation | undefined, charge: Charge): { keys: string[]; args: string[] } | undefined {
    // The reservation's own accounts are the ones it holds money in, whatever the charge names.
    if (reservation && (reservation.token !== charge.token || reservation.user !== charge.user)) return undefined;
    if (reservation) this.#close(reservation);
    const k = this.#keys;
    return {
      keys: [
        k.account("t", charge.token), k.account("u", charge.user), k.held("t", charge.token), k.held("u", charge.user),
        k.settled(charge.requestId), k.seeded,
      ],
      args: [reservation ? memberOf(reservation.id, reservation.amountNano) : "", int64(charge.costNano), String(this.#opts.settledTtlMs)],
    };
  }

  /** How long a reservation (and the limits a request holds with it) outlives a crash. */
  get reservationTtlMs(): number {
    return this.#opts.reservationTtlMs;
  }

  /** How long a settled request id is remembered. */
  get settledTtlMs(): number {
    return this.#opts.settledTtlMs;
  }

  /** The names of the keys these accounts keep (for the lease's reaper, redis-leases.ts). */
  get keyNames(): AccountKeys {
    return this.#keys;
  }

  /** Counts a reservation of this process as no longer held, once. */
  #close(reservation: Reservation): void {
    if (reservation instanceof HeldReservation && reservation.open) {
      reservation.open = false;
      this.#held--;
    }
  }

  async release(reservation: Reservation): Promise<void> {
    this.#close(reservation);
    const k = this.#keys;
    await this.#scripts.release(
      k.account("t", reservation.token), k.account("u", reservation.user), k.held("t", reservation.token), k.held("u", reservation.user),
      memberOf(reservation.id, reservation.amountNano),
    );
  }

  async refund(charge: Charge): Promise<void> {
    if (charge.costNano === 0n) return;
    const k = this.#keys;
    await this.#scripts.refund(k.account("t", charge.token), k.account("u", charge.user), k.refunded(charge.requestId),
      int64(-charge.costNano), String(REFUNDED_TTL_MS));
  }

  spentByToken(token: string): Promise<bigint> {
    return this.#spent(this.#keys.account("t", token));
  }

  spentByUser(user: string): Promise<bigint> {
    return this.#spent(this.#keys.account("u", user));
  }

  async reservedByUser(user: string): Promise<bigint> {
    const k = this.#keys;
    return BigInt((await this.#scripts.reserved(k.account("u", user), k.held("u", user))) as string);
  }

  /** The connection belongs to the state that opened it; nothing of its own to close. */
  async close(): Promise<void> {}

  async #spent(account: string): Promise<bigint> {
    const reply = await this.#whenSeeded(async () => (await this.#scripts.spent(this.#keys.seeded, account)) as [number, string?]);
    return BigInt(reply[1] ?? "0");
  }

  /** Runs a script that answers UNSEEDED while the counters are missing; rebuilds them, once. */
  async #whenSeeded<T extends number | readonly unknown[]>(run: () => Promise<T>): Promise<T> {
    const first = await run();
    if (codeOf(first) !== UNSEEDED) return first;
    await this.seed();
    const second = await run();
    if (codeOf(second) === UNSEEDED) throw new Error("redis: the spend counters were lost again while being rebuilt from the usage log; retry");
    return second;
  }

  /**
   * Makes sure the spend counters are current: when the marker is missing (Redis started
   * empty), one process (holding a SET NX PX lock) rebuilds them from the usage log while
   * the others wait for the marker. Resolves once seeded.
   */
  seed(): Promise<void> {
    this.#seeding ??= this.#seedOnce().finally(() => (this.#seeding = undefined));
    return this.#seeding;
  }

  async #seedOnce(): Promise<void> {
    const k = this.#keys;
    const waitMs = this.#opts.seedWaitMs ?? 60_000;
    const deadline = Date.now() + waitMs;
    const lockId = randomUUID();
    for (;;) {
      if (await this.#client.exists(k.seeded)) return;
      if (await this.#client.set(k.seedLock, lockId, "PX", SEED_LOCK_MS, "NX")) {
        try {
          // Another process may have finished between our check and our lock.
          if (!(await this.#client.exists(k.seeded))) await this.#writeTotals();
        } finally {
          await this.#scripts.unlock(k.seedLock, lockId);
        }
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(`redis: waited ${waitMs} ms for another gateway to rebuild the spend counters from the usage log`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** One MULTI: every token's and user's spend from the log, then the marker. */
  async #writeTotals(): Promise<void> {
    const k = this.#keys;
    const totals = await this.#opts.usageLog.spendTotals();
    const tx = this.#client.multi();
    for (const [name, spent] of totals.tokens) tx.hset(k.account("t", name), "spent", int64(spent));
    for (const [name, spent] of totals.users) tx.hset(k.account("u", name), "spent", int64(spent));
    tx.set(k.seeded, String(Date.now()));
    const results = await tx.exec();
    const failed = results?.find(([err]) => err);
    if (!results || failed) throw new Error(`redis: rebuilding the spend counters failed: ${failed?.[0]?.message ?? "transaction aborted"}`);
  }
}

/** A reservation this process made, open until settled or released. */
class HeldReservation implements Reservation {
  open = true;
  constructor(readonly id: string, readonly token: string, readonly user: string, readonly amountNano: bigint) {}
}

/** Refunds are rare and may be repeated long after (a job watcher restarting): a week. */
const REFUNDED_TTL_MS = 7 * 24 * 3_600_000;

/** How long one rebuild may hold the lock before another process may take over. */
const SEED_LOCK_MS = 30_000;

/** Key names, in one place. Token and user names are namespaced apart ("t" / "u"). */
class AccountKeys {
  readonly seeded: string;
  readonly seedLock: string;
  readonly #prefix: string;

  constructor(prefix: string) {
    this.#prefix = prefix;
    this.seeded = `${prefix}acct-seeded`;
    this.seedLock = `${prefix}acct-seed-lock`;
  }

  account(kind: "t" | "u", name: string): string {
    return `${this.#prefix}acct:${kind}:${name}`;
  }

  held(kind: "t" | "u", name: string): string {
    return `${this.#prefix}held:${kind}:${name}`;
  }

  settled(requestId: string): string {
    return `${this.#prefix}settled:${requestId}`;
  }

  refunded(requestId: string): string {
    return `${this.#prefix}refunded:${requestId}`;
  }
}

/** The sorted-set member of a reservation: its amount travels with it, for the sweep. */
function memberOf(id: string, amountNano: bigint): string {
  return `${int64(amountNano)}:${id}`;
}

function cap(quotaNano: bigint | undefined): string {
  return quotaNano === undefined ? "" : int64(quotaNano);
}

function codeOf(reply: number | readonly unknown[]): number {
  return typeof reply === "number" ? reply : Number(reply[0]);
}

