// The PostgreSQL ledger's migration 4 on the machine's server: a ledger of schema 3 with an
// entry in it is brought to 4; the old entry reads back without a serving key (counted under
// none by spend by key), a new one with it, and `--key` finds only the new one.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { postgresMigrations, postgresSchemaVersion } from "../../src/state/postgres-migrations.js";
import { openPostgresUsageLog } from "../../src/state/postgres-log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { entry } from "../helpers/usage-entry.js";

let db: TestDatabase | undefined;
after(() => db?.drop());

test("a ledger of schema 3 is migrated to 4; old rows read back without a key, new ones with it", async () => {
  db = await createTestDatabase("pgkeys");
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query("CREATE TABLE schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
    for (const m of postgresMigrations.slice(0, 3)) {
      await client.query(m.sql);
      await client.query("INSERT INTO schema_migrations (version, description) VALUES ($1, $2)", [m.version, m.description]);
    }
    await client.query(`INSERT INTO usage_log (request_id, time, token, "user", grp, model, channel, inbound_protocol, input,
      cache_read, cache_write, output, reasoning, cost_nano, status, duration_ms, estimated, channel_cost_nano)
      VALUES ('old', 1000, 't1', 'alice', 'default', 'm', 'east', 'chat-completions', 1, 0, 0, 1, 0, 5000, 200, 1.5, false, 4000)`);
  } finally {
    await client.end();
  }

  const log = await openPostgresUsageLog(db.url);
  try {
    assert.ok(postgresSchemaVersion >= 4, "the key column came with migration 4");
    const [old] = await log.logs({ requestId: "old" });
    assert.equal(old.costNano, 5000n);
    assert.equal("key" in old, false);
    const fresh = entry({ requestId: "new", time: 2000, channel: "east", key: "aaaa1111", costNano: 900n, channelCostNano: 700n });
    await log.append(fresh);
    assert.deepEqual(await log.logs({ requestId: "new" }), [fresh]);
    assert.deepEqual((await log.logs({ key: "aaaa1111" })).map((e) => e.requestId), ["new"]);
    assert.deepEqual((await log.spend("key", {})).map((r) => [r.key, r.requests, r.costNano, r.channelCostNano]), [
      ["", 1, 5000n, 4000n], ["east/aaaa1111", 1, 900n, 700n],
    ]);
  } finally {
    await log.close();
  }
});
