// The state of one gateway process on the embedded stores: accounts, rate windows and the
// keyed store live in this process, beside a usage log (memory or SQLite) they read from.

import type { State, StateHealth, UsageLog } from "./interfaces.js";
import { MemoryAccounts } from "./memory-accounts.js";
import { MemoryKeyedStore } from "./memory-keyed.js";
import { MemoryLimiter } from "./memory-limiter.js";
import { seedFromLog } from "./budget-seed.js";
import { SequentialAdmitter } from "./sequential-admitter.js";

const healthy: StateHealth = { degraded: [] };

/** In-process state over `usageLog`; closing it closes the log. */
export function inProcessState(usageLog: UsageLog): State {
  const accounts = new MemoryAccounts(usageLog);
  const limiter = new MemoryLimiter();
  return {
    accounts, usageLog, limiter, admitter: new SequentialAdmitter(accounts, limiter, seedFromLog(usageLog)), keyed: new MemoryKeyedStore(), shared: false,
    // A usage log on a server (PostgreSQL) says whether it answers; the rest is in this process.
    health: () => usageLog.health?.() ?? healthy,
    async close() {
      await accounts.close();
      await usageLog.close();
    },
  };
}
