// A price list file: parsed as JSON, its format told from its shape (or named), and read
// by that format's reader. Nothing is fetched: the operator downloads the file.

import { readLitellm } from "./litellm.js";
import { PriceListError, type PriceFormat, type PriceList } from "./listed.js";
import { readModelsDev } from "./models-dev.js";

export const priceFormats: readonly PriceFormat[] = ["litellm", "models.dev"];

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The format a parsed file has: LiteLLM's entries carry per-token costs or a litellm_provider,
 * models.dev's providers carry a `models` map. */
export function detectFormat(data: Readonly<Record<string, unknown>>): PriceFormat | undefined {
  const values = Object.values(data).filter(isObject);
  if ("sample_spec" in data) return "litellm";
  if (values.length && values.every((v) => isObject(v.models))) return "models.dev";
  if (values.some((v) => typeof v.litellm_provider === "string" || Object.keys(v).some((k) => /_cost_per_token$/.test(k)))) return "litellm";
  return undefined;
}

/** Reads the text of `file` as a price list; throws PriceListError naming the file. */
export function readPriceList(text: string, file: string, format?: PriceFormat): PriceList {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new PriceListError(`${file}: not JSON: ${(error as Error).message}`);
  }
  if (!isObject(data)) throw new PriceListError(`${file}: expected a JSON object of models (LiteLLM) or of providers (models.dev)`);
  const chosen = format ?? detectFormat(data);
  if (!chosen) {
    throw new PriceListError(`${file}: cannot tell its format: neither LiteLLM's model_prices_and_context_window.json (models with *_cost_per_token) nor models.dev's api.json (providers with models); name it with --format`);
  }
  return chosen === "litellm" ? readLitellm(data) : readModelsDev(data);
}
