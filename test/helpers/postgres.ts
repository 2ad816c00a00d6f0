// A fresh PostgreSQL database per test file on the machine's server (127.0.0.1:5432, user
// postgres, trust auth), named from the process id and a random suffix so parallel test
// files and runs never see each other's state; dropped (FORCE) when the file is done.

import { randomBytes } from "node:crypto";
import pg from "pg";

/** The server tests use; override with GATEWAY_TEST_POSTGRES (an admin URL). */
export const POSTGRES_ADMIN_URL = process.env.GATEWAY_TEST_POSTGRES ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  /** postgres://… of the new, empty database. */
  readonly url: string;
  readonly name: string;
  /** Drops the database, closing whatever connections are still open to it. */
  drop(): Promise<void>;
}

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** DROP DATABASE … WITH (FORCE) (PostgreSQL 13+); on older servers, ends its sessions first. */
async function dropDatabase(c: pg.Client, name: string): Promise<void> {
  try {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } catch (error) {
    if ((error as { code?: string }).code !== "42601") throw error; // syntax error: no FORCE here
    await c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [name]);
    await c.query(`DROP DATABASE IF EXISTS "${name}"`);
  }
}

/** Creates an empty database; call `drop()` in an `after` hook. */
export async function createTestDatabase(label = "gw"): Promise<TestDatabase> {
  const name = `${label}_${process.pid}_${randomBytes(4).toString("hex")}`.toLowerCase();
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin((c) => dropDatabase(c, name)),
  };
}
