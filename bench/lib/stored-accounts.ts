// An accounts store filled for the benchmarks: the bench user and its token, and filler
// tokens up to `total`, written to a SQLite file in bulk (one transaction, prepared
// statements: a million rows in seconds, where the store's API would audit each one).

import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import { benchToken } from "./shared.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Opens the build's SQLite accounts store at `path` with `total` tokens (the bench token
 * among them, owned by user `bench` with a large opening credit). */
export async function fillAccountStore(lib: string, path: string, total: number): Promise<import("../../src/accounts/store.js").AccountStore> {
  const { openSqliteAccountStore } = (await import(`${lib}/accounts/sqlite-store.js`)) as typeof import("../../src/accounts/sqlite-store.js");
  const store = openSqliteAccountStore(path);
  await store.createUser({ name: "bench", groups: ["default"], openingCredit: { amountNano: 10n ** 15n, reason: "bench" } }, { actor: "bench" });
  await store.createToken({ name: "bench", keyHash: sha256(benchToken), user: "bench", group: "default" }, { actor: "bench" });
  fillTokens(path, total - 1);
  return store;
}

/** Adds `count` tokens of user `bench` straight into the table. */
export function fillTokens(path: string, count: number): void {
  const db = new Database(path);
  db.pragma("busy_timeout = 10000");
  const insert = db.prepare(`INSERT INTO account_tokens (name, key_hash, user, grp, status, created_at, updated_at, version)
    VALUES (?, ?, 'bench', 'default', 'active', ?, ?, 1)`);
  const now = Date.now();
  db.transaction(() => {
    for (let i = 0; i < count; i++) insert.run(`fill-${i}`, sha256(`sk-fill-${i}`), now, now);
  })();
  db.close();
}
