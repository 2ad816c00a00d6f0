// The PostgreSQL ledger's migration 3 on the machine's server: a ledger of schema 2 with an
// entry in it is brought to 3; the old entry reads back without a breakdown or a cost to
// the operator (counted unknown by spend), a new one with both, exactly.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { postgresMigrations } from "../../src/state/postgres-migrations.js";
import { openPostgresUsageLog } from "../../src/state/postgres-log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { entry } from "../helpers/usage-entry.js";

let db: TestDatabase | undefined;
after(() => db?.drop());

test("a ledger of schema 2 is migrated to 3; old rows read back without the new fields, new ones with them", async () => {
  db = await createTestDatabase("pgbreakdown");
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query("CREATE TABLE schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
    for (const m of postgresMigrations.slice(0, 2)) {
      await client.query(m.sql);
      await client.query("INSERT INTO schema_migrations (version, description) VALUES ($1, $2)", [m.version, m.description]);
    }
    await client.query(`INSERT INTO usage_log (request_id, time, token, "user", grp, model, channel, inbound_protocol, input,
      cache_read, cache_write, output, reasoning, cost_nano, status, duration_ms, estimated)
      VALUES ('old', 1000, 't1', 'alice', 'default', 'm', 'east', 'chat-completions', 1, 0, 0, 1, 0, 5000, 200, 1.5, false)`);
  } finally {
    await client.end();
  }

  const log = await openPostgresUsageLog(db.url);
  try {
    const [old] = await log.logs({ requestId: "old" });
    assert.equal(old.costNano, 5000n);
    assert.equal("breakdown" in old, false);
    assert.equal("channelCostNano" in old, false);
    const fresh = entry({
      requestId: "new", time: 2000, channel: "east", costNano: 9_000_000_000_000_000_001n,
      breakdown: "input=1200@3/1M output=300@15/1M multiplier=1", channelCostNano: 9_000_000_000_000_000_000n,
    });
    await log.append(fresh);
    assert.deepEqual(await log.logs({ requestId: "new" }), [fresh]);
    assert.deepEqual((await log.logs({ channel: "east" })).map((e) => e.requestId), ["new", "old"]);
    assert.deepEqual((await log.spend("channel", {})).map((r) => [r.key, r.requests, r.costNano, r.channelCostNano, r.channelCostUnknown]), [
      ["east", 2, 9_000_000_000_000_005_001n, 9_000_000_000_000_000_000n, 1],
    ]);
  } finally {
    await log.close();
  }
});
