// Starts the real gateway on 127.0.0.1:0 from inline YAML, for integration tests.

import type { AccountStore } from "../../src/accounts/store.js";
import { compileSource } from "../../src/config/index.js";
import type { UsageSink } from "../../src/pipeline/usage-sink.js";
import type { Store, UsageEntry } from "../../src/state/store.js";
import type { JobWatchTiming } from "../../src/routing/job-watch.js";
import { ChannelHealth } from "../../src/routing/health.js";
import { KeyHealth } from "../../src/routing/key-health.js";
import { RuntimeBox } from "../../src/runtime/box.js";
import { startGateway, type GatewayServer } from "../../src/server/server.js";
import { inProcessState } from "../../src/state/in-process.js";
import { MemoryAccounts } from "../../src/state/memory-accounts.js";
import { createMemoryStore } from "../../src/state/memory.js";
import type { State } from "../../src/state/interfaces.js";
import { StoreUsageLog } from "../../src/state/store-usage-log.js";

/** The accounts as tests read them: synchronously, as they stand in this process. */
export interface LedgerView {
  spentByToken(token: string): bigint;
  spentByUser(user: string): bigint;
  reservedByUser(user: string): bigint;
  readonly reservationsHeld: number;
}

export interface TestGateway extends GatewayServer {
  /** The synchronous store under the gateway's usage log (memory unless one was passed). */
  readonly store: Store;
  /** The gateway's accounts, read synchronously. */
  readonly ledger: LedgerView;
  /** Forgets channel and key health, so a channel that failed earlier is tried first
   * again and a key taken out of rotation is back. */
  forgetHealth(): Promise<void>;
  /** Compiles new YAML and swaps it in, as a reload would. */
  swapConfig(yaml: string): void;
  close(): Promise<void>;
}

/** Gateways started and not yet closed (fault worlds forget health in all of them). */
const live = new Set<TestGateway>();

/** Compiles `yaml` (listen forced to port 0) and starts a gateway on it: on `state` when
 * given (the test closes it; `store` and `ledger` then answer only for in-process state),
 * else on in-process state over `store` (a synchronous Store: default a fresh in-memory one);
 * stored accounts in `accountStore` when given (the test closes it), else in memory. */
export async function startTestGateway(
  yaml: string, opts: { usage?: UsageSink; store?: Store; state?: State; jobWatch?: JobWatchTiming; accountStore?: AccountStore } = {},
): Promise<TestGateway> {
  let generation = 1;
  const compile = (text: string) => compileSource(text, { path: "test.yaml", env: {}, generation: generation++ }).runtime;
  const box = new RuntimeBox(compile(yaml));
  // Routing state lives in the state's keyed store: a test gateway starts from none.
  const state = opts.state ?? inProcessState(new StoreUsageLog(opts.store ?? createMemoryStore()));
  const gw = await startGateway({ box, usage: opts.usage, state, jobWatch: opts.jobWatch, accountStore: opts.accountStore });
  const store = state.usageLog instanceof StoreUsageLog ? state.usageLog.store : undefined;
  const view = store && state.accounts instanceof MemoryAccounts ? ledgerView(state.accounts, store) : undefined;
  const inProcessOnly = (what: string) => new Error(`gw.${what} reads in-process state only: use gw.state`);
  // Defined, not assigned: Object.assign would read the getters (and throw) at once.
  const test = Object.defineProperties(gw, {
    store: { get: () => store ?? thrown(inProcessOnly("store")) },
    ledger: { get: () => view ?? thrown(inProcessOnly("ledger")) },
    forgetHealth: { value: () => Promise.all([new ChannelHealth(state.keyed).forget(), new KeyHealth(state.keyed).forget()]).then(() => undefined) },
    swapConfig: { value: (text: string) => void box.swap(compile(text)) },
    close: {
      value: async () => {
        live.delete(test);
        await gw.drain(1000);
      },
    },
  }) as TestGateway;
  live.add(test);
  return test;
}

function thrown(error: Error): never {
  throw error;
}

/** An account this process has not used yet holds what the store says was spent. */
function ledgerView(accounts: MemoryAccounts, store: Store): LedgerView {
  return {
    spentByToken: (token) => accounts.peek("token", token)?.spent ?? store.spentByToken(token),
    spentByUser: (user) => accounts.peek("user", user)?.spent ?? store.spentByUser(user),
    reservedByUser: (user) => accounts.peek("user", user)?.reserved ?? 0n,
    get reservationsHeld() {
      return accounts.reservationsHeld;
    },
  };
}

/** Forgets channel health in every test gateway open now. */
export async function forgetHealthEverywhere(): Promise<void> {
  await Promise.all([...live].map((gw) => gw.forgetHealth()));
}

/** Polls `check` until it returns true or `timeoutMs` passes (no fixed sleeps in tests). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** The usage-log entry of a request, once the store has it. */
export async function entryOf(store: Store, requestId: string): Promise<UsageEntry> {
  let found: UsageEntry | undefined;
  await eventually(() => (found = store.logs({ requestId })[0]) !== undefined, 3000, `usage entry ${requestId}`);
  return found!;
}
