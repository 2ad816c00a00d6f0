// The accounts store contract (test/contracts/account-store.ts) on PostgreSQL, on the
// machine's server: one database, emptied before each test; `reopen` opens another store object, with
// its own pool, on the same database (what a second gateway process opens). Then what only
// the PostgreSQL store must show: its migration, the change feed read while two stores
// write, and an unreachable server.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import pg from "pg";
import { openPostgresAccountStore } from "../../src/accounts/postgres-store.js";
import type { AccountStore } from "../../src/accounts/store.js";
import { postgresMigrations } from "../../src/state/postgres-migrations.js";
import { accountStoreContract } from "../contracts/account-store.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";

/** A store on a fresh database, and `reopen` for more on the same one; `close` drops it. */
async function openFixture(): Promise<{ store: AccountStore; reopen: () => Promise<AccountStore>; close(): Promise<void>; db: TestDatabase }> {
  const db = await createTestDatabase("acct");
  const stores: AccountStore[] = [];
  const open = async () => {
    const store = await openPostgresAccountStore(db.url);
    stores.push(store);
    return store;
  };
  return {
    db,
    store: await open(),
    reopen: open,
    close: async () => {
      await Promise.all(stores.map((s) => s.close()));
      await db.drop();
    },
  };
}

/** The contract's fixture: one database for the whole suite (made once: creating one per
 * test took most of the suite's time), its account tables emptied before each test. */
let contractDb: TestDatabase | undefined;
after(async () => {
  await contractDb?.drop();
});
accountStoreContract("postgres", async () => {
  contractDb ??= await createTestDatabase("acctc");
  const url = contractDb.url;
  const stores: AccountStore[] = [];
  const open = async () => {
    const store = await openPostgresAccountStore(url);
    stores.push(store);
    return store;
  };
  const store = await open();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`TRUNCATE account_users, account_tokens, credit_entries, code_batches, redemption_codes, audit_log, account_changes
      RESTART IDENTITY`);
  } finally {
    await client.end();
  }
  return { store, reopen: open, close: async () => void (await Promise.all(stores.map((s) => s.close()))) };
}, { reopens: true });

describe("AccountStore on postgres", () => {
  const admin = { actor: "admin:ops" };

  test("migration 5 makes the accounts tables; money is bigint, names compare bytewise", async (t) => {
    const fx = await openFixture();
    t.after(() => fx.close());
    assert.equal(postgresMigrations[4]!.version, 5);
    const client = new pg.Client({ connectionString: fx.db.url });
    await client.connect();
    try {
      const { rows: versions } = await client.query("SELECT max(version) AS v FROM schema_migrations");
      assert.equal(versions[0].v, postgresMigrations.length);
      const { rows } = await client.query(`SELECT table_name, column_name, data_type, collation_name FROM information_schema.columns
        WHERE table_schema = 'public' AND column_name IN ('amount_nano', 'quota_nano', 'name') ORDER BY table_name, column_name`);
      for (const r of rows) {
        if (r.column_name === "name" && (r.table_name === "account_users" || r.table_name === "account_tokens")) assert.equal(r.collation_name, "C", r.table_name);
        if (r.column_name !== "name") assert.equal(r.data_type, "bigint", `${r.table_name}.${r.column_name}`);
      }
      assert.deepEqual(rows.filter((r) => r.column_name !== "name").map((r) => r.table_name), ["account_tokens", "code_batches", "credit_entries"]);
    } finally {
      await client.end();
    }
    // Opening again (a second gateway) migrates nothing and works.
    const again = await fx.reopen();
    await again.createUser({ name: "alice" }, admin);
    assert.equal((await fx.store.user("alice"))?.name, "alice");
  });

  test("a follower reading the change feed while two stores write sees every change once, in seq order", async (t) => {
    const fx = await openFixture();
    t.after(() => fx.close());
    const other = await fx.reopen();
    const follower = await fx.reopen();
    const writes = 120;
    const seen: number[] = [];
    let done = false;
    // Follows as accounts/directory.ts will: from the latest seq, whatever it read last.
    const follow = (async () => {
      let from = await follower.latestChange();
      for (;;) {
        const finished = done;
        const changes = await follower.changesSince(from, 50);
        for (const c of changes) seen.push(c.seq);
        if (changes.length > 0) from = changes.at(-1)!.seq;
        if (finished && changes.length === 0) return;
      }
    })();
    await Promise.all(Array.from({ length: writes }, (_, i) =>
      (i % 2 ? fx.store : other).addCredit({ user: `u${i % 7}`, amountNano: BigInt(i + 1), reason: "race" }, admin)));
    done = true;
    await follow;
    const all = (await follower.changesSince(0, 1000)).map((c) => c.seq);
    assert.equal(all.length, writes);
    assert.deepEqual(seen, all, "the follower saw each change once, none skipped");
  });

  test("change-feed rows older than an hour are deleted by a later change; the newest stays", async (t) => {
    const db = await createTestDatabase("acctfeed");
    let clock = 1_800_000_000_000;
    const store = await openPostgresAccountStore(db.url, { now: () => clock });
    t.after(async () => {
      await store.close();
      await db.drop();
    });
    await store.createUser({ name: "old" }, admin);
    clock += 3_600_000;
    await store.createUser({ name: "edge" }, admin); // exactly an hour after: "old" is kept
    assert.deepEqual((await store.changesSince(0, 10)).map((c) => c.name), ["old", "edge"]);
    clock += 1;
    await store.createUser({ name: "new" }, admin);
    assert.deepEqual((await store.changesSince(0, 10)).map((c) => [c.seq, c.name]), [[2, "edge"], [3, "new"]]);
    clock += 2 * 3_600_000;
    await store.updateUser("new", { note: "n" }, admin);
    assert.deepEqual((await store.changesSince(0, 10)).map((c) => c.seq), [4]);
    assert.equal(await store.latestChange(), 4, "a follower still starts after the last change");
    assert.equal((await store.user("new"))!.updatedAt, clock, "the injected clock stamps the records");
  });

  test("an unreachable server fails the open with an error naming postgres and the address, not the password", async () => {
    await assert.rejects(
      openPostgresAccountStore("postgres://gw:secret@127.0.0.1:1/gateway", { connectTimeoutMs: 500 }),
      (error: Error) => /accounts: cannot use postgres at postgres:\/\/gw@127\.0\.0\.1:1\/gateway/.test(error.message) && !error.message.includes("secret"));
  });
});
