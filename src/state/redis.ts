// Opens the Redis half of the shared state (`store: redis://host:port/db`): accounts, the
// limiter and the keyed store on one ioredis connection. At start an unreachable Redis is
// a clear error within seconds; while serving, a lost connection makes calls reject at
// once (no offline queue, no replay of scripts that may have run) so billed requests fail
// closed, and the client reconnects by itself.

import { seedFromLog } from "./budget-seed.js";
import { Redis } from "ioredis";
import { log } from "../observability/log.js";
import type { Accounts, Admitter, KeyedStore, Limiter, State, StateHealth, UsageLog } from "./interfaces.js";
import { RedisAccounts } from "./redis-accounts.js";
import { RedisAdmitter } from "./redis-admit.js";
import { RedisKeyedStore } from "./redis-keyed.js";
import { RedisLease } from "./redis-leases.js";
import { RedisLimiter } from "./redis-limiter.js";

export interface RedisStateOptions {
  /** Namespace of every key this state writes, e.g. "gateway:". */
  readonly keyPrefix: string;
  /** The system of record the spend counters are rebuilt from when Redis starts empty. */
  readonly usageLog: UsageLog;
  /** server.upstream_timeout: the longest a request waits on its upstream. */
  readonly upstreamTimeoutMs: number;
  /** How long a reservation outlives a crashed process. Default: upstream timeout + 60 s. */
  readonly reservationTtlMs?: number;
  /** Longest wait for Redis at start. Default 3 s. */
  readonly connectTimeoutMs?: number;
  /** Longest wait for one command's answer while serving. Default 2 s. */
  readonly commandTimeoutMs?: number;
}

export interface RedisState {
  readonly accounts: Accounts;
  readonly limiter: Limiter;
  readonly keyed: KeyedStore;
  /** Rate windows and the pre-deduction in one round trip. */
  readonly admitter: Admitter;
  health(): StateHealth;
  close(): Promise<void>;
}

/** Every key the gateway writes starts with this; deployments sharing a server use other db numbers. */
export const DEFAULT_KEY_PREFIX = "gateway:";
/** server.upstream_timeout's default, for callers that do not say. */
const DEFAULT_UPSTREAM_TIMEOUT_MS = 300_000;

/** Margin past the upstream timeout for reading the body, settling and a failover's start. */
const RESERVATION_MARGIN_MS = 60_000;
/** A settle retried after a lost reply comes within seconds; this covers it many times over. */
const MIN_SETTLED_TTL_MS = 15 * 60_000;
/** GETEX (6.2) and scripts that write after reading TIME (effects replication). */
const MIN_VERSION = [6, 2] as const;

/** Connects, checks the server, rebuilds the spend counters if Redis is empty; throws naming redis. */
export async function openRedisState(url: string, opts: RedisStateOptions): Promise<RedisState> {
  const address = addressOf(url);
  const client = new Redis(url, {
    lazyConnect: false,
    connectTimeout: opts.connectTimeoutMs ?? 3_000,
    commandTimeout: opts.commandTimeoutMs ?? 2_000,
    // 0: a command in flight when the connection drops rejects; it is never replayed, since
    // a reserve that ran but lost its reply must not hold twice.
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    // Off: a request's commands come in turns of their own, so there is little to batch,
    // and batching cost ~3 µs of CPU per command (measured with ioredis 6, 50 commands in flight).
    enableAutoPipelining: false,
    retryStrategy: (attempt) => Math.min(100 * attempt, 1_000),
  });
  let lastError: Error | undefined;
  client.on("error", (err: Error) => (lastError = err)); // reconnects by itself; health() reports it

  try {
    await whenReady(client, opts.connectTimeoutMs ?? 3_000);
  } catch {
    client.disconnect();
    throw new Error(`redis at ${address} is unreachable: ${lastError?.message ?? "no answer"}`);
  }
  try {
    await checkVersion(client, address);
    const reservationTtlMs = opts.reservationTtlMs ?? opts.upstreamTimeoutMs + RESERVATION_MARGIN_MS;
    const accounts = new RedisAccounts(client, {
      keyPrefix: opts.keyPrefix,
      usageLog: opts.usageLog,
      reservationTtlMs,
      settledTtlMs: Math.max(MIN_SETTLED_TTL_MS, reservationTtlMs),
    });
    await accounts.seed();
    // Before serving: what this machine's dead processes held is given back now.
    const lease = new RedisLease(client, {
      keyPrefix: opts.keyPrefix, usageLog: opts.usageLog, keys: accounts.keyNames, settledTtlMs: accounts.settledTtlMs,
    });
    await lease.start();
    reportOutages(client, address);
    return {
      accounts,
      limiter: new RedisLimiter(client, opts.keyPrefix),
      keyed: new RedisKeyedStore(client, opts.keyPrefix),
      admitter: new RedisAdmitter(client, accounts, opts.keyPrefix, lease, seedFromLog(opts.usageLog)),
      health: () => ({ degraded: client.status === "ready" ? [] : ["redis"] }),
      async close() {
        await lease.close();
        await closeClient(client);
      },
    };
  } catch (err) {
    client.disconnect();
    throw err instanceof Error && err.message.startsWith("redis") ? err : new Error(`redis at ${address}: ${(err as Error).message}`);
  }
}

