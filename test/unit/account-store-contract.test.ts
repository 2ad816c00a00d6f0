// The accounts store contract (test/contracts/account-store.ts) on the in-process
// implementations: memory, and SQLite in a file (reopened: a second store object on the
// same file, as a second gateway process would open it). Then what only SQLite promises:
// other processes on the same file at once, the usage log's file shared, the change feed
// pruned after an hour.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { after, describe, test } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { entry } from "../helpers/usage-entry.js";
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
}, { reopens: true });

const storeModule = fileURLToPath(new URL("../../src/accounts/sqlite-store.ts", import.meta.url));
const hashOf = (label: string): string => Buffer.from(label).toString("hex").padEnd(64, "0").slice(0, 64);

/**
 * A process that opens the accounts store at `path`, says "ready", and on "go" redeems
 * every code and adds every keyed credit (both in its own order), then prints what it got.
 */
function racer(path: string, codes: readonly string[], keys: readonly string[], seed: number) {
  const script = `
    import { openSqliteAccountStore } from ${JSON.stringify(storeModule)};
    import { createInterface } from "node:readline";
    const store = openSqliteAccountStore(${JSON.stringify(path)});
    const codes = ${JSON.stringify(codes)}, keys = ${JSON.stringify(keys)};
    const order = (xs) => xs.map((x, i) => [(i * 7919 + ${seed}) % 101, x]).sort((a, b) => a[0] - b[0]).map(([, x]) => x);
    console.log("ready");
    for await (const line of createInterface({ input: process.stdin })) {
      if (line !== "go") continue;
      const redeemed = [], created = [];
      await Promise.all([
        ...order(codes).map(async (c) => { if ((await store.redeem(c, "alice", { actor: "token:p${seed}" }, Date.now())).ok) redeemed.push(c); }),
        ...order(keys).map(async (k) => { if ((await store.addCredit({ user: "alice", amountNano: 3n, reason: "webhook", idempotencyKey: k }, { actor: "p${seed}" })).created) created.push(k); }),
      ]);
      await store.close();
      console.log(JSON.stringify({ redeemed, created }));
      process.exit(0);
    }`;
  return spawnScript(script);
}

/** A Node process running `script` (TypeScript imports allowed), and its stdout's lines. */
function spawnScript(script: string) {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const { value, done } = await lines.next();
    assert.ok(!done, "the racer ended early");
    return value as string;
  };
  return { child, next };
}

