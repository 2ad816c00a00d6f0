// Turns gateway.yaml's `store:` and `ledger:` into open state, choosing implementations
// from the URL schemes alone, so the server and the CLI agree on what
// "sqlite:./data/gateway.db" means (relative to the config file's folder).

import { isAbsolute, resolve } from "node:path";
import type { State, UsageLog } from "./interfaces.js";
import { inProcessState } from "./in-process.js";
import { createMemoryStore } from "./memory.js";
import { openPostgresUsageLog } from "./postgres-log.js";
import { openRedisSharedState, splitKeyPrefix } from "./redis.js";
import { RetentionSweeper, type RetentionSettings, type SweepTiming } from "./retention.js";
import { openSqliteStore } from "./sqlite.js";
import { StoreUsageLog } from "./store-usage-log.js";

/** How to interpret and open a store or ledger spec. */
export interface OpenStoreOptions {
  /** Folder relative sqlite paths resolve against: the config file's folder. */
  readonly baseDir: string;
  /** Refuse a sqlite file that does not exist yet instead of creating it, and only read. */
  readonly mustExist?: boolean;
}

/** What opening the whole state also needs to know. */
export interface OpenStateOptions extends OpenStoreOptions {
  /** server.upstream_timeout: how long a reservation may be held (shared stores expire
   * what a crashed process left). */
  readonly upstreamTimeoutMs?: number;
  /** usage.retention (and usage.archive): this process sweeps the usage log at start and
   * hourly, one process at a time (retention.ts). Absent: entries are kept. */
  readonly retention?: RetentionSettings;
  /** How the retention sweep runs (tests shorten it). */
  readonly retentionTiming?: SweepTiming;
}

/** A parsed `store:` or `ledger:` spec. */
export type StoreLocation =
  | { readonly kind: "memory" }
  | { readonly kind: "sqlite"; readonly path: string }
  | { readonly kind: "redis"; readonly url: string }
  | { readonly kind: "postgres"; readonly url: string };

/**
 * Parses a spec: `memory:`, `sqlite:<path>` (relative to `baseDir`), `sqlite::memory:` for
 * a private in-memory database, `redis://…` / `rediss://…`, or `postgres://…` /
 * `postgresql://…`. Throws on anything else.
 */
