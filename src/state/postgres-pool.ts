// A connection pool to a PostgreSQL database the gateway keeps state in (the ledger, the
// accounts): bounded connects and statements, its schema migrated before it is handed out,
// and an error that names the server (never the password) when it cannot be used.

import pg from "pg";
import { migratePostgres } from "./postgres-migrations.js";

/** `postgres://user@host:port/db`: where the server is, without the password. */
export function describePostgresUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    u.search = "";
    return u.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}

export interface PoolOptions {
  /** Connections in the pool; default 4. */
  readonly poolSize?: number;
  /** How long connecting (or waiting for a free connection) may take; default 3000 ms. */
  readonly connectTimeoutMs?: number;
  /** How long a statement may run; default 5000 ms. */
  readonly statementTimeoutMs?: number;
}

/**
 * Opens a pool on `url` and migrates the schema. Throws `<what>: cannot use postgres at
 * <address>: <why>` when it cannot. The pool has no error listener: the caller adds its own.
 */
export async function openMigratedPool(url: string, what: string, applicationName: string, opts: PoolOptions = {}): Promise<pg.Pool> {
  const statementTimeoutMs = opts.statementTimeoutMs ?? 5000;
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 4,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 3000,
    // Server side first; the client-side bound also covers a server that stopped answering.
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + 1000,
    keepAlive: true,
    application_name: applicationName,
  });
  // An idle connection dropped while migrating is reported by the migration itself.
  const ignore = () => {};
  pool.on("error", ignore);
  try {
    await migratePostgres(pool);
  } catch (error) {
    await pool.end().catch(() => {});
    throw new Error(`${what}: cannot use postgres at ${describePostgresUrl(url)}: ${postgresErrorText(error)}`);
  }
  pool.off("error", ignore);
  return pool;
}

/** A driver error as one line (a refused connect comes as an AggregateError with no message). */
export function postgresErrorText(error: unknown): string {
  const e = error as { message?: string; code?: string };
  if (error instanceof AggregateError && !e.message) return error.errors.map((x) => String((x as Error).message)).join("; ");
  return e.message || e.code || String(error);
}
