// The accounts store contract (test/contracts/account-store.ts) on the in-process
// implementations: memory, and SQLite in a file (reopened: a second store object on the
// same file, as a second gateway process would open it).

import { MemoryAccountStore } from "../../src/accounts/memory-store.js";
import { accountStoreContract } from "../contracts/account-store.js";

accountStoreContract("memory", async () => {
  const store = new MemoryAccountStore();
  return { store, close: () => store.close() };
});
