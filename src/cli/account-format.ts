// How the account commands print: users, tokens, credit entries, code batches and audit
// records as tables or aligned `field: value` lines for people, and one JSON object a line
// (the admin API's views: money as exact decimal strings) with --json.

import type { BatchView, CreditView, TokenView, UserView } from "../accounts/service.js";
import type { AuditRecord } from "../accounts/store.js";
import { formatTable, type Column } from "./format.js";

/** What the CLI cannot know, said once under any balance it prints. */
export const RESERVED_NOTE = "reserved: unknown here (money held by requests in flight lives in the running gateways);"
  + " balance = credit − spent\n";

/** Aligned `field: value` lines; fields without a value are left out. */
export function details(fields: readonly (readonly [string, string | undefined])[]): string {
  const shown = fields.filter((f): f is readonly [string, string] => f[1] !== undefined);
  const width = Math.max(...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${v}\n`).join("");
}

/** One JSON object a line. */
export function jsonLines(items: readonly unknown[]): string {
  return items.map((item) => JSON.stringify(item) + "\n").join("");
}

const userColumns: readonly Column[] = [
  { header: "NAME" }, { header: "SOURCE" }, { header: "STATUS" }, { header: "GROUPS" },
  { header: "CREDIT", right: true }, { header: "SPENT", right: true }, { header: "BALANCE", right: true },
];

export function usersTable(users: readonly UserView[]): string {
  if (users.length === 0) return "no users\n";
  return formatTable(userColumns, users.map((u) => [u.name, u.source, u.status, u.groups.join(",") || "-", u.credit, u.spent, u.balance]))
    + (users.some((u) => u.reserved === undefined) ? RESERVED_NOTE : "");
}

export function userDetails(u: UserView): string {
  return details([
    ["user", u.name], ["source", u.source], ["status", u.status], ["groups", u.groups.join(", ") || "none"], ["note", u.note],
    ["credit", u.credit], ["spent", u.spent], ["reserved", u.reserved ?? "unknown here (held by the running gateways)"],
    ["balance", u.reserved === undefined ? `${u.balance} (credit − spent)` : u.balance],
    ["version", u.version?.toString()], ["created", u.created_at], ["updated", u.updated_at],
  ]);
}

const tokenColumns: readonly Column[] = [
  { header: "NAME" }, { header: "USER" }, { header: "GROUP" }, { header: "STATUS" }, { header: "KEY" }, { header: "EXPIRES" },
  { header: "QUOTA", right: true },
];

export function tokensTable(tokens: readonly TokenView[]): string {
  if (tokens.length === 0) return "no stored tokens\n";
  return formatTable(tokenColumns, tokens.map((t) => [t.name, t.user, t.group, t.status, t.key_hint ?? "-", t.expires ?? "never", t.quota ?? "-"]));
}

export function tokenDetails(t: TokenView): string {
  return details([
    ["token", t.name], ["source", t.source], ["user", t.user], ["group", t.group], ["status", t.status], ["key", t.key_hint],
    ["expires", t.expires ?? "never"], ["quota", t.quota ?? "unlimited"], ["spent", t.spent],
    ["allow_ips", t.allow_ips?.join(", ") ?? "any"], ["models", t.models?.join(", ") ?? "every model of the group"],
    ["version", t.version?.toString()], ["created", t.created_at], ["updated", t.updated_at],
  ]);
}

const creditColumns: readonly Column[] = [
  { header: "ID", right: true }, { header: "AT" }, { header: "KIND" }, { header: "AMOUNT", right: true }, { header: "ACTOR" },
  { header: "REASON" }, { header: "IDEMPOTENCY_KEY" },
];

export function creditTable(entries: readonly CreditView[]): string {
  if (entries.length === 0) return "no credit entries\n";
  return formatTable(creditColumns, entries.map((e) => [String(e.id), e.at, e.kind, e.amount, e.actor, e.reason, e.idempotency_key ?? "-"]));
}

export function batchDetails(b: BatchView): string {
  return details([
    ["batch", b.batch], ["codes", String(b.count)], ["amount", `${b.amount} each`], ["expires", b.expires],
    ["redeemed", `${b.redeemed} of ${b.count}`], ["created", b.created_at], ["by", b.actor],
  ]);
}

const auditColumns: readonly Column[] = [
  { header: "ID", right: true }, { header: "AT" }, { header: "ACTOR" }, { header: "ACTION" }, { header: "TARGET" }, { header: "CHANGE" },
];

/** Audit records as JSON lines: times as ISO strings (the records keep epoch ms). */
export function auditJson(records: readonly AuditRecord[]): string {
  return jsonLines(records.map((r) => ({ ...r, at: new Date(r.at).toISOString() })));
}

export function auditTable(records: readonly AuditRecord[]): string {
  if (records.length === 0) return "no audit records\n";
  return formatTable(auditColumns, records.map((r) => [String(r.id), new Date(r.at).toISOString(), r.actor, r.action, r.target, changeText(r)]));
}

/** What changed, in a few words: the fields whose values differ, before → after; a
 * creation or an entry: its main fields. */
export function changeText(r: AuditRecord): string {
  const before = asObject(r.before);
  const after = asObject(r.after);
  if (!after) return "";
  if (!before) {
    const keys = ["amountNano", "kind", "status", "group", "groups", "count", "reason"].filter((k) => after[k] !== undefined);
    return keys.map((k) => `${k === "amountNano" ? "amount" : k}=${show(after[k])}`).join(" ");
  }
  const changed = Object.keys({ ...before, ...after })
    .filter((k) => k !== "version" && k !== "updatedAt" && JSON.stringify(before[k]) !== JSON.stringify(after[k]));
  return changed.map((k) => `${k}: ${show(before[k])} → ${show(after[k])}`).join("; ");
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
}

function show(value: unknown): string {
  if (value === undefined) return "-";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}
