// `gateway migrate --from sqlite:<path> --to postgres://…`: copies the embedded store's
// usage log into the PostgreSQL ledger, refunds included, and the rollups and spend of
// entries its retention removed. Idempotent (entries already in
// the ledger are left alone, so it can be rerun); prints counts and the settled spend on
// both sides so the operator can compare them. Run it with the gateway stopped.

import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { entryOfRow, type UsageRow } from "../state/entry.js";
import { parseStoreSpec, type StoreLocation } from "../state/open.js";
import { openPostgresUsageLog, type PostgresUsageLog } from "../state/postgres-log.js";
import { describePostgresUrl } from "../state/postgres-pool.js";
import { thinnedRollups } from "../state/thinned-rollups.js";
import { openSqliteStore } from "../state/sqlite.js";
import type { UsageEntry } from "../state/store.js";
import { UsageError, type Flags } from "./args.js";
import { runCommand, type Command } from "./command.js";
import { processIo, type CliIo } from "./format.js";

/** Entries read from SQLite and committed to PostgreSQL per round. */
const CHUNK = 1000;

/** Counts and settled spend of one side. */
interface Side {
  readonly entries: number;
  readonly refunded: number;
  readonly tokens: ReadonlyMap<string, bigint>;
  readonly users: ReadonlyMap<string, bigint>;
}

function total(m: ReadonlyMap<string, bigint>): bigint {
  let sum = 0n;
  for (const v of m.values()) sum += v;
  return sum;
}

function sqliteSide(db: Database.Database): Side {
  const counts = db.prepare("SELECT count(*) AS entries, count(refunded_at) AS refunded FROM usage_log").get() as { entries: bigint; refunded: bigint };
  const tokens = new Map<string, bigint>();
  const users = new Map<string, bigint>();
  for (const r of db.prepare("SELECT kind, name, nano FROM spend").all() as { kind: string; name: string; nano: bigint }[]) {
    (r.kind === "token" ? tokens : users).set(r.name, r.nano);
  }
  return { entries: Number(counts.entries), refunded: Number(counts.refunded), tokens, users };
}

async function postgresSide(ledger: PostgresUsageLog): Promise<Side> {
  const [counts, totals] = await Promise.all([ledger.counts(), ledger.spendTotals()]);
  return { ...counts, ...totals };
}

/** Names whose spend differs between the sides (a name absent on one side counts as 0). */
function differences(kind: string, a: ReadonlyMap<string, bigint>, b: ReadonlyMap<string, bigint>): string[] {
  const out: string[] = [];
  for (const name of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(name) ?? 0n;
    const y = b.get(name) ?? 0n;
    if (x !== y) out.push(`  ${kind} ${name}: sqlite ${x} nano, postgres ${y} nano`);
  }
  return out;
}

/** How many of `m` have spent something (a counter refunded back to 0 is left out). */
function spenders(m: ReadonlyMap<string, bigint>): number {
  let n = 0;
  for (const v of m.values()) if (v !== 0n) n++;
  return n;
}

function describeSide(name: string, s: Side): string {
  return `${name}: ${s.entries} entries (${s.refunded} refunded), settled spend ${total(s.users)} nano over ${spenders(s.users)} users and ${spenders(s.tokens)} tokens\n`;
}

export const migrateCommand: Command = {
  name: "migrate",
  summary: "Copies the SQLite store's usage log into a PostgreSQL ledger and compares the spend on both sides.",
  synopsis: "gateway migrate --from sqlite:./data/gateway.db --to postgres://user@host:5432/db",
  options: {
    from: { type: "string", value: "sqlite:<path>", description: "the store file to copy from (the gateway stopped)" },
    to: { type: "string", value: "postgres://…", description: "the PostgreSQL ledger to copy into" },
  },
  run: (flags, io) => {
    const { from, to } = endsOf(flags);
    return migrate(from, to, io);
  },
};

