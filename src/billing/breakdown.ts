// A cost's breakdown as the usage log keeps it: one line of text that holds every priced
// component's quantity and unit price, the multipliers, and what chose the price, so that
// anyone can reproduce the entry's cost from the entry alone, exactly.
//
//   input=1200@3/1M output=300@15/1M web_search=2@10/1k multiplier=0.7
//   [service_tier=flex@0.5] [tier=200000] [variant=size:1024x1024,quality:high]
//
// Prices are exact decimals of the currency per 1M, per 1k or per one of the quantity;
// multipliers exact decimals. cost = round half up of Σ quantity × price / per ×
// multiplier × service-tier multiplier, in nano-units (10^-9 of the currency).

import { formatScaled, type CostLine, type Per, type Priced } from "./cost.js";

const MILLION = 1_000_000n;
const FEMTO_DECIMALS = 15;
const PPM_DECIMALS = 6;
const perText: Record<Per, string> = { 1_000_000: "1M", 1000: "1k", 1: "1" };
const perOfText: Readonly<Record<string, Per>> = { "1M": 1_000_000, "1k": 1000, "1": 1 };

/** A breakdown read back: everything its total is computed from. */
export interface Breakdown {
  readonly lines: readonly CostLine[];
  readonly multiplierPpm: bigint;
  readonly serviceTier?: { readonly name: string; readonly ppm: bigint };
  readonly tierAbove?: number;
  readonly variant?: Readonly<Record<string, string>>;
}

/** Characters a name or selector value may keep in the text (others become "_"). */
const safe = (text: string): string => text.replace(/[^A-Za-z0-9._-]/g, "_");

/** The text the usage log stores for a priced request. */
export function encodeBreakdown(priced: Priced): string {
  let text = "";
  for (const line of priced.lines) {
    text += `${line.component}=${line.quantity}@${formatScaled(line.priceFemto, FEMTO_DECIMALS)}/${perText[line.per]} `;
  }
  text += `multiplier=${formatScaled(priced.multiplierPpm, PPM_DECIMALS)}`;
  const tier = priced.serviceTier;
  if (tier) text += ` service_tier=${safe(tier.name)}@${formatScaled(tier.ppm, PPM_DECIMALS)}`;
  if (priced.tierAbove !== undefined) text += ` tier=${priced.tierAbove}`;
  if (priced.variant) {
    text += ` variant=${Object.entries(priced.variant).map(([k, v]) => `${safe(k)}:${safe(v)}`).join(",")}`;
  }
  return text;
}

/** A decimal text as an integer of 10^-decimals; throws when it is not one. */
function scaledDecimal(text: string, decimals: number): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match || (match[2] ?? "").length > decimals) throw new Error(`"${text}" is not a decimal of at most ${decimals} places`);
  return BigInt(match[1] + (match[2] ?? "").padEnd(decimals, "0"));
}

/** Reads a stored breakdown back; throws naming the part it cannot read. */
export function decodeBreakdown(text: string): Breakdown {
  const lines: CostLine[] = [];
  let multiplierPpm: bigint | undefined;
  let serviceTier: Breakdown["serviceTier"];
  let tierAbove: number | undefined;
  let variant: Record<string, string> | undefined;
  for (const part of text.split(" ")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const key = part.slice(0, eq);
    const value = part.slice(eq + 1);
    if (eq <= 0) throw new Error(`breakdown part "${part}" has no name`);
    if (key === "multiplier") multiplierPpm = scaledDecimal(value, PPM_DECIMALS);
    else if (key === "service_tier") {
      const [name, ppm] = value.split("@");
      serviceTier = { name, ppm: scaledDecimal(ppm ?? "", PPM_DECIMALS) };
    } else if (key === "tier") tierAbove = Number(scaledDecimal(value, 0));
    else if (key === "variant") {
      variant = {};
      for (const pair of value.split(",")) {
        const [k, v = ""] = pair.split(":");
        variant[k] = v;
      }
    } else {
      const line = /^(\d+)@([\d.]+)\/(1M|1k|1)$/.exec(value);
      if (!line) throw new Error(`breakdown line "${part}" is not quantity@price/per`);
      lines.push({ component: key, quantity: Number(line[1]), priceFemto: scaledDecimal(line[2], FEMTO_DECIMALS), per: perOfText[line[3]] });
    }
  }
  if (multiplierPpm === undefined) throw new Error("breakdown has no multiplier");
  return {
    lines, multiplierPpm,
    ...(serviceTier && { serviceTier }),
    ...(tierAbove !== undefined && { tierAbove }),
    ...(variant && { variant }),
  };
}

/** A line's exact share of the total, as a numerator over 10^24 nano-units. */
function lineNumerator(line: CostLine, b: Breakdown): bigint {
  return BigInt(line.quantity) * line.priceFemto * (MILLION / BigInt(line.per)) * b.multiplierPpm * (b.serviceTier?.ppm ?? MILLION);
}

/** The cost a breakdown adds up to, in nano-units: every line's exact share summed, then
 * rounded once, half up. */
export function totalOf(b: Breakdown): bigint {
  let sum = 0n;
  for (const line of b.lines) sum += lineNumerator(line, b);
  const scale = MILLION ** 4n;
  return (sum + scale / 2n) / scale;
}

/** A line's exact subtotal in the currency (multipliers applied, not rounded): a decimal
 * of up to 33 places. */
export function subtotalText(line: CostLine, b: Breakdown): string {
  // numerator / 10^24 is nano; / 10^33 is the currency.
  return formatScaled(lineNumerator(line, b), 33);
}

/** A line's unit price as an exact decimal of the currency. */
export function unitPriceText(line: CostLine): string {
  return formatScaled(line.priceFemto, FEMTO_DECIMALS);
}

/** What a line's price is per, as the text shows it: "1M", "1k" or "1". */
export function perLabel(per: Per): string {
  return perText[per];
}
