// `gateway logs`: usage-log entries from the store, newest first, filtered by request id,
// token, user, model, status and time; a table for people, JSON lines for machines.

import type { LogFilter, UsageEntry } from "../state/store.js";
import { formatNano, formatTable, jsonLine, parseCount, processIo, UsageError, type CliIo, type Column, type Flags } from "./format.js";
import { rangeOf, runReadCommand, type ReadCommand } from "./usage.js";

const usageText = `usage: gateway logs [--config gateway.yaml | --store sqlite:<path>]
         [--request-id ID] [--token NAME] [--user NAME] [--model NAME] [--status CODE]
         [--since T] [--until T] [--limit N (default 100)] [--json]
  T: an ISO date or date-time (2026-01-31, 2026-01-31T12:00:00Z) or a span back from now (24h, 7d)`;

function filterOf(flags: Flags, io: CliIo): LogFilter {
  const v = flags.values;
  const status = v.get("status");
  if (status !== undefined && !/^[1-5]\d\d$/.test(status)) throw new UsageError(`--status '${status}': expected an HTTP status like 429`);
  const limit = v.get("limit");
  return {
    requestId: v.get("request-id"),
    token: v.get("token"),
    user: v.get("user"),
    model: v.get("model"),
    status: status === undefined ? undefined : Number(status),
    limit: limit === undefined ? undefined : parseCount("limit", limit),
    ...rangeOf(flags, io),
  };
}

/** One entry as a JSON line: flat usage fields, `cost` an exact decimal in the currency (what
 * was charged; `refundedAt` says when it was given back, null if it was not). */
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

/** One entry as table cells; IN counts every prompt token (cached ones included). */
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
    e.channel ?? "-",
    String(e.status),
    String(e.usage.input + e.usage.cacheRead + e.usage.cacheWrite),
    String(e.usage.output),
    formatNano(e.costNano),
    e.durationMs.toFixed(0),
    note,
  ];
}

const logsCommand: ReadCommand = {
  usage: usageText,
  values: ["request-id", "token", "user", "model", "status", "since", "until", "limit"],
  switches: ["json"],
  async run(flags, usageLog, io) {
    const entries = await usageLog.logs(filterOf(flags, io));
    if (flags.switches.has("json")) io.out(entries.map(entryJson).join(""));
    else if (!entries.length) io.out("no matching requests\n");
    else io.out(formatTable(columns, entries.map(entryCells)));
  },
};

/** Runs `gateway logs`; resolves to the exit code (0 ok, 1 store unreadable, 2 bad flags). */
export async function runLogs(args: readonly string[], io: CliIo = processIo): Promise<number> {
  return runReadCommand(logsCommand, args, io);
}
