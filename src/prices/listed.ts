// What a price list says about one model, in the gateway's own terms but before any
// choice of how to write it: every amount absolute and exact (nano-units), as the list
// states it. price-keys.ts turns it into gateway.yaml's price keys (ratios where exact).

import type { Endpoint, HostedTool } from "../runtime/types.js";

/** Token components a list may price, nano-units per 1M tokens. */
export const tokenFields = [
  "input", "output", "cacheRead", "cacheWrite", "cacheWrite1h", "audioInput", "audioCacheRead",
  "audioOutput", "imageInput", "imageOutput", "reasoning",
] as const;
export type TokenField = (typeof tokenFields)[number];

/** Prices per unit (nano-units per request, second, image, 1k characters). */
export const unitFields = ["perRequest", "perSecond", "perImage", "per1kChars"] as const;
export type UnitField = (typeof unitFields)[number];

/** A price as the list states it; an absent member is not priced by the list. */
export type ListedPrice = Partial<Record<TokenField | UnitField, bigint>> & {
  /** Nano-units per 1k calls of a hosted tool. */
  readonly toolCallsPer1k?: Partial<Record<HostedTool, bigint>>;
  /** Prices above an input size: only the components the list names for the tier. */
  readonly tiers?: readonly ListedTier[];
  /** Multipliers (ppm) of a service tier on every component. */
  readonly serviceTiersPpm?: Readonly<Record<string, bigint>>;
  /** Whole prices chosen by what the request asks (image size and quality). */
  readonly variants?: readonly ListedVariant[];
};

export interface ListedTier {
  readonly aboveInputTokens: number;
  readonly price: ListedPrice;
}

export interface ListedVariant {
  readonly when: Readonly<Record<string, string>>;
  readonly price: ListedPrice;
}

/** One model of a price list. */
export interface ListedModel {
  /** The entry's name in the list (LiteLLM's key, models.dev's model id). */
  readonly entry: string;
  /** The name a gateway.yaml model would have: the entry without a provider prefix. */
  readonly name: string;
  /** LiteLLM's litellm_provider, models.dev's provider id. */
  readonly provider?: string;
  /** The endpoint kind for a model added to gateway.yaml; absent: the list's kind has none. */
  readonly endpoint?: Endpoint;
  /** Why the model has no endpoint (LiteLLM's mode, models.dev's modalities). */
  readonly kind?: string;
  readonly maxOutputTokens?: number;
  readonly price: ListedPrice;
  /** What the list says that the gateway's price cannot hold, and was left out. */
  readonly notes: readonly string[];
}

/** What a list reader gives: every model it could read, and its refusals by entry. */
export interface PriceList {
  readonly format: PriceFormat;
  readonly models: readonly ListedModel[];
  /** Entries that could not be read exactly, and why. */
  readonly refused: readonly RefusedEntry[];
  /** The top-level price keys of gateway.yaml this format can state (others are left as they are). */
  readonly covers: ReadonlySet<string>;
}

/** An entry of the list that cannot be priced exactly. */
export interface RefusedEntry {
  readonly entry: string;
  readonly name: string;
  readonly provider?: string;
  readonly reason: string;
}

export type PriceFormat = "litellm" | "models.dev";

/** A price list that cannot be read at all (the file, not one entry). */
export class PriceListError extends Error {}