describe("SQLite accounts store", () => {
  test("three processes redeeming the same codes and crediting the same keys at once: each once", async () => {
    const path = join(dir, "race/accounts.db");
    const store = openSqliteAccountStore(path);
    try {
      const codes = Array.from({ length: 40 }, (_, i) => hashOf(`code-${i}`));
      const keys = Array.from({ length: 40 }, (_, i) => `evt_${i}`);
      await store.createCodes({ batch: "race", amountNano: 10n ** 16n, expiresAt: Date.now() + 3_600_000, codeHashes: codes }, { actor: "admin" });
      const racers = [1, 2, 3].map((seed) => racer(path, codes, keys, seed));
      for (const r of racers) assert.equal(await r.next(), "ready");
      for (const r of racers) r.child.stdin!.write("go\n");
      const results = await Promise.all(racers.map(async (r) => JSON.parse(await r.next()) as { redeemed: string[]; created: string[] }));
      await Promise.all(racers.map((r) => new Promise((resolve) => (r.child.exitCode === null ? r.child.once("exit", resolve) : resolve(null)))));

      const redeemed = results.flatMap((r) => r.redeemed).sort();
      const created = results.flatMap((r) => r.created).sort();
      assert.deepEqual(redeemed, [...codes].sort(), "every code redeemed exactly once");
      assert.deepEqual(created, [...keys].sort(), "every key credited exactly once");
      assert.equal(await store.creditOf("alice"), 40n * 10n ** 16n + 40n * 3n);
      assert.equal((await store.creditEntries("alice", { limit: 1000 })).items.length, 80);
      assert.equal((await store.codeBatch("race"))!.redeemed, 40);
      assert.equal((await store.audit({ limit: 1000 })).items.length, 81);
      assert.equal((await store.changesSince(0, 1000)).length, 80);
    } finally {
      await store.close();
    }
  });

  test("three processes opening a file that does not exist yet, at once: each migrates it or waits, and writes", async () => {
    const path = join(dir, "fresh/accounts.db");
    const writers = [1, 2, 3].map((n) => spawnScript(`
      import { openSqliteAccountStore } from ${JSON.stringify(storeModule)};
      import { createInterface } from "node:readline";
      console.log("ready");
      for await (const line of createInterface({ input: process.stdin })) {
        const store = openSqliteAccountStore(${JSON.stringify(path)});
        await store.createUser({ name: "user${n}" }, { actor: "p${n}" });
        for (let i = 0; i < 20; i++) await store.addCredit({ user: "user${n}", amountNano: 1n, reason: "r" }, { actor: "p${n}" });
        await store.close();
        console.log("done");
        process.exit(0);
      }`));
    for (const w of writers) assert.equal(await w.next(), "ready");
    for (const w of writers) w.child.stdin!.write("go\n");
    for (const w of writers) assert.equal(await w.next(), "done");
    const store = openSqliteAccountStore(path);
    try {
      assert.deepEqual((await store.listUsers({})).items.map((u) => u.name), ["user1", "user2", "user3"]);
      for (const n of [1, 2, 3]) assert.equal(await store.creditOf(`user${n}`), 20n);
      assert.equal((await store.changesSince(0, 1000)).length, 63);
    } finally {
      await store.close();
    }
  });

  test("the accounts live in the usage log's file, beside its entries", async () => {
    const path = join(dir, "shared/gateway.db");
    const usage = openSqliteStore(path);
    const accounts = openSqliteAccountStore(path);
    await accounts.createUser({ name: "alice" }, { actor: "admin" });
    void usage.record(entry({ requestId: "r1" }));
    usage.close();
    await accounts.close();
    const usageAgain = openSqliteStore(path);
    const accountsAgain = openSqliteAccountStore(path);
    try {
      assert.deepEqual(usageAgain.logs({}).map((e) => e.requestId), ["r1"]);
      assert.equal((await accountsAgain.user("alice"))?.name, "alice");
    } finally {
      usageAgain.close();
      await accountsAgain.close();
    }
  });

  test("the change feed keeps an hour: older changes go as new ones come, the seq goes on", async () => {
    let now = 1_700_000_000_000;
    const store = openSqliteAccountStore(join(dir, "feed/accounts.db"), { now: () => now });
    try {
      await store.createUser({ name: "a" }, { actor: "admin" });
      await store.createUser({ name: "b" }, { actor: "admin" });
      now += 3_600_000;
      await store.createUser({ name: "c" }, { actor: "admin" });
      assert.deepEqual((await store.changesSince(0, 10)).map((c) => [c.seq, c.name]), [[1, "a"], [2, "b"], [3, "c"]], "an hour old is kept");
      now += 1;
      await store.updateUser("c", { note: "x" }, { actor: "admin" });
      assert.deepEqual((await store.changesSince(0, 10)).map((c) => [c.seq, c.name]), [[3, "c"], [4, "c"]]);
      now += 2 * 3_600_000;
      await store.addCredit({ user: "d", amountNano: 1n, reason: "r" }, { actor: "admin" });
      assert.deepEqual((await store.changesSince(0, 10)).map((c) => [c.seq, c.name]), [[5, "d"]]);
      assert.equal(await store.latestChange(), 5);
      assert.equal((await store.audit({})).items.length, 5, "the audit log keeps everything");
    } finally {
      await store.close();
    }
  });
});
