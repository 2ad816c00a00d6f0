// `gateway logs`: usage-log entries from the store, newest first, filtered by request id,
// token, user, model, channel, serving key (its fingerprint), status or status class and
// time; a table for people, JSON lines for
// machines; or one entry's cost explained (--explain, see explain.ts).

import type { UsageLog } from "../state/interfaces.js";
import type { LogFilter, UsageEntry } from "../state/store.js";
import { UsageError, type Flags } from "./args.js";
import { runCommand, type Command } from "./command.js";
import { explainJson, explainText } from "./explain.js";
import { formatNano, formatTable, jsonLine, parseCount, processIo, type CliIo, type Column } from "./format.js";
import { rangeOf, readCommand, timeOptions } from "./usage.js";

const STATUS = /^[1-5]\d\d$/;
const STATUS_CLASS = /^[1-5]xx$/i;

function checkStatus(value: string): void {
  if (!STATUS.test(value) && !STATUS_CLASS.test(value)) {
    throw new UsageError(`--status '${value}': expected an HTTP status like 429, or a class like 4xx`);
  }
}

/** A fingerprint as `gateway channels` and `gateway usage --by key` show it: 8 hex digits,
 * alone or after its channel ("east/1a2b3c4d"). */
const KEY = /^(?:(.+)\/)?([0-9a-f]{8})$/;

function checkKey(value: string): void {
  if (!KEY.test(value)) {
    throw new UsageError("--key: expected a key fingerprint (8 hex digits, or CHANNEL/FINGERPRINT as `gateway usage --by key` shows), never the key");
  }
}

/** `--key`'s fingerprint, and its channel when it names one (then --channel must agree). */
function keyFilter(flags: Flags): { key?: string; channel?: string } {
  const channel = flags.values.get("channel");
  const value = flags.values.get("key");
  if (value === undefined) return { channel };
  const [, keyChannel, key] = KEY.exec(value)!;
  if (keyChannel !== undefined && channel !== undefined && keyChannel !== channel) {
    throw new UsageError(`--key names channel '${keyChannel}' and --channel '${channel}': give one`);
  }
  return { key, channel: keyChannel ?? channel };
}

function filterOf(flags: Flags, io: CliIo): LogFilter {
  const v = flags.values;
  const status = v.get("status");
  const limit = v.get("limit");
  const byClass = status !== undefined && STATUS_CLASS.test(status);
  return {
    requestId: v.get("request-id"),
    token: v.get("token"),
    user: v.get("user"),
    model: v.get("model"),
    ...keyFilter(flags),
    status: status === undefined || byClass ? undefined : Number(status),
    statusClass: byClass ? Number(status[0]) : undefined,
    limit: limit === undefined ? undefined : parseCount("limit", limit),
    ...rangeOf(flags, io),
  };
}

/** One entry as a JSON line: flat usage fields, `cost` an exact decimal in the currency (what
 * was charged; `refundedAt` says when it was given back, null if it was not), its breakdown
 * text and `channelCost`, what it cost the operator (null: not recorded); last, `key`, the
 * fingerprint of the channel key that served it, only when one did (lines keep the shape
 * they had before keys were recorded). */
function entryJson(e: UsageEntry): string {
  return jsonLine({
    requestId: e.requestId,
    time: new Date(e.time).toISOString(),
    token: e.token,
    user: e.user,
    group: e.group,
    model: e.model,
    upstreamModel: e.upstreamModel,
    channel: e.channel,
    inboundProtocol: e.inboundProtocol,
    upstreamProtocol: e.upstreamProtocol,
    status: e.status,
    error: e.error,
    ...e.usage,
    cost: e.costNano,
    durationMs: e.durationMs,
    ttfbMs: e.ttfbMs,
    estimated: e.estimated,
    refundedAt: e.refundedAt === undefined ? undefined : new Date(e.refundedAt).toISOString(),
    droppedFields: e.droppedFields,
    breakdown: e.breakdown,
    channelCost: e.channelCostNano,
    ...(e.key === undefined ? {} : { key: e.key }),
  });
}