/** Runs `gateway migrate`; resolves to the exit code (see `migrate`; 2 bad command line). */
export async function runMigrate(args: readonly string[], io: CliIo = processIo): Promise<number> {
  return runCommand(migrateCommand, args, io);
}

/** The SQLite file and the PostgreSQL URL named by --from and --to; UsageError otherwise. */
function endsOf(flags: Flags): { from: string; to: string } {
  const [fromSpec, toSpec] = [flags.values.get("from"), flags.values.get("to")];
  if (!fromSpec || !toSpec) throw new UsageError("both --from and --to are needed");
  const source = storeOf("from", fromSpec);
  const target = storeOf("to", toSpec);
  if (source.kind !== "sqlite" || source.path === ":memory:") throw new UsageError("--from must be sqlite:<path> of a store file");
  if (target.kind !== "postgres") throw new UsageError("--to must be postgres://…");
  return { from: source.path, to: target.url };
}

/** A store spec as parseStoreSpec reads it; an unreadable one is a bad command line. */
function storeOf(flag: string, spec: string): StoreLocation {
  try {
    return parseStoreSpec(spec, process.cwd());
  } catch (error) {
    throw new UsageError(`--${flag}: ${(error as Error).message}`);
  }
}

/**
 * Copies `from` into `to`; resolves to the exit code: 0 copied and the spend totals
 * match, 1 they differ or a side could not be read.
 */
async function migrate(from: string, to: string, io: CliIo): Promise<number> {
  if (!existsSync(from)) {
    io.err(`no store at ${from}\n`);
    return 1;
  }
  let ledger: PostgresUsageLog | undefined;
  let db: Database.Database | undefined;
  try {
    // Opening the store to write commits what a stopped gateway left in its journal.
    openSqliteStore(from).close();
    db = new Database(from, { readonly: true, fileMustExist: true });
    db.defaultSafeIntegers(true);
    ledger = await openPostgresUsageLog(to);
    const before = (await ledger.counts()).entries;
    let chunk: UsageEntry[] = [];
    for (const row of db.prepare("SELECT * FROM usage_log ORDER BY rowid").iterate() as IterableIterator<UsageRow>) {
      chunk.push(entryOfRow(row));
      if (chunk.length === CHUNK) (await ledger.importEntries(chunk), (chunk = []));
    }
    await ledger.importEntries(chunk);
    // Entries retention removed are in the store's rollups and spend only: carried over.
    const thinned = thinnedRollups(db);
    let carried = "";
    if (thinned.length > 0) {
      const c = await ledger.carryOver(thinned);
      carried = c.rows === 0
        ? `the rollups and spend of entries retention removed: carried over already\n`
        : `carried over the rollups and spend of ${c.requests} entries retention removed (${c.costNano} nano settled) on ${c.rows} rollup rows\n`;
      if (c.conflicting > 0) carried += `left alone ${c.conflicting} rollup rows the ledger holds more of than the store (entries from elsewhere?)\n`;
    }
    const sqlite = sqliteSide(db);
    const postgres = await postgresSide(ledger);
    io.out(`copied ${postgres.entries - before} new entries to ${describePostgresUrl(to)} (${sqlite.entries - (postgres.entries - before)} were there already)\n${carried}`);
    io.out(describeSide(`sqlite   ${from}`, sqlite));
    io.out(describeSide(`postgres ${describePostgresUrl(to)}`, postgres));
    const diff = [...differences("user", sqlite.users, postgres.users), ...differences("token", sqlite.tokens, postgres.tokens)];
    if (diff.length === 0) {
      io.out("settled spend per user and token: identical\n");
      return 0;
    }
    io.out(`settled spend differs for ${diff.length} users or tokens (entries in postgres that sqlite does not have?):\n${diff.join("\n")}\n`);
    return 1;
  } catch (error) {
    io.err(`migrate: ${(error as Error).message}\n`);
    return 1;
  } finally {
    db?.close();
    await ledger?.close();
  }
}
