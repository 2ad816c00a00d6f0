// What a dead gateway process held on Redis is given back within seconds, not when the
// reservation TTL runs out minutes later. Each process that opens Redis is a "life" with a
// lease: a member of the `lives` sorted set whose score is the lease's end (Redis's clock),
// renewed by a timer of the process (never per request). Every request the process admits
// is recorded, in the admission script itself, in the life's registry hash (request id →
// what it holds: the reservation, the concurrency slots and the tokens-per-minute holds);
// the settlement script replaces the record by the charge it counted, and the timer drops
// the records whose usage-log entry is written. So a registry lists exactly what a process
// may still hold, or may have counted without a log entry.
//
// When a lease has run out (the process was killed, or hung for longer than the lease),
// any live process reaps the life, one record at a time: it releases each hold and makes the
// spend counters agree with the usage log, the system of record (a charge the log has but
// the counters missed is added; one the counters have but the log missed, the process
// having died between the two, is taken back), then deletes the record. Each step is
// idempotent (a hold released twice frees once; a charge is added or taken back under its
// settled marker, once), so reapers may overlap, and one that dies leaves the rest of the
// registry, and the life, to the next. A reaper that finds a registry empty has seen every
// record of it given back.
//
// A restarted gateway does not wait for the lease: a life's name carries where its process
// ran (the kernel's boot and pid namespace) and its pid, so at start a process reaps at once
// the lives of its own machine whose process is gone. Lives on other machines, or whose pid
// was reused, are left to their lease.

import { createHash, randomBytes } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import type { Redis } from "ioredis";
import { log } from "../observability/log.js";
import type { UsageLog } from "./interfaces.js";
import { SETTLE_FN_LUA } from "./redis-accounts.js";
import { HOLDS_LUA } from "./redis-holds.js";
import { defineScript, int64, type Script } from "./redis-lua.js";

/** How long a life lives without a renewal: a dead process's holds are freed this long after
 * its last renewal (plus one reaper tick). */
export const LEASE_MS = 4_000;
/** How often a process renews its lease, forgets written records and looks for dead lives. */
export const RENEW_MS = 1_000;
/** Records read per batch while reaping. */
const REAP_BATCH = 100;
/** Request ids forgotten per renewal command at most (a renewal sends as many as needed). */
const FORGET_BATCH = 2_000;
/** Request ids waiting to be forgotten at most (Redis unreachable for long): past it, a
 * record stays until this process ends, which gives it back as a dead process's (a no-op
 * for a charge the log has). */
const MAX_PENDING_FORGET = 200_000;

/** Keys of the lease layout under a key prefix. */
export function livesKey(prefix: string): string {
  return `${prefix}lives`;
}
export function registryKey(prefix: string, life: string): string {
  return `${prefix}life:${life}`;
}

/** KEYS: lives, own registry.  ARGV: own life, lease ms, then request ids to forget.
 * Reply: {1 when the lease had been lost (reaped), expired lives...}. */
const RENEW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lost = redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if #ARGV > 2 then redis.call('HDEL', KEYS[2], unpack(ARGV, 3)) end
local reply = {lost}
for _, life in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 8)) do reply[#reply + 1] = life end
return reply
`;

/**
 * KEYS: lives, a life's registry.  ARGV: the life, count, '1' to read only while its lease
 * is still over (not renewed meanwhile).
 * Reply: {field, value, ...} of up to `count` of its records; none (and the life dropped from
 * the lives) once it has no records.
 */
const RECORDS_LUA = `
if ARGV[3] == '1' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
  if score and tonumber(score) > now then return {} end
end
local flat = redis.call('HRANDFIELD', KEYS[2], tonumber(ARGV[2]), 'WITHVALUES')
if #flat == 0 then redis.call('ZREM', KEYS[1], ARGV[1]) end
return flat
`;

/**
 * Gives back one record of a dead life, then deletes it.
 * KEYS: seeded marker, the life's registry, settled marker, token account, user account (the
 * charge's), token account, user account, token held, user held (the reservation's), each
 * slot set, used and holds of each budget.
 * ARGV: request id, reservation member ('' for none), mode ('' | 'add' | 'sub'), cost,
 * settled-marker ttl ms, slot count, budget count, each budget hold's member.
 */
const RESOLVE_LUA = `${SETTLE_FN_LUA}${HOLDS_LUA}
local id, member, mode, cost = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local ns, nb = tonumber(ARGV[6]), tonumber(ARGV[7])
if member ~= '' then
  release(KEYS[6], KEYS[8], member)
  release(KEYS[7], KEYS[9], member)
end
local k = 10
for i = 1, ns do
  redis.call('ZREM', KEYS[k], id)
  k = k + 1
end
for i = 1, nb do
  tokens_unhold(KEYS[k], KEYS[k + 1], ARGV[7 + i])
  k = k + 2
end
if mode ~= '' and cost ~= '0' and redis.call('EXISTS', KEYS[1]) == 1 then
  if mode == 'add' and redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[5]) then
    redis.call('HINCRBY', KEYS[4], 'spent', cost)
    redis.call('HINCRBY', KEYS[5], 'spent', cost)
  elseif mode == 'sub' and redis.call('DEL', KEYS[3]) == 1 then
    redis.call('HINCRBY', KEYS[4], 'spent', '-' .. cost)
    redis.call('HINCRBY', KEYS[5], 'spent', '-' .. cost)
  end
