// The serving key's fingerprint through SQLite's own paths: a database of schema 5
// migrated with rows in it, a journal line an older gateway wrote, and what a reader in
// another process sees of the journal's tail (logs by key and status class, spend by key
// and by day).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { migrations, schemaVersion } from "../../src/state/migrations.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { normalizeEntry } from "../../src/state/entry.js";
import { entryOfJournalRow } from "../../src/state/sqlite-queries.js";
import { journalLine, rowsOfLines } from "../../src/state/sqlite-journal.js";
import { entry } from "../helpers/usage-entry.js";
import { assertSameOnceIngested, withJournalTail } from "../helpers/sqlite-tail.js";

const dir = mkdtempSync(join(tmpdir(), "gateway-store-keys-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("an entry's key survives its journal line; one without reads back without", () => {
  for (const e of [entry({ requestId: "k", channel: "east", key: "1a2b3c4d" }), entry({ requestId: "n", channel: "east", status: 502 })]) {
    const row = rowsOfLines(journalLine(e), () => assert.fail(`line of ${e.requestId} skipped`));
    assert.deepEqual(entryOfJournalRow(row), normalizeEntry(e));
  }
});

test("a database of schema 5 is migrated to 6; its rows read back without a key and count under none", () => {
  const path = join(dir, "v5.db");
  const db = new Database(path);
  for (const m of migrations.slice(0, 5)) db.exec(m.sql);
  db.pragma("user_version = 5");
  db.prepare(`INSERT INTO usage_log (request_id, time, token, user, grp, model, channel, inbound_protocol, input,
    cache_read, cache_write, output, reasoning, cost_nano, status, duration_ms, estimated, channel_cost_nano)
    VALUES ('old', 1000, 't1', 'alice', 'default', 'm', 'east', 'chat-completions', 1, 0, 0, 1, 0, 5000, 200, 1.5, 0, 4000)`).run();
  db.close();

  const store = openSqliteStore(path);
  try {
    assert.ok(schemaVersion >= 6, "the key column came with migration 6");
    const [old] = store.logs({});
    assert.equal(old.costNano, 5000n);
    assert.equal("key" in old, false);
    const fresh = entry({ requestId: "new", time: 2000, channel: "east", key: "aaaa1111", costNano: 900n, channelCostNano: 700n });
    void store.record(fresh);
    assert.deepEqual(store.logs({ requestId: "new" }), [fresh]);
    assert.deepEqual(store.logs({ key: "aaaa1111" }).map((e) => e.requestId), ["new"]);
    assert.deepEqual(store.spend("key", {}).map((r) => [r.key, r.costNano, r.channelCostNano]), [["", 5000n, 4000n], ["east/aaaa1111", 900n, 700n]]);
  } finally {
    store.close();
  }
});

test("a journal line written before the key column (25 values) replays without a key", () => {
  mkdirSync(join(dir, "legacy"), { recursive: true });
  const path = join(dir, "legacy/old.db");
  const line = JSON.parse(journalLine(entry({ requestId: "v5", channel: "east", channelCostNano: 3n }))) as unknown[];
  assert.equal(line.length, 26);
  line.pop(); // what a gateway of schema 5 wrote
  writeFileSync(`${path}-charges-000001.jsonl`, JSON.stringify(line) + "\n");
  const store = openSqliteStore(path);
  try {
    const [e] = store.logs({ requestId: "v5" });
    assert.equal(e?.channelCostNano, 3n);
    assert.equal("key" in e, false);
  } finally {
    store.close();
  }
});

test("a reader in another process sees the journal's keys, status classes and days exactly as SQLite will", async () => {
  const path = join(dir, "tail/gateway.db");
  const day = Date.UTC(2026, 10, 26);
  await withJournalTail(path, {}, async (world) => {
    const { store, reader, locker } = world;
    await store.record(entry({ requestId: "in-sqlite", time: day - 1, channel: "east", key: "aaaa1111", costNano: 70n, channelCostNano: 50n }));
    store.flush();
    locker.exec("BEGIN IMMEDIATE"); // SQLite takes in nothing more until the lock goes
    const tail = [
      entry({ requestId: "j1", time: day + 1, channel: "east", key: "aaaa1111", costNano: 30n, channelCostNano: 40n }),
      entry({ requestId: "j2", time: day + 2, channel: "east", key: "bbbb2222", costNano: 100n, channelCostNano: 1n, status: 201 }),
      entry({ requestId: "j3", time: day + 3, channel: "west", key: "bbbb2222", costNano: 0n, status: 429 }),
      entry({ requestId: "j4", time: day + 4, channel: "west", costNano: 0n, status: 502 }),
    ];
    await Promise.all(tail.map((e) => store.record(e)));
    assert.equal(locker.prepare("SELECT COUNT(*) FROM usage_log").pluck().get(), 1, "SQLite holds only the first");

    const seen = () => ({
      j2: reader.logs({ requestId: "j2" }),
      a: reader.logs({ key: "aaaa1111" }).map((e) => e.requestId),
      b4xx: reader.logs({ key: "bbbb2222", statusClass: 4 }).map((e) => e.requestId),
      ok: reader.logs({ statusClass: 2 }).map((e) => e.requestId),
      keys: reader.spend("key", {}).map((r) => [r.key, r.requests, r.costNano, r.channelCostNano, r.channelCostUnknown]),
      days: reader.spend("day", {}).map((r) => [r.key, r.requests, r.costNano]),
      // UTC-5 on these days: every entry but the first is on the 25th there.
      newYork: reader.spend("day", { timeZone: "America/New_York" }).map((r) => [r.key, r.requests, r.costNano]),
    });
    const during = seen();
    assert.deepEqual(during.j2, [tail[1]]);
    assert.deepEqual(during.a, ["j1", "in-sqlite"]);
    assert.deepEqual(during.b4xx, ["j3"]);
    assert.deepEqual(during.ok, ["j2", "j1", "in-sqlite"]);
    // Equal costs are ordered by key, as every dimension is.
    assert.deepEqual(during.keys, [
      ["east/aaaa1111", 2, 100n, 90n, 0],
      ["east/bbbb2222", 1, 100n, 1n, 0],
      ["", 1, 0n, 0n, 0],
      ["west/bbbb2222", 1, 0n, 0n, 0],
    ]);
    assert.deepEqual(during.days, [["2026-11-26", 4, 130n], ["2026-11-25", 1, 70n]]);
    assert.deepEqual(during.newYork, [["2026-11-25", 5, 200n]]);

    assertSameOnceIngested(world, seen, during);
  });
});
