// The soak's watch on the usage log while traffic runs: every few seconds it reads the log
// as `gateway logs` does (a read-only store in this process, the same code) and checks that
// every answer the clients received before the read began is in it; an answer still missing
// from a read that began more than the bound after it arrived is late. It also samples the
// journal and WAL files on disk, so their growth can be judged.

import { readdirSync, statSync } from "node:fs";
import Database from "better-sqlite3";
import { basename, dirname, join } from "node:path";
import type { Store } from "../../src/state/store.js";

/** A whole answer a client received: its request id, when it was sent and when it ended. */
export interface Answer {
  readonly id: string;
  readonly sentAt: number;
  readonly answeredAt: number;
}

export interface LagReport {
  reads: number;
  /** Answers checked against a read. */
  checked: number;
  /** Answers missing from a read that began within the bound after them (seen later). */
  missingWithinBound: number;
  /** Answers missing from a read that began more than the bound after them. */
  late: number;
  lateExamples: string[];
  /** The longest time between an answer missed by a read and the read that showed it (or
   * that found it late); 0 when every read showed every answer received before it began. */
  worstLagMs: number;
  /** How long the reads took (ms), for the report. */
  readMs: number[];
  /** Largest journal (all segments) and WAL seen on disk, bytes. */
  journalMaxBytes: number;
  walMaxBytes: number;
  /** Most entries a read showed that SQLite itself did not hold yet (read right after, from
   * SQLite alone): how far ingest was behind the journal. */
  sqliteBehindMax: number;
  /** Reads that threw. */
  errors: string[];
}

/** Sum of the sizes of the journal segments beside the store at `dbPath`, and its WAL. */
export function journalFootprint(dbPath: string): { journal: number; wal: number } {
  const prefix = `${basename(dbPath)}-charges-`;
  let journal = 0;
  for (const f of readdirSync(dirname(dbPath))) {
    if (!f.startsWith(prefix)) continue;
    try { journal += statSync(join(dirname(dbPath), f)).size; } catch { /* deleted meanwhile */ }
  }
  let wal = 0;
  try { wal = statSync(`${dbPath}-wal`).size; } catch { /* none yet */ }
  return { journal, wal };
}

export interface LagMonitor {
  readonly report: LagReport;
  /** Runs one last read for the answers not yet checked, then stops. */
  stop(): Promise<void>;
}

/**
 * Every `everyMs`, takes the answers received since the last read (`take`), reads the log
 * from the earliest of their send times through a fresh read-only store (`open`), and judges
 * them; answers missing within the bound are looked for again by a read as the bound of the
 * oldest of them runs out.
 */
export function startLagMonitor(o: { dbPath: string; everyMs: number; boundMs: number; take: () => Answer[]; open: () => Store }): LagMonitor {
  const report: LagReport = {
    reads: 0, checked: 0, missingWithinBound: 0, late: 0, lateExamples: [], worstLagMs: 0, readMs: [],
    journalMaxBytes: 0, walMaxBytes: 0, sqliteBehindMax: 0, errors: [],
  };
  let pending: Answer[] = [];
  const missed = new Set<string>();
  let running: Promise<void> = Promise.resolve();
  const read = () => {
    const began = Date.now();
    const disk = journalFootprint(o.dbPath);
    report.journalMaxBytes = Math.max(report.journalMaxBytes, disk.journal);
    report.walMaxBytes = Math.max(report.walMaxBytes, disk.wal);
    const fresh = o.take();
    report.checked += fresh.length;
    pending.push(...fresh);
    if (pending.length === 0) return;
    let since = Infinity;
    for (const a of pending) since = Math.min(since, a.sentAt);
    let visible: Set<string>;
    try {
      const store = o.open();
      try {
        // An entry's time is the request's arrival at the gateway: never before its sending.
        visible = new Set(store.logs({ since, limit: Number.MAX_SAFE_INTEGER }).map((e) => e.requestId));
      } finally {
        store.close();
      }
      const db = new Database(o.dbPath, { readonly: true, fileMustExist: true });
      try {
        const inSqlite = Number(db.prepare("SELECT COUNT(*) FROM usage_log WHERE time >= ?").pluck().get(since));
        report.sqliteBehindMax = Math.max(report.sqliteBehindMax, visible.size - inSqlite);
      } finally {
        db.close();
      }
    } catch (error) {
      report.errors.push(String(error));
      return;
    }
    report.reads++;
    report.readMs.push(Date.now() - began);
    const still: Answer[] = [];
    for (const a of pending) {
      const age = began - a.answeredAt;
      if (visible.has(a.id)) {
        // Missed by an earlier read: it became visible at most this long after its answer.
        if (missed.delete(a.id)) report.worstLagMs = Math.max(report.worstLagMs, age);
        continue;
      }
      if (age > o.boundMs) {
        missed.delete(a.id);
        report.late++;
        if (report.lateExamples.length < 3) report.lateExamples.push(`${a.id} (${age} ms)`);
        report.worstLagMs = Math.max(report.worstLagMs, age);
      } else {
        report.missingWithinBound++;
        missed.add(a.id);
        still.push(a);
      }
    }
    pending = still;
    // Look again for what this read missed as its bound runs out, not at the next tick.
    if (still.length > 0 && !stopped) {
      clearTimeout(recheck);
      const due = Math.min(...still.map((a) => a.answeredAt)) + o.boundMs - Date.now();
      recheck = setTimeout(() => { running = running.then(read); }, Math.max(0, Math.min(due, o.everyMs)));
    }
  };
  let stopped = false;
  let recheck: NodeJS.Timeout | undefined;
  const timer = setInterval(() => { running = running.then(read); }, o.everyMs);
  return {
    report,
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(recheck);
      await running;
      read();
    },
  };
}