end
redis.call('HDEL', KEYS[2], id)
return 0
`;

/** A record as the admission script writes it: m = {token account, user account, token
 * held, user held, member}, s = slot sets, t = {used, holds, member} of each budget, flat.
 * As the settlement script rewrites it: c = the charge counted, a = {token account, user
 * account, settled marker}. (Lua's cjson writes an empty list as {}.) */
interface RegistryRecord {
  readonly m?: string[];
  readonly s?: string[] | Record<string, never>;
  readonly t?: string[] | Record<string, never>;
  readonly c?: string;
  readonly a?: string[];
}

/** How the accounts name their keys (RedisAccounts owns the layout). */
export interface AccountKeyNames {
  readonly seeded: string;
  account(kind: "t" | "u", name: string): string;
  settled(requestId: string): string;
}

export interface LeaseOptions {
  readonly keyPrefix: string;
  readonly usageLog: UsageLog;
  readonly keys: AccountKeyNames;
  /** How long a settled marker lives (RedisAccounts' settledTtlMs). */
  readonly settledTtlMs: number;
}

/** Lives opened by this process: never taken for a dead predecessor of the same pid. */
const ownLives = new Set<string>();

/** The lease of this process's life on one Redis key prefix. */
export class RedisLease {
  /** "<home>~<pid>~<random>": home says which machine and pid namespace the pid is of. */
  readonly life: string;
  readonly registry: string;
  readonly #client: Redis;
  readonly #opts: LeaseOptions;
  readonly #lives: string;
  readonly #renew: Script;
  readonly #records: Script;
  readonly #resolve: Script;
  #forget: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** The renewal running now; reaping runs apart, so a long one never delays a renewal. */
  #renewing: Promise<void> | undefined;
  #reaping: Promise<void> | undefined;
  #failing = false;

  constructor(client: Redis, opts: LeaseOptions) {
    this.#client = client;
    this.#opts = opts;
    this.life = `${processHome()}~${process.pid}~${randomBytes(4).toString("hex")}`;
    this.#lives = livesKey(opts.keyPrefix);
    this.registry = registryKey(opts.keyPrefix, this.life);
    this.#renew = defineScript(client, "gatewayLeaseRenew", 2, RENEW_LUA);
    this.#records = defineScript(client, "gatewayLeaseRecords", 2, RECORDS_LUA);
    this.#resolve = defineScript(client, "gatewayLeaseResolve", undefined, RESOLVE_LUA);
  }

  /** Takes the lease and gives back at once what this machine's dead processes held (before
   * this one serves), then renews on a timer, reaping expired lives as it finds them. */
  async start(): Promise<void> {
    ownLives.add(this.life);
    await this.#renew(this.#lives, this.registry, this.life, String(LEASE_MS));
    const home = processHome();
    for (const life of await this.#client.zrange(this.#lives, "0", "-1")) {
      const [lifeHome, pid] = life.split("~");
      if (ownLives.has(life) || lifeHome !== home || home === UNKNOWN_HOME) continue;
      if (Number(pid) === process.pid || !pidAlive(Number(pid))) await this.#reap(life, false);
    }
    this.#tick();
    this.#timer = setInterval(() => this.#tick(), RENEW_MS);
    this.#timer.unref();
  }

  /** Drops a settled request's record once its usage-log entry is written (or failed). */
  forgetWhen(requestId: string, logged: Promise<unknown>): void {
    const forget = () => {
      if (this.#forget.length < MAX_PENDING_FORGET) this.#forget.push(requestId);
    };
    logged.then(forget, forget);
  }

  /** Stops renewing, gives back what this life still records, and ends the lease. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#renewing;
    await this.#reaping;
    try {
      await this.#renewAndForget();
      await this.#reap(this.life, false);
      await this.#client.zrem(this.#lives, this.life);
    } catch (err) {
      log.warn("store: could not end this process's lease on redis; it runs out by itself", { error: (err as Error).message });
    } finally {
      ownLives.delete(this.life);
    }
  }

  #tick(): void {
    this.#renewing ??= this.#renewOnce().finally(() => (this.#renewing = undefined));
  }

  async #renewOnce(): Promise<void> {
    let expired: string[];
    try {
      expired = (await this.#renewAndForget()).filter((life) => life !== this.life);
      if (this.#failing) log.info("store: lease renewed on redis again");
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) log.warn("store: could not renew this process's lease on redis", { error: (err as Error).message });
      this.#failing = true;
      return;
    }
    if (expired.length > 0) this.#reaping ??= this.#reapExpired(expired).finally(() => (this.#reaping = undefined));
  }

  async #reapExpired(lives: readonly string[]): Promise<void> {
    try {
      for (const life of lives) await this.#reap(life, true);
    } catch (err) {
      log.warn("store: could not reap a gateway process whose lease ran out; retried at the next renewal", { error: (err as Error).message });
    }
  }

  /** Renews the lease and forgets every written record (one command per FORGET_BATCH);
   * the expired lives it found. */
  async #renewAndForget(): Promise<string[]> {
    let expired: string[] = [];
    do {
      const forget = this.#forget.splice(0, FORGET_BATCH);
      let reply: [number, ...string[]];
      try {
        reply = (await this.#renew(this.#lives, this.registry, this.life, String(LEASE_MS), ...forget)) as [number, ...string[]];
      } catch (err) {
        this.#forget.unshift(...forget); // forgotten at the next renewal
        throw err;
      }
      if (Number(reply[0]) === 1) {
        log.warn("store: this process's lease on redis had run out and its holds may have been freed; renewed", { life: this.life });
      }
      expired = reply.slice(1) as string[];
    } while (this.#forget.length > 0);
    return expired;
  }

  /** Gives back every record of a dead life (or of this one, ending); `whileExpired`: only
   * while its lease stays over. Resolves once its registry is empty, or at the first record
   * that cannot be given back now (left for the next reap). */
  async #reap(life: string, whileExpired: boolean): Promise<void> {
    const registry = registryKey(this.#opts.keyPrefix, life);
    let freed = 0;
    for (;;) {
      const flat = (await this.#records(this.#lives, registry, life, String(REAP_BATCH), whileExpired ? "1" : "0")) as string[];
      if (flat.length === 0) break;
      for (let i = 0; i < flat.length; i += 2) {
        try {
          await this.#giveBack(registry, flat[i], JSON.parse(flat[i + 1]) as RegistryRecord);
          freed++;
        } catch (err) {
          log.warn("store: could not give back what a gone gateway process held for a request; retried later", {
            life, requestId: flat[i], error: (err as Error).message,
          });
          return;
        }
      }
    }
    if (freed > 0 && life !== this.life) log.info("store: gave back what a gateway process that is gone held", { life, requests: freed });
  }

  /** Releases a record's holds and makes the counters agree with the usage log about it. */
  async #giveBack(registry: string, requestId: string, record: RegistryRecord): Promise<void> {
    const { keys: names, usageLog, settledTtlMs } = this.#opts;
    const logged = (await usageLog.logs({ requestId, limit: 1 }))[0];
    const loggedCost = logged && logged.refundedAt === undefined ? logged.costNano : 0n;
    let mode = "";
    let cost = "0";
    let spendKeys: string[];
    if (record.c !== undefined) {
      // Counted by the settlement: take it back unless the log has it.
      spendKeys = record.a!.slice(0, 2);
      if (!logged) (mode = "sub"), (cost = record.c);
    } else {
      // Never settled: count what the log has.
      spendKeys = logged ? [names.account("t", logged.token), names.account("u", logged.user)] : (record.m ?? ["", ""]).slice(0, 2);
      if (loggedCost > 0n) (mode = "add"), (cost = int64(loggedCost));
    }
    const held = record.m ?? [spendKeys[0], spendKeys[1], spendKeys[0], spendKeys[1], ""];
    const slots = Array.isArray(record.s) ? record.s : [];
    const budgets = Array.isArray(record.t) ? record.t : [];
    const keys = [names.seeded, registry, record.a?.[2] ?? names.settled(requestId), ...spendKeys, held[0], held[1], held[2], held[3], ...slots];
    const members: string[] = [];
    for (let i = 0; i < budgets.length; i += 3) {
      keys.push(budgets[i], budgets[i + 1]);
      members.push(budgets[i + 2]);
    }
    await this.#resolve(String(keys.length), ...keys, requestId, held[4], mode, cost, String(settledTtlMs),
      String(slots.length), String(budgets.length / 3), ...members);
  }
}

const UNKNOWN_HOME = "x";

/** Which kernel boot and pid namespace this process's pid belongs to (a pid is meaningful
 * only there); "x" where that cannot be known (not Linux). */
function processHome(): string {
  try {
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const namespace = readlinkSync("/proc/self/ns/pid");
    return createHash("sha256").update(`${boot}/${namespace}`).digest("hex").slice(0, 12);
  } catch {
    return UNKNOWN_HOME;
  }
}

/** Whether a process with this pid runs: not when there is none, nor when it is a zombie
 * (killed, not yet waited for by its parent: a killed cluster's workers until init reaps
 * them). Unsure means alive: its lease decides. */
function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ENOENT";
  }
}
