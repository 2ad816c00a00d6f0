// The report routes: spend from the usage log by one dimension (what `gateway usage --by`
// prints, with the same margin arithmetic) and the audit log, newest first; each as JSON or,
// with format=csv, as a CSV download holding the same rows and the same exact decimals.

import { InvalidField } from "../accounts/money-input.js";
import type { AuditRecord } from "../accounts/store.js";
import { formatNano } from "../billing/cost.js";
import { marginOf, percentText } from "../billing/margin.js";
import { dayNamer } from "../state/spend-keys.js";
import { NO_CHANNEL, type SpendDimension, type SpendRow, type UsageSubject } from "../state/store.js";
import { csvHeaders, toCsv, type CsvField } from "./csv.js";
import { timeParam, timeText } from "./request-parts.js";
import { listBody, nameListQuery, type AdminRoute, type QueryParam } from "./route.js";

const dimensions: readonly SpendDimension[] = ["channel", "key", "user", "token", "model", "group", "day"];

const formatQuery: QueryParam = { schema: { type: "string", enum: ["json", "csv"] }, description: "json (default) or csv: the same rows as a CSV download (RFC 4180)." };

export const reportRoutes: readonly AdminRoute[] = [
  {
    method: "GET", path: "/admin/v1/usage", operationId: "usageReport", scope: "read",
    summary: "Spend from the usage log grouped by one dimension, with revenue, cost to the operator and margin (the reports of `gateway usage --by`).",
    query: {
      by: { schema: { type: "string", enum: dimensions }, description: "What to group by; key: the channel key's fingerprint; day: newest first.", required: true },
      since: { schema: { type: "string" }, description: `Only requests at or after this. ${timeText}` },
      until: { schema: { type: "string" }, description: `Only requests before this. ${timeText}` },
      timezone: { schema: { type: "string" }, description: "With by=day: count days in this IANA time zone (default UTC)." },
      user: { schema: { type: "string" }, description: "Only this user's requests (every token of it): what the console shows the user." },
      token: { schema: { type: "string" }, description: "Only this token's requests." },
      format: formatQuery,
    },
    responses: { 200: "UsageReport" },
    csv: "With format=csv: a header row (the dimension's name, then the UsageRow fields), then one row per UsageRow, money as the same exact decimals, null as an empty field. Offered as usage-<by>.csv.",
    async handle({ query, deps }) {
      const by = query.by as SpendDimension;
      const timeZone = query.timezone === undefined ? undefined : String(query.timezone);
      if (timeZone !== undefined) checkTimeZone(by, timeZone);
      const now = deps.now();
      if (query.user !== undefined && query.token !== undefined) throw new InvalidField("token", "give user or token, not both");
      const subject: UsageSubject | undefined = query.user !== undefined ? { kind: "user", name: String(query.user) }
        : query.token !== undefined ? { kind: "token", name: String(query.token) } : undefined;
      const range = { since: timeParam("since", query.since, now), until: timeParam("until", query.until, now), timeZone, ...(subject ? { subject } : {}) };
      const rows = (await deps.usageLog.spend(by, range)).map((row) => usageRow(by, row));
      if (query.format === "csv") return { status: 200, text: usageCsv(by, rows), headers: csvHeaders(`usage-${by}.csv`) };
      return { status: 200, body: { by, data: rows } };
    },
  },
  {
    method: "GET", path: "/admin/v1/audit", operationId: "auditLog", scope: "read",
    summary: "The audit log, newest first: who changed what, with the resource before and after.",
    query: {
      target: { schema: { type: "string" }, description: "Only changes to this user, token or batch." },
      actor: { schema: { type: "string" }, description: "Only changes by this actor (an admin key's name, cli:<user>, token:<name>)." },
      before: { schema: { type: "integer", minimum: 1 }, description: "The `next` of the previous page." },
      limit: nameListQuery.limit,
      format: formatQuery,
    },
    responses: { 200: "AuditList" },
    csv: "With format=csv: a header row (id, at, actor, action, target, before, after; before and after as JSON), then one row per record of the page; the next page's cursor in the X-Next-Before header. Offered as audit.csv.",
    async handle({ query, deps }) {
      const page = await deps.store.audit({
        target: query.target as string | undefined, actor: query.actor as string | undefined,
        before: query.before as number | undefined, limit: query.limit as number | undefined,
      });
      const records = page.items.map(auditView);
      if (query.format === "csv") {
        const next: Record<string, string> = page.next === undefined ? {} : { "x-next-before": page.next };
        return { status: 200, text: auditCsv(records), headers: { ...csvHeaders("audit.csv"), ...next } };
      }
      return { status: 200, body: listBody(records, page.next) };
    },
  },
];

/** The UsageRow fields after the key, in the document's order: the CSV's columns. */
const usageColumns = ["requests", "input", "cache_read", "cache_write", "output", "reasoning", "cost", "channel_cost", "margin", "margin_percent", "channel_cost_unknown", "channel_cost_recorded"] as const;

function usageCsv(by: SpendDimension, rows: readonly Record<string, unknown>[]): string {
  return toCsv([by, ...usageColumns], rows.map((r) => [
    r.key === null ? null : { text: String(r.key) }, ...usageColumns.map((c) => r[c] as string | number | null),
  ]));
}

function auditCsv(records: readonly Record<string, unknown>[]): string {
  const json = (v: unknown): CsvField => (v === undefined ? null : { text: JSON.stringify(v) });
  return toCsv(["id", "at", "actor", "action", "target", "before", "after"], records.map((r) => [
    r.id as number, r.at as string, { text: String(r.actor) }, { text: String(r.action) }, { text: String(r.target) }, json(r.before), json(r.after),
  ]));
}

function checkTimeZone(by: SpendDimension, timeZone: string): void {
  if (by !== "day") throw new InvalidField("timezone", "counts days: give it with by=day");
  try {
    dayNamer(timeZone);
  } catch {
    throw new InvalidField("timezone", `'${timeZone}' is not an IANA time zone such as Europe/Berlin or UTC`);
  }
}

/** A spend row as the API shows it: money as exact decimals, unknown costs null (never 0). */
function usageRow(by: SpendDimension, row: SpendRow): Record<string, unknown> {
  const m = marginOf(row);
  const none = (by === "channel" || by === "key") && row.key === NO_CHANNEL;
  return {
    key: none ? null : row.key, requests: row.requests,
    input: row.usage.input, cache_read: row.usage.cacheRead, cache_write: row.usage.cacheWrite, output: row.usage.output, reasoning: row.usage.reasoning,
    cost: formatNano(m.revenueNano),
    channel_cost: m.costNano === undefined ? null : formatNano(m.costNano),
    margin: m.marginNano === undefined ? null : formatNano(m.marginNano),
    margin_percent: m.marginHundredths === undefined ? null : percentText(m.marginHundredths),
    channel_cost_unknown: row.channelCostUnknown,
    channel_cost_recorded: formatNano(row.channelCostNano),
  };
}

function auditView(r: AuditRecord): Record<string, unknown> {
  return {
    id: r.id, at: new Date(r.at).toISOString(), actor: r.actor, action: r.action, target: r.target,
    ...(r.before === undefined ? {} : { before: r.before }), ...(r.after === undefined ? {} : { after: r.after }),
  };
}