/**
 * The whole State for `store: redis://…`: accounts, limiter and keyed store on Redis beside
 * `usageLog` (the ledger). Health merges both servers; closing closes both.
 */
export async function openRedisSharedState(url: string, usageLog: UsageLog, opts: { readonly upstreamTimeoutMs?: number; readonly keyPrefix?: string } = {}): Promise<State> {
  const { url: serverUrl, keyPrefix } = splitKeyPrefix(url);
  const redis = await openRedisState(serverUrl, {
    keyPrefix: opts.keyPrefix ?? keyPrefix ?? DEFAULT_KEY_PREFIX,
    usageLog,
    upstreamTimeoutMs: opts.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS,
  });
  return {
    accounts: redis.accounts, usageLog, limiter: redis.limiter, admitter: redis.admitter, keyed: redis.keyed, shared: true,
    health: () => ({ degraded: [...redis.health().degraded, ...(usageLog.health?.().degraded ?? [])] }),
    async close() {
      // The log first: every entry written, so the lease forgets what it kept for them.
      try {
        await usageLog.flush();
      } catch {
        // not written: the lease keeps those records for whoever reaps this process
      }
      await redis.close();
      await usageLog.close();
    },
  };
}

/** One error line when a serving connection is lost, one info line when it is back (not
 * one per reconnect attempt). */
function reportOutages(client: Redis, address: string): void {
  let lost = false;
  client.on("error", (err: Error) => {
    if (lost) return;
    lost = true;
    log.error("store: redis unreachable; billed requests answer 503 until it returns", { where: address, error: err.message });
  });
  client.on("ready", () => {
    if (!lost) return;
    lost = false;
    log.info("store: redis reachable again", { where: address });
  });
}

function whenReady(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off("ready", onReady);
      reject(new Error("timeout"));
    }, timeoutMs);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve();
    };
    client.once("ready", onReady);
  });
}

async function checkVersion(client: Redis, address: string): Promise<void> {
  const info = await client.info("server");
  const version = /redis_version:(\d+)\.(\d+)/.exec(info);
  if (!version) return; // a compatible server that does not say (e.g. a proxy): let scripts decide
  const [major, minor] = [Number(version[1]), Number(version[2])];
  if (major < MIN_VERSION[0] || (major === MIN_VERSION[0] && minor < MIN_VERSION[1])) {
    throw new Error(`redis at ${address} is version ${major}.${minor}; the gateway needs ${MIN_VERSION.join(".")} or newer`);
  }
}

async function closeClient(client: Redis): Promise<void> {
  if (client.status === "end") return;
  try {
    await client.quit();
  } catch {
    client.disconnect(); // not connected now: nothing to say goodbye to
  }
}

/**
 * `?key_prefix=…` on the store URL namespaces every key (two deployments on one Redis
 * database); the parameter is the gateway's, so it is taken off before ioredis reads the URL.
 */
export function splitKeyPrefix(url: string): { url: string; keyPrefix?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url };
  }
  const keyPrefix = parsed.searchParams.get("key_prefix");
  if (keyPrefix === null) return { url };
  if (keyPrefix === "") throw new Error("redis: key_prefix in the store URL is empty; leave it out for the default \"gateway:\"");
  parsed.searchParams.delete("key_prefix");
  return { url: parsed.toString(), keyPrefix };
}

/** host:port/db of a redis URL, without its password. */
export function addressOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || "localhost"}:${u.port || "6379"}${u.pathname && u.pathname !== "/" ? u.pathname : ""}`;
  } catch {
    return "(unparsable URL)";
  }
}