const columns: readonly Column[] = [
  { header: "TIME" },
  { header: "REQUEST_ID" },
  { header: "TOKEN" },
  { header: "USER" },
  { header: "MODEL" },
  { header: "CHANNEL" },
  { header: "STATUS", right: true },
  { header: "IN", right: true },
  { header: "OUT", right: true },
  { header: "COST", right: true },
  { header: "MS", right: true },
  { header: "NOTE" },
];

/** One entry as table cells; IN counts every prompt token (cached ones included); CHANNEL
 * names the serving key's fingerprint after the channel when one was recorded. */
function entryCells(e: UsageEntry): string[] {
  const refunded = e.refundedAt === undefined ? undefined : `refunded ${new Date(e.refundedAt).toISOString()}`;
  const dropped = e.droppedFields === undefined ? undefined : `dropped ${e.droppedFields.join(" ")}`;
  const note = [e.error, e.estimated ? "estimated" : undefined, refunded, dropped].filter(Boolean).join(", ");
  return [
    new Date(e.time).toISOString(),
    e.requestId,
    e.token,
    e.user,
    e.model,
    e.key === undefined ? e.channel ?? "-" : `${e.channel ?? ""}/${e.key}`,
    String(e.status),
    String(e.usage.input + e.usage.cacheRead + e.usage.cacheWrite),
    String(e.usage.output),
    formatNano(e.costNano),
    e.durationMs.toFixed(0),
    note,
  ];
}

export const logsCommand: Command = readCommand({
  name: "logs",
  summary: "Usage-log entries, newest first, filtered: a table, or JSON lines with --json.",
  options: {
    "request-id": { type: "string", value: "ID", description: "only this request (its X-Gateway-Request-Id)" },
    token: { type: "string", value: "NAME", description: "only requests made with this token" },
    user: { type: "string", value: "NAME", description: "only this user's requests" },
    model: { type: "string", value: "NAME", description: "only requests for this model" },
    channel: { type: "string", value: "NAME", description: "only requests this channel answered" },
    key: { type: "string", value: "FP", description: "only requests this channel key served: its fingerprint, or CHANNEL/FINGERPRINT", check: checkKey },
    status: { type: "string", value: "CODE", description: "only answers with this HTTP status (429) or of this class (2xx, 4xx, 5xx)", check: checkStatus },
    ...timeOptions,
    limit: { type: "string", value: "N", description: "at most N entries (default 100)", check: (v) => void parseCount("limit", v) },
    json: { type: "boolean", description: "one JSON object a line instead of a table" },
    explain: { type: "string", value: "ID", description: "how one request's cost was reached: its breakdown, the total from it and the charge" },
  },
  async read(flags, usageLog, io) {
    const explain = flags.values.get("explain");
    if (explain !== undefined) return explainEntry(explain, flags, usageLog, io);
    const entries = await usageLog.logs(filterOf(flags, io));
    if (flags.switches.has("json")) io.out(entries.map(entryJson).join(""));
    else if (!entries.length) io.out("no matching requests\n");
    else io.out(formatTable(columns, entries.map(entryCells)));
  },
});

/** `--explain ID`: the entry's cost explained; exit 1 when no entry has that id. */
async function explainEntry(requestId: string, flags: Flags, usageLog: UsageLog, io: CliIo): Promise<number> {
  const others = [...flags.values.keys()].filter((name) => !["explain", "config", "store"].includes(name));
  if (others.length > 0) throw new UsageError(`--explain shows one request: drop --${others.join(", --")}`);
  const [entry] = await usageLog.logs({ requestId });
  if (!entry) {
    io.err(`no request ${requestId} in the usage log\n`);
    return 1;
  }
  io.out(flags.switches.has("json") ? explainJson(entry) : explainText(entry));
  return 0;
}

/** Runs `gateway logs`; resolves to the exit code (0 ok, 1 store unreadable, 2 bad flags). */
export async function runLogs(args: readonly string[], io: CliIo = processIo): Promise<number> {
  return runCommand(logsCommand, args, io);
}
