// The usage log's durable journal. A settled request's entry is appended to a file before
// its answer's last bytes go out: entries settled in the same turn of the event loop share
// one write(2) (a group commit that starts as soon as the turn's work is done), so a
// kill -9 cannot lose an acknowledged charge, at a few µs where a SQLite commit costs
// 30-50 µs. The journal is also the queue to SQLite: the writer thread reads it back and
// commits it there (sqlite-ingest.ts), and deletes each segment once it holds all of it.

import { closeSync, openSync, readdirSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname } from "node:path";
import { log } from "../observability/log.js";
import { CHANNEL_COST_AT, COST_AT, ROW_WIDTH, rowOf } from "./sqlite-queries.js";
import type { UsageEntry } from "./store.js";

/** A segment this large is closed and the next one started, so settled ones can go. Small
 * enough that a reader in another process, which reads every segment still on disk (see
 * sqlite-tail.ts), reads little that SQLite holds already (~10,000 entries). */
export const SEGMENT_BYTES = 2 * 1024 * 1024;

/** The file of segment `n` of the store at `dbPath`. */
export function segmentPath(dbPath: string, n: number): string {
  return `${dbPath}-charges-${String(n).padStart(6, "0")}.jsonl`;
}

/** Deletes segment `n` (an empty one, or one SQLite holds whole). */
export function deleteSegment(dbPath: string, n: number): void {
  unlinkSync(segmentPath(dbPath, n));
}

/** The numbers of the segments the store at `dbPath` has on disk, oldest first. */
export function segmentNumbers(dbPath: string): number[] {
  const prefix = `${basename(dbPath)}-charges-`;
  return readdirSync(dirname(dbPath))
    .filter((f) => f.startsWith(prefix) && f.endsWith(".jsonl"))
    .map((f) => Number(f.slice(prefix.length, -".jsonl".length)))
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b);
}

/** One entry as a journal line: its column values (see rowOf), money as a decimal string
 * (the breakdown is text already: the line's one JSON.stringify carries it). */
export function journalLine(e: UsageEntry): string {
  const row = rowOf(e);
  row[COST_AT] = String(row[COST_AT]);
  if (row[CHANNEL_COST_AT] !== null) row[CHANNEL_COST_AT] = String(row[CHANNEL_COST_AT]);
  return JSON.stringify(row) + "\n";
}

/** The fewest values a line an older gateway wrote may hold: before dropped_fields,
 * tool_calls, breakdown, channel_cost_nano and key existed. */
const OLDEST_ROW_WIDTH = ROW_WIDTH - 5;

/** Where the journal's writes have reached: what the writer thread may read up to. */
export interface JournalMark {
  readonly segment: number;
  readonly bytes: number;
  /** The segment is closed at `bytes`: once read, it can be deleted. */
  readonly final: boolean;
}

/** Lines appended in one turn of the event loop, written together. */
interface Group {
  lines: string;
  readonly done: Promise<void>;
  readonly settle: (err?: unknown) => void;
}

function newGroup(): Group {
  let settle!: (err?: unknown) => void;
  const done = new Promise<void>((resolve, reject) => { settle = (err) => (err === undefined ? resolve() : reject(err)); });
  return { lines: "", done, settle };
}

export class Journal {
  readonly #dbPath: string;
  #segment: number;
  #fd: number;
  #bytes = 0;
  /** Bytes written since this journal was opened, over every segment. */
  #written = 0;
  #group: Group | undefined;
  readonly #writeGroup = () => this.write();
  /** Told where the journal ends after each group's write (and at each segment's close). */
  readonly #onWritten: (mark: JournalMark) => void;
  readonly #segmentBytes: number;

  /** Opens a new segment, numbered after any an earlier run left (replay those first). */
  constructor(dbPath: string, onWritten: (mark: JournalMark) => void, segmentBytes = SEGMENT_BYTES) {
    this.#dbPath = dbPath;
    this.#onWritten = onWritten;
    this.#segmentBytes = segmentBytes;
    this.#segment = (segmentNumbers(dbPath).at(-1) ?? 0) + 1;
    this.#fd = openSync(segmentPath(dbPath, this.#segment), "a");
  }