export function parseStoreSpec(spec: string, baseDir: string): StoreLocation {
  if (spec === "memory:" || spec === "memory") return { kind: "memory" };
  if (spec.startsWith("sqlite:")) {
    const path = spec.slice("sqlite:".length);
    if (!path) throw new Error(`store "${spec}": write sqlite:<path>, e.g. sqlite:./data/gateway.db`);
    if (path === ":memory:") return { kind: "sqlite", path };
    return { kind: "sqlite", path: isAbsolute(path) ? path : resolve(baseDir, path) };
  }
  if (/^rediss?:\/\//.test(spec)) return { kind: "redis", url: spec };
  if (/^postgres(?:ql)?:\/\//.test(spec)) return { kind: "postgres", url: spec };
  throw new Error(`store "${spec}": expected memory:, sqlite:<path>, redis://host:port/db or postgres://…`);
}

/** Opens a usage log of one kind. */
type UsageLogOpener = (location: StoreLocation, opts: OpenStoreOptions) => Promise<UsageLog>;
/** Opens the whole state on a shared store (accounts, limiter, keyed store) beside a usage log. */
type SharedStateOpener = (location: StoreLocation, usageLog: UsageLog, opts: OpenStateOptions) => Promise<State>;

/**
 * The implementations, by scheme: the usage log (memory, SQLite, PostgreSQL), and the live
 * state shared by many processes (Redis) beside it; memory and SQLite stores keep the live
 * state in this process.
 */
const usageLogs: Partial<Record<StoreLocation["kind"], UsageLogOpener>> = {
  memory: async () => new StoreUsageLog(createMemoryStore()),
  sqlite: async (location, opts) =>
    new StoreUsageLog(openSqliteStore((location as { path: string }).path, { mustExist: opts.mustExist })),
  postgres: (location) => openPostgresUsageLog((location as { url: string }).url),
};
const sharedStates: Partial<Record<StoreLocation["kind"], SharedStateOpener>> = {
  redis: (location, usageLog, opts) =>
    openRedisSharedState((location as { url: string }).url, usageLog, { upstreamTimeoutMs: opts.upstreamTimeoutMs }),
};

/** Thrown at start for a spec this build cannot open (a 400-style refusal of the config). */
export class StateUnavailable extends Error {}

function unavailable(what: string, spec: string): StateUnavailable {
  return new StateUnavailable(`${what} ${spec} is not available in this build`);
}

function described(location: StoreLocation): string {
  return location.kind === "memory" ? "memory:" : location.kind === "sqlite" ? `sqlite:${location.path}` : location.url;
}

/** Why no usage log can be opened for `store` and `ledger`, or undefined when one can. */
function usageLogRefusal(spec: { store: string; ledger?: string }, location: StoreLocation): string | undefined {
  if (usageLogs[location.kind]) return undefined;
  if (!spec.ledger && location.kind === "redis") {
    return `store ${location.url} keeps no usage log: add ledger: postgres://… (or use sqlite:<path>)`;
  }
  return unavailable(spec.ledger ? "ledger" : "store", described(location)).message;
}

/**
 * Why `store` and `ledger` cannot be opened together, as far as is known without
 * connecting to anything; undefined when they can. openState refuses exactly these, and
 * `gateway check` reports them (server/startup-policy.ts).
 */
export function stateRefusal(spec: { store?: string; ledger?: string }, baseDir: string): string | undefined {
  const storeSpec = spec.store ?? "memory:";
  try {
    const store = parseStoreSpec(storeSpec, baseDir);
    if (store.kind === "postgres") return `store ${store.url}: PostgreSQL holds the usage log: write it as ledger:`;
    if (store.kind === "redis") {
      if (!sharedStates.redis) return unavailable("store", store.url).message;
      splitKeyPrefix(store.url); // throws naming an empty key_prefix
    }
    return usageLogRefusal({ store: storeSpec, ledger: spec.ledger }, parseStoreSpec(spec.ledger ?? storeSpec, baseDir));
  } catch (err) {
    return (err as Error).message;
  }
}

/** The usage log named by `ledger`, else the one beside `store` (memory or SQLite): what
 * the CLI reads. */
export async function openUsageLog(spec: { store: string; ledger?: string }, opts: OpenStoreOptions): Promise<UsageLog> {
  const location = parseStoreSpec(spec.ledger ?? spec.store, opts.baseDir);
  const refusal = usageLogRefusal(spec, location);
  if (refusal) throw new StateUnavailable(refusal);
  return usageLogs[location.kind]!(location, opts);
}

/**
 * Opens the state one gateway process uses: the usage log (see openUsageLog) and, for a
 * shared `store`, the accounts, limiter and keyed store on it; for memory and SQLite they
 * live in this process. Throws StateUnavailable or what the store throws.
 */
export async function openState(spec: { store?: string; ledger?: string }, opts: OpenStateOptions): Promise<State> {
  const refusal = stateRefusal(spec, opts.baseDir);
  if (refusal) throw new StateUnavailable(refusal);
  const store = parseStoreSpec(spec.store ?? "memory:", opts.baseDir);
  const shared = store.kind === "redis" ? sharedStates.redis : undefined;
  const usageLog = await openUsageLog({ store: spec.store ?? "memory:", ledger: spec.ledger }, opts);
  if (!shared) return withRetention(inProcessState(usageLog), opts);
  try {
    return withRetention(await shared(store, usageLog, opts), opts);
  } catch (err) {
    await usageLog.close();
    throw err;
  }
}

/** `state` sweeping its usage log past `opts.retention` (this is a process that writes the
 * log), the sweep stopped before the state closes. */
function withRetention(state: State, opts: OpenStateOptions): State {
  if (!opts.retention || !state.usageLog.removeBefore) return state;
  const sweeper = new RetentionSweeper(state.usageLog, opts.retention, opts.retentionTiming);
  sweeper.start();
  const close = state.close.bind(state);
  return Object.assign(state, {
    async close() {
      await sweeper.stop();
      await close();
    },
  });
}
