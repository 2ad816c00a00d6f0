// `gateway logs --explain <request-id>`: one entry's cost as its breakdown lines (component,
// quantity, unit price, multipliers, exact subtotal), the total reproduced from the lines
// beside what was charged, and what the request cost the operator; a table, or JSON.

import { decodeBreakdown, perLabel, subtotalText, totalOf, unitPriceText, type Breakdown } from "../billing/breakdown.js";
import { formatScaled } from "../billing/cost.js";
import type { UsageEntry } from "../state/store.js";
import { formatNano, formatTable, jsonLine, type Column } from "./format.js";

const PPM_DECIMALS = 6;

/** The breakdown of an entry read back, or why it cannot be. */
type Reading =
  | { readonly kind: "none" }
  | { readonly kind: "unreadable"; readonly error: string }
  | { readonly kind: "read"; readonly breakdown: Breakdown; readonly totalNano: bigint };

function readingOf(e: UsageEntry): Reading {
  if (e.breakdown === undefined) return { kind: "none" };
  try {
    const breakdown = decodeBreakdown(e.breakdown);
    return { kind: "read", breakdown, totalNano: totalOf(breakdown) };
  } catch (error) {
    return { kind: "unreadable", error: (error as Error).message };
  }
}

/** The multipliers every line is priced with: the group's, then the service tier's. */
function multipliersText(b: Breakdown): string {
  const group = formatScaled(b.multiplierPpm, PPM_DECIMALS);
  return b.serviceTier ? `${group} × ${formatScaled(b.serviceTier.ppm, PPM_DECIMALS)}` : group;
}

const columns: readonly Column[] = [
  { header: "COMPONENT" },
  { header: "QUANTITY", right: true },
  { header: "UNIT_PRICE", right: true },
  { header: "PER" },
  { header: "MULTIPLIER", right: true },
  { header: "SUBTOTAL", right: true },
];

const nanoText = (nano: bigint): string => `${formatNano(nano)} (${nano} nano)`;

/** What the request cost the operator, and the margin on it. */
function operatorText(e: UsageEntry): string {
  if (e.channelCostNano === undefined) return "cost to the operator: not recorded\n";
  return `cost to the operator: ${nanoText(e.channelCostNano)}; margin ${formatNano(e.costNano - e.channelCostNano)}\n`;
}

/** The entry's cost explained as text for people. */
export function explainText(e: UsageEntry): string {
  const where = [`model ${e.model}`, `channel ${e.channel ?? "-"}`, `status ${e.status}`, new Date(e.time).toISOString()];
  const refunded = e.refundedAt === undefined ? "" : ` (refunded ${new Date(e.refundedAt).toISOString()})`;
  let text = `request ${e.requestId}: ${where.join(", ")}\n`;
  const charged = `charged: ${nanoText(e.costNano)}${refunded}\n`;
  const reading = readingOf(e);
  if (reading.kind === "none") {
    return text + "this entry has no breakdown (recorded before breakdowns were kept, or nothing was priced)\n" + charged + operatorText(e);
  }
  if (reading.kind === "unreadable") {
    return text + `its breakdown cannot be read (${reading.error}): ${e.breakdown}\n` + charged + operatorText(e);
  }
  const b = reading.breakdown;
  const cells = b.lines.map((line) => [
    line.component, String(line.quantity), unitPriceText(line), perLabel(line.per), multipliersText(b), subtotalText(line, b),
  ]);
  text += b.lines.length > 0 ? formatTable(columns, cells) : "no priced components\n";
  if (b.serviceTier) text += `service tier: ${b.serviceTier.name} (× ${formatScaled(b.serviceTier.ppm, PPM_DECIMALS)})\n`;
  if (b.tierAbove !== undefined) text += `price tier: input above ${b.tierAbove} tokens\n`;
  if (b.variant) text += `variant: ${Object.entries(b.variant).map(([k, v]) => `${k}=${v}`).join(", ")}\n`;
  text += `total from the lines: ${nanoText(reading.totalNano)}\n` + charged;
  text += reading.totalNano === e.costNano
    ? "the lines reproduce the charged cost exactly\n"
    : `THE LINES DO NOT REPRODUCE THE CHARGED COST: they add up to ${formatNano(reading.totalNano)}, ${formatNano(reading.totalNano - e.costNano)} off\n`;
  return text + operatorText(e);
}

/** The entry's cost explained as one JSON line: money at the top level as exact decimal
 * numbers (as `gateway logs --json`), each line's unit price and subtotal as exact
 * decimal strings (a subtotal has up to 33 decimals). */
export function explainJson(e: UsageEntry): string {
  const reading = readingOf(e);
  const b = reading.kind === "read" ? reading.breakdown : undefined;
  return jsonLine({
    requestId: e.requestId,
    time: new Date(e.time).toISOString(),
    model: e.model,
    channel: e.channel,
    status: e.status,
    breakdown: e.breakdown,
    breakdownError: reading.kind === "unreadable" ? reading.error : undefined,
    lines: b?.lines.map((line) => ({
      component: line.component,
      quantity: line.quantity,
      unitPrice: unitPriceText(line),
      per: perLabel(line.per),
      subtotal: subtotalText(line, b),
    })),
    multiplier: b ? formatScaled(b.multiplierPpm, PPM_DECIMALS) : undefined,
    serviceTier: b?.serviceTier ? { name: b.serviceTier.name, multiplier: formatScaled(b.serviceTier.ppm, PPM_DECIMALS) } : undefined,
    tierAbove: b?.tierAbove,
    variant: b?.variant,
    total: reading.kind === "read" ? reading.totalNano : undefined,
    cost: e.costNano,
    matches: reading.kind === "read" ? reading.totalNano === e.costNano : undefined,
    refundedAt: e.refundedAt === undefined ? undefined : new Date(e.refundedAt).toISOString(),
    channelCost: e.channelCostNano,
  });
}