  /** Queues a line; the promise resolves once it is written (durable against a process
   * crash), and rejects when the write failed (a full disk): the charge is then not
   * recorded. Lines queued in the same turn share one write. */
  append(line: string): Promise<void> {
    let group = this.#group;
    if (group === undefined) {
      group = this.#group = newGroup();
      setImmediate(this.#writeGroup);
    }
    group.lines += line;
    return group.done;
  }

  /** Writes the queued lines now (also before a read, so it sees them). */
  write(): void {
    const group = this.#group;
    if (group === undefined) return;
    this.#group = undefined;
    try {
      const buffer = Buffer.from(group.lines);
      for (let at = 0; at < buffer.length;) at += writeSync(this.#fd, buffer, at);
      this.#bytes += buffer.length;
      this.#written += buffer.length;
    } catch (err) {
      group.settle(err);
      return;
    }
    group.settle();
    if (this.#bytes >= this.#segmentBytes) this.#rotate();
    else this.#onWritten({ segment: this.#segment, bytes: this.#bytes, final: false });
  }

  /** Opens the next segment and closes the open one; if the next cannot be opened, the
   * open one goes on growing (logged), so no write is lost to a failed rotation. */
  #rotate(): void {
    let next: number;
    try {
      next = openSync(segmentPath(this.#dbPath, this.#segment + 1), "a");
    } catch (err) {
      log.error("journal: could not start a new segment; the current one keeps growing", { error: String(err) });
      this.#onWritten({ segment: this.#segment, bytes: this.#bytes, final: false });
      return;
    }
    const closed = this.#fd;
    this.#fd = next;
    try {
      closeSync(closed);
    } catch (err) {
      log.warn("journal: could not close a segment", { error: String(err) });
    }
    this.#onWritten({ segment: this.#segment, bytes: this.#bytes, final: true });
    this.#segment++;
    this.#bytes = 0;
  }

  /** Bytes written since this journal was opened, over every segment. */
  get written(): number {
    return this.#written;
  }

  /** Where the writes have reached. */
  get mark(): JournalMark {
    return { segment: this.#segment, bytes: this.#bytes, final: false };
  }

  /** Writes what is queued and closes the open segment, marked final for the reader. */
  close(): void {
    this.write();
    closeSync(this.#fd);
    this.#onWritten({ segment: this.#segment, bytes: this.#bytes, final: true });
  }
}

/** The flat row values (see pushRow) of complete journal lines; a torn last line (the
 * process died inside the write) held no acknowledged charge and is skipped. */
export function rowsOfLines(text: string, onSkipped: () => void): unknown[] {
  const rows: unknown[] = [];
  let start = 0;
  for (let end = text.indexOf("\n"); end !== -1; start = end + 1, end = text.indexOf("\n", start)) {
    pushLine(rows, text.slice(start, end), onSkipped);
  }
  if (start < text.length) pushLine(rows, text.slice(start), onSkipped);
  return rows;
}

function pushLine(rows: unknown[], line: string, onSkipped: () => void): void {
  if (line === "") return;
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch {
    onSkipped();
    return;
  }
  // A line written before dropped_fields, tool_calls, breakdown, channel_cost_nano or key
  // existed left those out: it dropped nothing, ran no hosted tool, and its breakdown, cost
  // to the operator and serving key are unknown.
  if (Array.isArray(row) && row.length >= OLDEST_ROW_WIDTH) while (row.length < ROW_WIDTH) row.push(null);
  const channelCost: unknown = Array.isArray(row) ? row[CHANNEL_COST_AT] : undefined;
  if (!Array.isArray(row) || row.length !== ROW_WIDTH || typeof row[COST_AT] !== "string"
    || (channelCost !== null && typeof channelCost !== "string")) {
    onSkipped();
    return;
  }
  row[COST_AT] = BigInt(row[COST_AT] as string);
  if (channelCost !== null) row[CHANNEL_COST_AT] = BigInt(channelCost as string);
  for (const v of row) rows.push(v);
}
