// Ledgers of an older schema, for migration tests: the migrations up to a version applied
// by hand (as a gateway of that version would have), and a ledger's tables copied into one.

import pg from "pg";
import { postgresMigrations } from "../../src/state/postgres-migrations.js";

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Applies migrations 1 to `version` to the empty database at `url`, recording each. */
export function ledgerAtVersion(url: string, version: number): Promise<void> {
  return withClient(url, async (client) => {
    await client.query("CREATE TABLE schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
    for (const m of postgresMigrations.slice(0, version)) {
      await client.query(m.sql);
      await client.query("INSERT INTO schema_migrations (version, description) VALUES ($1, $2)", [m.version, m.description]);
    }
  });
}

/** Copies each table's rows from one ledger to another with those tables (empty), column by
 * column as the target has them; usage_log's seq is kept, so the order of entries is too. */
export function copyLedgerTables(fromUrl: string, toUrl: string, tables: readonly string[]): Promise<void> {
  return withClient(fromUrl, (from) => withClient(toUrl, async (to) => {
    for (const table of tables) {
      const { rows: columns } = await to.query<{ name: string; identity: string }>(
        "SELECT column_name AS name, is_identity AS identity FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position", [table]);
      const list = columns.map((c) => `"${c.name}"`).join(", ");
      const { rows } = await from.query(`SELECT ${list} FROM ${table}`);
      const overriding = columns.some((c) => c.identity === "YES") ? "OVERRIDING SYSTEM VALUE" : "";
      for (const row of rows) {
        const values = columns.map((c) => row[c.name]);
        await to.query(`INSERT INTO ${table} (${list}) ${overriding} VALUES (${values.map((_, i) => `$${i + 1}`).join(", ")})`, values);
      }
    }
  }));
}
