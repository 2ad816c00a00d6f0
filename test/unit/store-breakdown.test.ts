// The breakdown and the cost to the operator through SQLite's own paths: a database of
// schema 4 migrated with rows in it, a journal line an older gateway wrote, and what a
// reader in another process sees of the journal's tail (logs, --channel, spend by channel).

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

const dir = mkdtempSync(join(tmpdir(), "gateway-store-breakdown-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const BREAKDOWN = "input=1200@3/1M output=300@15/1M multiplier=1";

test("any entry survives its journal line exactly: breakdown text and channel cost included", () => {
  let seed = 21;
  const next = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
  const texts = ["", "multiplier=1", BREAKDOWN, `odd "quotes" \\ and 模型 🙂`];
  for (let i = 0; i < 200; i++) {
    const e = entry({
      requestId: `p${i}`,
      costNano: BigInt(next(1_000_000)) * BigInt(next(1_000_000)),
      ...(next(3) > 0 && { channel: `c${next(4)}` }),
      ...(next(4) > 0 && { breakdown: texts[next(texts.length)] }),
      ...(next(4) > 0 && { channelCostNano: next(2) ? 2n ** 62n + BigInt(next(1000)) : BigInt(next(1000)) }),
    });
    const row = rowsOfLines(journalLine(e), () => assert.fail(`line of ${e.requestId} skipped`));
    assert.deepEqual(entryOfJournalRow(row), normalizeEntry(e), e.requestId);
  }
});

test("a database of schema 4 is migrated to 5; its rows read back without breakdown or cost to the operator", () => {
  const path = join(dir, "v4.db");
  const db = new Database(path);
  for (const m of migrations.slice(0, 4)) db.exec(m.sql);
  db.pragma("user_version = 4");
  db.prepare(`INSERT INTO usage_log (request_id, time, token, user, grp, model, channel, inbound_protocol, input,
    cache_read, cache_write, output, reasoning, cost_nano, status, duration_ms, estimated)
    VALUES ('old', 1000, 't1', 'alice', 'default', 'm', 'east', 'chat-completions', 1, 0, 0, 1, 0, 5000, 200, 1.5, 0)`).run();
  db.close();

  const store = openSqliteStore(path);
  try {
    assert.ok(schemaVersion >= 6); // and on to 6 (the serving key: store-keys.test.ts)
    const [old] = store.logs({});
    assert.equal(old.costNano, 5000n);
    assert.equal("breakdown" in old, false);
    assert.equal("channelCostNano" in old, false);
    const fresh = entry({ requestId: "new", time: 2000, channel: "east", costNano: 900n, breakdown: BREAKDOWN, channelCostNano: 700n });
    void store.record(fresh);
    assert.deepEqual(store.logs({ requestId: "new" }), [fresh]);
    assert.deepEqual(store.spend("channel", {}).map((r) => [r.key, r.costNano, r.channelCostNano, r.channelCostUnknown]), [["east", 5900n, 700n, 1]]);
  } finally {
    store.close();
  }
});

test("journal lines of older gateways (21 and 23 values) replay without the new fields; a line of this one with them", () => {
  mkdirSync(join(dir, "legacy"), { recursive: true });
  const path = join(dir, "legacy/old.db");
  const v3 = ["v3", 1000, "t1", "alice", "default", "m", null, "east", "chat-completions", null, 10, 0, 0, 5, 0, "1000", 200, null, 12.5, null, 0];
  const v4 = [...v3.slice(0, 21), null, "web_search:1"];
  v4[0] = "v4";
  const now = entry({ requestId: "v5", channel: "east", breakdown: BREAKDOWN, channelCostNano: 2n ** 60n });
  writeFileSync(`${path}-charges-000001.jsonl`, JSON.stringify(v3) + "\n" + JSON.stringify(v4) + "\n" + journalLine(now));
  const store = openSqliteStore(path);
  try {
    const byId = new Map(store.logs({}).map((e) => [e.requestId, e]));
    assert.deepEqual([...byId.keys()].sort(), ["v3", "v4", "v5"]);
    for (const id of ["v3", "v4"]) {
      assert.equal("breakdown" in byId.get(id)!, false);
      assert.equal("channelCostNano" in byId.get(id)!, false);
    }
    assert.deepEqual(byId.get("v4")!.usage.toolCalls, { web_search: 1 });
    assert.deepEqual(byId.get("v5"), now);
  } finally {
    store.close();
  }
});

test("a reader in another process sees the journal's breakdowns, channels and channel costs exactly as SQLite will", async () => {
  const path = join(dir, "tail/gateway.db");
  await withJournalTail(path, {}, async (world) => {
    const { store, reader, locker } = world;
    await store.record(entry({ requestId: "in-sqlite", time: 1000, channel: "east", costNano: 70n, breakdown: BREAKDOWN, channelCostNano: 50n }));
    store.flush();
    locker.exec("BEGIN IMMEDIATE"); // SQLite takes in nothing more until the lock goes
    const tail = [
      entry({ requestId: "j1", time: 1001, channel: "east", costNano: 30n, breakdown: BREAKDOWN, channelCostNano: 40n }),
      entry({ requestId: "j2", time: 1002, channel: "west", costNano: 100n, breakdown: "requests=1@0.0000001/1 multiplier=1", channelCostNano: 1n }),
      entry({ requestId: "j3", time: 1003, channel: "west", costNano: 9n }), // no cost recorded: unknown
      entry({ requestId: "j4", time: 1004, costNano: 0n, status: 401 }),
    ];
    await Promise.all(tail.map((e) => store.record(e)));
    assert.equal(locker.prepare("SELECT COUNT(*) FROM usage_log").pluck().get(), 1, "SQLite holds only the first");

    const seen = () => ({
      j1: reader.logs({ requestId: "j1" }),
      j3: reader.logs({ requestId: "j3" }),
      east: reader.logs({ channel: "east" }).map((e) => e.requestId),
      channels: reader.spend("channel", {}),
    });
    const during = seen();
    assert.deepEqual(during.j1, [tail[0]]);
    assert.deepEqual(during.j3, [tail[2]]);
    assert.deepEqual(during.east, ["j1", "in-sqlite"]);
    assert.deepEqual(during.channels.map((r) => [r.key, r.requests, r.costNano, r.channelCostNano, r.channelCostUnknown]), [
      ["west", 2, 109n, 1n, 1],
      ["east", 2, 100n, 90n, 0],
      ["", 1, 0n, 0n, 0],
    ]);

    assertSameOnceIngested(world, seen, during);
  });
});
