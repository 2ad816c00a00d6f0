// `gateway check --prices`: a model's effective price table (billing/price-table.ts) as
// aligned text, and as one JSON line per model with exact decimal numbers.

import { formatScaled } from "../billing/cost.js";
import { FEMTO, PPM, ratio, type ChannelCostTable, type ComponentRow, type ModelPriceTable, type PriceSection } from "../billing/price-table.js";

export { modelPriceTable } from "../billing/price-table.js";

// ---- As text (aligned tables) and as one JSON line per model.

const times = (femto: bigint, ppm: bigint): string => formatScaled(femto * ppm, FEMTO + PPM);
const fromText = (row: ComponentRow): string => (row.fallback ? `fallback → ${row.from}` : row.from);

/** Channels whose cost is the list price × a multiplier: a column beside the list price. */
const listCosted = (t: ModelPriceTable): ChannelCostTable[] => t.channels.filter((c) => c.basis !== "own");

function sectionTitle(s: PriceSection): string {
  if (s.kind === "price") return "price";
  const changes = s.rows.length ? "; every other component as the price" : ": as the price";
  if (s.kind === "tier") return `above ${s.aboveInputTokens} input tokens (the whole request)${changes}`;
  return `variant when ${Object.entries(s.when ?? {}).map(([k, v]) => `${k}=${v}`).join(", ")}${changes}`;
}

function channelText(c: ChannelCostTable): string {
  const state = c.enabled ? "" : ", disabled";
  if (c.basis === "list") return `${c.channel} (list price${state})`;
  if (c.basis === "multiplier") return `${c.channel} (list price × ${ratio(c.multiplierPpm)}${state})`;
  return `${c.channel} (its own price × ${ratio(c.multiplierPpm)}${state}, below)`;
}

/** Rows as an aligned table: the header, then one line each (numbers right-aligned). */
function table(header: readonly string[], rows: readonly (readonly string[])[], right: (i: number) => boolean): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]): string =>
    "  " + cells.map((c, i) => (right(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd() + "\n";
  return line(header) + rows.map(line).join("");
}

function sectionTable(s: PriceSection, groups: ModelPriceTable["groups"], costs: readonly ChannelCostTable[]): string {
  if (!s.rows.length) return "";
  const header = ["COMPONENT", "PER", "PRICE", "FROM", ...groups.map(([g, ppm]) => `${g} ×${ratio(ppm)}`), ...costs.map((c) => `cost ${c.channel}`)];
  const rows = s.rows.map((r) => [
    r.component, r.per, formatScaled(r.femto, FEMTO), fromText(r),
    ...groups.map(([, ppm]) => times(r.femto, ppm)), ...costs.map((c) => times(r.femto, c.multiplierPpm)),
  ]);
  return table(header, rows, (i) => i === 2 || i > 3);
}

/** `gateway check --prices` for one model, as text. */
export function renderPriceTable(t: ModelPriceTable): string {
  let text = `${t.model}: prices per unit named (tokens per 1M); charged = price × the group's multiplier\n`;
  if (t.serviceTiers.length) text += `service tiers: ${t.serviceTiers.map(([n, ppm]) => `${n} × ${ratio(ppm)}`).join(", ")} (× the price when the answer, or else the request, names the tier)\n`;
  text += `groups: ${t.groups.length ? t.groups.map(([g, ppm]) => `${g} × ${ratio(ppm)}`).join(", ") : "no channel serves it"}\n`;
  text += `channels: ${t.channels.length ? t.channels.map(channelText).join(", ") : "none serves it"}\n`;
  const costs = listCosted(t);
  for (const s of t.sections) text += `\n${sectionTitle(s)}\n${sectionTable(s, t.groups, costs)}`;
  for (const c of t.channels) {
    if (!c.sections) continue;
    text += `\nchannel ${c.channel}: its own price × ${ratio(c.multiplierPpm)}, what it costs the operator\n`;
    text += c.sections.map((s) => `${sectionTitle(s)}\n${sectionTable(s, [], [c])}`).join("\n");
  }
  return text;
}

/** An exact decimal written into JSON as a number, never through a float. */
class Exact {
  constructor(readonly text: string) {}
}

function exactJson(value: unknown): string {
  if (value instanceof Exact) return value.text;
  if (Array.isArray(value)) return `[${value.map(exactJson).join(",")}]`;
  if (value && typeof value === "object") {
    const fields = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${fields.map(([k, v]) => `${JSON.stringify(k)}:${exactJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

function sectionJson(s: PriceSection, groups: ModelPriceTable["groups"], costs: readonly ChannelCostTable[]): unknown {
  return {
    kind: s.kind, aboveInputTokens: s.aboveInputTokens, when: s.when,
    rows: s.rows.map((r) => ({
      component: r.component, per: r.per, price: new Exact(formatScaled(r.femto, FEMTO)), from: r.from, fallback: r.fallback,
      charged: groups.length ? Object.fromEntries(groups.map(([g, ppm]) => [g, new Exact(times(r.femto, ppm))])) : undefined,
      cost: costs.length ? Object.fromEntries(costs.map((c) => [c.channel, new Exact(times(r.femto, c.multiplierPpm))])) : undefined,
    })),
  };
}

/** `gateway check --prices --json` for one model: one JSON object on one line; prices and
 * multipliers are exact decimal numbers. */
export function priceTableJson(t: ModelPriceTable): string {
  const costs = listCosted(t);
  return exactJson({
    model: t.model,
    serviceTiers: Object.fromEntries(t.serviceTiers.map(([n, ppm]) => [n, new Exact(ratio(ppm))])),
    groups: Object.fromEntries(t.groups.map(([g, ppm]) => [g, new Exact(ratio(ppm))])),
    sections: t.sections.map((s) => sectionJson(s, t.groups, costs)),
    channels: t.channels.map((c) => ({
      channel: c.channel, enabled: c.enabled, basis: c.basis, multiplier: new Exact(ratio(c.multiplierPpm)),
      sections: c.sections?.map((s) => sectionJson(s, [], [c])),
    })),
  }) + "\n";
}
