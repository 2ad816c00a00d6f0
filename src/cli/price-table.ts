// A model's effective price table as the gateway compiled it, for `gateway check --prices`:
// every component at the rate priceUsage bills it (billing/cost.ts), where that rate comes
// from (its own price, a ratio, or a fallback to a base price), its tiers and variants,
// what each group serving it charges, and what each channel serving it costs the operator.

import { tokenComponents, type TokenComponent } from "../billing/components.js";
import { formatScaled, tokenRates } from "../billing/cost.js";
import { hostedTools, type Channel, type Price, type Runtime } from "../runtime/types.js";

const MILLION = 1_000_000n;
/** Rates are femto-units (10^-15 of the currency); ppm multipliers add 6 places. */
const FEMTO = 15;
const PPM = 6;

/** One component of a price: its rate per unit and where the rate comes from. */
export interface ComponentRow {
  /** The price key (or hosted tool) the component is priced by. */
  readonly component: string;
  /** What the rate is per: "1M tokens", "request", "image", "second", "1k chars", "1k calls". */
  readonly per: string;
  readonly femto: bigint;
  /** "own", a ratio ("input × 0.1"), a rule ("= output"), or the base a fallback bills at. */
  readonly from: string;
  /** Billed at a base price the price does not name for it (warned once per model). */
  readonly fallback: boolean;
}

/** A price of a model: its base, a tier (only the components that differ) or a variant. */
export interface PriceSection {
  readonly kind: "price" | "tier" | "variant";
  readonly aboveInputTokens?: number;
  readonly when?: Readonly<Record<string, string>>;
  readonly rows: readonly ComponentRow[];
}

/** What one channel serving the model costs the operator. */
export interface ChannelCostTable {
  readonly channel: string;
  readonly enabled: boolean;
  /** list: the list price; multiplier: the list price × it; own: its own price × it. */
  readonly basis: "list" | "multiplier" | "own";
  readonly multiplierPpm: bigint;
  /** The channel's own price (basis "own"), before its multiplier. */
  readonly sections?: readonly PriceSection[];
}

/** A model's effective price table. */
export interface ModelPriceTable {
  readonly model: string;
  readonly sections: readonly PriceSection[];
  readonly serviceTiers: readonly (readonly [string, bigint])[];
  /** Groups of the channels serving the model (enabled or not), with their multipliers (ppm). */
  readonly groups: readonly (readonly [string, bigint])[];
  readonly channels: readonly ChannelCostTable[];
}

const ratio = (ppm: bigint): string => formatScaled(ppm, PPM);
const tokenKeys = ["inputPer1M", "outputPer1M", "cacheReadPer1M", "cacheWritePer1M", "cacheWrite1hPer1M", "audioInputPer1M",
  "audioCacheReadPer1M", "audioOutputPer1M", "imageInputPer1M", "imageOutputPer1M", "reasoningPer1M"] as const;

/** Where each token component's rate comes from, in the words of the price keys. */
function tokenOrigins(p: Price): Record<TokenComponent, string> {
  const own = (n: bigint | undefined, otherwise: string): string => (n !== undefined ? "own" : otherwise);
  const times = (base: string, ppm: bigint | undefined): string => (ppm === undefined ? `= ${base}` : `${base} × ${ratio(ppm)}`);
  // Cached audio without an audio price is a fallback to input × the ratio (no "=": the
  // fallback marker says what it is billed as).
  const audioCache = p.audioInputPer1M !== undefined ? times("audio_input", p.cacheReadRatioPpm)
    : p.cacheReadRatioPpm === undefined ? "input" : times("input", p.cacheReadRatioPpm);
  return {
    input: own(p.inputPer1M, "not priced"),
    cache_read: own(p.cacheReadPer1M, times("input", p.cacheReadRatioPpm)),
    cache_write: own(p.cacheWritePer1M, times("input", p.cacheWriteRatioPpm)),
    cache_write_1h: own(p.cacheWrite1hPer1M, p.cacheWrite1hRatioPpm !== undefined ? times("input", p.cacheWrite1hRatioPpm) : "cache_write"),
    audio_input: own(p.audioInputPer1M, "input"),
    audio_cache_read: own(p.audioCacheReadPer1M, audioCache),
    image_input: own(p.imageInputPer1M, "input"),
    output: own(p.outputPer1M, "not priced"),
    reasoning: own(p.reasoningPer1M, "= output"),
    audio_output: own(p.audioOutputPer1M, "output"),
    image_output: own(p.imageOutputPer1M, "output"),
  };
}

