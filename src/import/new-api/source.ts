// Opens new-api's database read-only, whatever it runs on (SQLite, PostgreSQL, MySQL or
// MariaDB), behind one small interface: every row of a table as a plain object. The
// import reads whole tables once, so nothing here needs more than `SELECT *`.

import Database from "better-sqlite3";
import pg from "pg";

/** One row as the driver gives it: column name → value. */
export type Row = Readonly<Record<string, unknown>>;

/** new-api's database, opened for reading. */
export interface NewApiSource {
  /** Where it is, for messages (the password masked). */
  readonly shown: string;
  /** Every row of `table`; an empty list when the table does not exist. */
  rows(table: string): Promise<readonly Row[]>;
  close(): Promise<void>;
}

/** Where the database is, from `--from`. */
export type SourceLocation =
  | { readonly kind: "sqlite"; readonly path: string }
  | { readonly kind: "postgres"; readonly url: string }
  | { readonly kind: "mysql"; readonly url: string };

/** A `--from` value the import cannot read. */
export class BadSourceUrl extends Error {}

/** Parses sqlite:/path/one-api.db (or sqlite:///path), postgres://…, mysql://… (mariadb://). */
export function parseSourceUrl(text: string): SourceLocation {
  if (text.startsWith("sqlite:")) {
    const path = text.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
    if (!path) throw new BadSourceUrl("sqlite: needs a path, as in sqlite:/data/one-api.db");
    return { kind: "sqlite", path };
  }
  if (/^postgres(ql)?:\/\//.test(text)) return { kind: "postgres", url: text };
  if (/^(mysql|mariadb):\/\//.test(text)) return { kind: "mysql", url: text.replace(/^mariadb:/, "mysql:") };
  throw new BadSourceUrl(`'${text}': expected sqlite:/path/one-api.db, mysql://user:pass@host:3306/db or postgres://user:pass@host:5432/db`);
}

/** The URL with its password replaced by ***, for messages. */
export function maskedUrl(text: string): string {
  return text.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, "$1***@");
}

/** Table names are ours (users, tokens, …), never input: still, only plain words pass. */
function checkedTable(table: string): string {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`not a table name: ${table}`);
  return table;
}

function openSqlite(path: string): NewApiSource {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  return {
    shown: `sqlite:${path}`,
    async rows(table) {
      const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(checkedTable(table));
      return exists ? (db.prepare(`SELECT * FROM "${table}"`).all() as Row[]) : [];
    },
    async close() {
      db.close();
    },
  };
}

async function openPostgres(url: string): Promise<NewApiSource> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  return {
    shown: maskedUrl(url),
    async rows(table) {
      const exists = await client.query("SELECT to_regclass($1) AS t", [checkedTable(table)]);
      if (exists.rows[0]?.t === null) return [];
      return (await client.query(`SELECT * FROM "${table}"`)).rows as Row[];
    },
    async close() {
      await client.end();
    },
  };
}

async function openMysql(url: string): Promise<NewApiSource> {
  // Loaded only for a MySQL import: the gateway's start does not pay for the driver.
  const { default: driver } = await import("mysql2/promise");
  const connection = await driver.createConnection(url);
  return {
    shown: maskedUrl(url),
    async rows(table) {
      const [found] = await connection.query("SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?", [checkedTable(table)]);
      if ((found as unknown[]).length === 0) return [];
      const [rows] = await connection.query(`SELECT * FROM \`${table}\``);
      return rows as Row[];
    },
    async close() {
      await connection.end();
    },
  };
}

/** Opens the database `location` names. Throws BadSourceUrl or what the driver throws. */
export async function openNewApiSource(location: SourceLocation): Promise<NewApiSource> {
  switch (location.kind) {
    case "sqlite": return openSqlite(location.path);
    case "postgres": return openPostgres(location.url);
    case "mysql": return openMysql(location.url);
  }
}
