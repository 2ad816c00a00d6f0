// A model's effective price table as the gateway compiled it, for `gateway check --prices`
// (cli/price-table.ts writes it) and the admin API's price list (admin/prices.ts):
// every component at the rate priceUsage bills it (billing/cost.ts), where that rate comes
// from (its own price, a ratio, or a fallback to a base price), its tiers and variants,
// what each group serving it charges, and what each channel serving it costs the operator.

import { tokenComponents, type TokenComponent } from "./components.js";
import { formatScaled, tokenRates } from "./cost.js";
import { hostedTools, type Channel, type Price, type Runtime } from "../runtime/types.js";

const MILLION = 1_000_000n;
/** Rates are femto-units (10^-15 of the currency); ppm multipliers add 6 places. */
export const FEMTO = 15;
export const PPM = 6;

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

/** A ppm multiplier or ratio as an exact decimal (700000n → "0.7"). */
export const ratio = (ppm: bigint): string => formatScaled(ppm, PPM);
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
