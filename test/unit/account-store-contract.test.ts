// The accounts store contract (test/contracts/account-store.ts) on the in-process
// implementations: memory, and SQLite in a file (reopened: a second store object on the
// same file, as a second gateway process would open it).

import { after } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryAccountStore } from "../../src/accounts/memory-store.js";
import { openSqliteAccountStore } from "../../src/accounts/sqlite-store.js";
import type { AccountStore } from "../../src/accounts/store.js";
import { accountStoreContract } from "../contracts/account-store.js";

const dir = mkdtempSync(join(tmpdir(), "gateway-account-store-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

accountStoreContract("memory", async () => {
  const store = new MemoryAccountStore();
  return { store, close: () => store.close() };
});

accountStoreContract("sqlite file", async () => {
  const path = join(dir, `nested/a${++files}.db`);
  const open: AccountStore[] = [openSqliteAccountStore(path)];
  return {
    store: open[0],
    reopen: async () => {
      const again = openSqliteAccountStore(path);
      open.push(again);
      return again;
    },
    close: async () => {
      for (const store of open) await store.close();
    },
  };
});
