// Opens the accounts store where the usage log lives: `ledger:` when set (PostgreSQL),
// else `store:` (SQLite beside the usage log, or memory). A Redis `store:` holds no
// accounts: with it, `ledger:` is required anyway (state/open.ts says so).

import { parseStoreSpec, StateUnavailable, type OpenStoreOptions } from "../state/open.js";
import { MemoryAccountStore } from "./memory-store.js";
import { openPostgresAccountStore } from "./postgres-store.js";
import { openSqliteAccountStore } from "./sqlite-store.js";
import type { AccountStore } from "./store.js";

type Opener = (location: ReturnType<typeof parseStoreSpec>, opts: OpenStoreOptions) => Promise<AccountStore>;

const openers: Partial<Record<ReturnType<typeof parseStoreSpec>["kind"], Opener>> = {
  memory: async () => new MemoryAccountStore(),
  sqlite: async (location) => openSqliteAccountStore((location as { path: string }).path),
  postgres: async (location) => openPostgresAccountStore((location as { url: string }).url),
};

/** The accounts store for `store` and `ledger`. Throws StateUnavailable or what the store throws. */
export async function openAccountStore(spec: { store?: string; ledger?: string }, opts: OpenStoreOptions): Promise<AccountStore> {
  const location = parseStoreSpec(spec.ledger ?? spec.store ?? "memory:", opts.baseDir);
  const open = openers[location.kind];
  if (!open) throw new StateUnavailable(`accounts cannot be kept in ${spec.ledger ?? spec.store}: add ledger: postgres://… (or use sqlite:<path>)`);
  return open(location, opts);
}
