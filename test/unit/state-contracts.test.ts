// The state contracts (test/contracts/) run against the in-process implementations: the
// usage log in memory, in SQLite in memory and in a SQLite file (reopened: durable), the
// accounts beside each, and the memory limiter and keyed store (what the SQLite store uses).

import { after } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryAccounts } from "../../src/state/memory-accounts.js";
import { MemoryKeyedStore } from "../../src/state/memory-keyed.js";
import { MemoryLimiter } from "../../src/state/memory-limiter.js";
import { SequentialAdmitter } from "../../src/state/sequential-admitter.js";
import { createMemoryStore } from "../../src/state/memory.js";
import { openState } from "../../src/state/open.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { StoreUsageLog } from "../../src/state/store-usage-log.js";
import type { UsageLog } from "../../src/state/interfaces.js";
import { accountsContract } from "../contracts/accounts.js";
import { admitterContract } from "../contracts/admitter.js";
import { keyedStoreContract } from "../contracts/keyed-store.js";
import { limiterContract } from "../contracts/limiter.js";
import { usageLogContract } from "../contracts/usage-log.js";

const dir = mkdtempSync(join(tmpdir(), "gateway-state-contracts-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(dir, `nested/s${++files}.db`);

usageLogContract("memory", async () => {
  const usageLog = new StoreUsageLog(createMemoryStore());
  return { usageLog, close: () => usageLog.close() };
});
usageLogContract("sqlite :memory:", async () => {
  const usageLog = new StoreUsageLog(openSqliteStore(":memory:"));
  return { usageLog, close: () => usageLog.close() };
});
usageLogContract("sqlite file", async () => {
  const path = freshFile();
  const open: UsageLog[] = [new StoreUsageLog(openSqliteStore(path))];
  return {
    usageLog: open[0],
    reopen: async () => {
      const again = new StoreUsageLog(openSqliteStore(path));
      open.push(again);
      return again;
    },
    close: async () => {
      for (const log of open) await log.close();
    },
  };
}, { reopens: true });

/** Accounts in this process beside `usageLog`; reopened as a restarted gateway would be. */
function inProcessAccounts(usageLog: UsageLog) {
  return {
    accounts: new MemoryAccounts(usageLog), usageLog,
    reopen: async () => new MemoryAccounts(usageLog),
    close: () => usageLog.close(),
  };
}
accountsContract("memory", async () => inProcessAccounts(new StoreUsageLog(createMemoryStore())), { reopens: true });
accountsContract("sqlite file", async () => inProcessAccounts(new StoreUsageLog(openSqliteStore(freshFile()))), { reopens: true });
accountsContract("sqlite file, opened by openState", async () => {
  const state = await openState({ store: `sqlite:./nested/o${++files}.db` }, { baseDir: dir });
  return { accounts: state.accounts, usageLog: state.usageLog, close: () => state.close() };
});

limiterContract("memory", async () => ({ limiter: new MemoryLimiter(), close: async () => {} }));
keyedStoreContract("memory", async () => ({ keyed: new MemoryKeyedStore(), close: async () => {} }));
keyedStoreContract("memory, opened by openState", async () => {
  const state = await openState({}, { baseDir: dir });
  return { keyed: state.keyed, close: () => state.close() };
});
admitterContract("in-process (sequential)", async () => {
  const usageLog = new StoreUsageLog(createMemoryStore());
  const accounts = new MemoryAccounts(usageLog);
  const limiter = new MemoryLimiter();
  return { admitter: new SequentialAdmitter(accounts, limiter), accounts, limiter, close: () => usageLog.close() };
});
admitterContract("sqlite file, opened by openState", async () => {
  const state = await openState({ store: `sqlite:./nested/a${++files}.db` }, { baseDir: dir });
  return { admitter: state.admitter, accounts: state.accounts, limiter: state.limiter, close: () => state.close() };
});