/** Every component a price bills, at the rates priceUsage uses. Token components are all
 * listed once the price names any token rate (so its fallbacks show). */
export function componentRows(p: Price): ComponentRow[] {
  const rows: ComponentRow[] = [];
  if (tokenKeys.some((k) => p[k] !== undefined)) {
    const rates = tokenRates(p);
    const origins = tokenOrigins(p);
    for (const component of tokenComponents) {
      const [femto, own] = rates[component];
      rows.push({ component, per: "1M tokens", femto, from: origins[component], fallback: !own });
    }
  }
  const unit = (component: string, per: string, nano: bigint | undefined): void => {
    if (nano !== undefined) rows.push({ component, per, femto: nano * MILLION, from: "own", fallback: false });
  };
  unit("per_request", "request", p.perRequest);
  unit("per_image", "image", p.perImage);
  unit("per_second", "second", p.perSecond);
  unit("per_1k_chars", "1k chars", p.per1kChars);
  for (const tool of hostedTools) unit(tool, "1k calls", p.toolCallsPer1k?.[tool]);
  return rows;
}

/** The rows of `rows` that differ from `base` (a tier or variant shows what it changes). */
function differences(rows: readonly ComponentRow[], base: readonly ComponentRow[]): ComponentRow[] {
  const key = (r: ComponentRow): string => `${r.component}\u0000${r.femto}\u0000${r.from}`;
  const same = new Set(base.map(key));
  return rows.filter((r) => !same.has(key(r)));
}

/** A price as sections: its base, then each tier and variant by what it changes. */
export function priceSections(p: Price): PriceSection[] {
  const base = componentRows(p);
  const sections: PriceSection[] = [{ kind: "price", rows: base }];
  for (const tier of p.tiers ?? []) {
    sections.push({ kind: "tier", aboveInputTokens: tier.aboveInputTokens, rows: differences(componentRows(tier.price), base) });
  }
  for (const variant of p.variants ?? []) {
    sections.push({ kind: "variant", when: variant.when, rows: differences(componentRows(variant.price), base) });
  }
  return sections;
}

function channelCost(channel: Channel, model: string): ChannelCostTable {
  const own = channel.cost?.prices?.get(model);
  const multiplierPpm = channel.cost?.multiplierPpm ?? MILLION;
  const basis = own ? "own" : channel.cost?.multiplierPpm !== undefined ? "multiplier" : "list";
  return { channel: channel.name, enabled: channel.enabled, basis, multiplierPpm, ...(own && { sections: priceSections(own) }) };
}

/** The effective price table of `model` in `runtime`; undefined when there is no such model. */
export function modelPriceTable(runtime: Runtime, model: string): ModelPriceTable | undefined {
  const entry = runtime.models.get(model);
  if (!entry) return undefined;
  const serving = [...runtime.channels.values()].filter((c) => c.models.has(model));
  // Disabled channels count too: a check run without keys still shows what groups pay.
  const groups = [...runtime.groups.values()]
    .filter((g) => serving.some((c) => c.groups.has(g.name)))
    .map((g): [string, bigint] => [g.name, g.multiplierPpm]);
  const channels = serving.map((c) => channelCost(c, model));
  return {
    model,
    sections: priceSections(entry.price),
    serviceTiers: Object.entries(entry.price.serviceTiersPpm ?? {}),
    groups,
    channels,
  };
}

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
