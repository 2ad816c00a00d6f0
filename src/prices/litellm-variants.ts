// LiteLLM prices image sizes and qualities as entries of their own
// (`high/1024-x-1024/gpt-image-1`, `1024-x-1024/dall-e-2`): they become variants of the
// model they name, chosen by the request's size and quality.

import { decimalText, nanoOf, times } from "./amount.js";
import { amount, EntryProblem, exactNano, nameOf, type Entry } from "./litellm-entry.js";
import type { ListedModel, ListedVariant } from "./listed.js";

/** `high/1024-x-1024/gpt-image-1`, `1024-x-1024/dall-e-2`: a size (and quality) of a model. */
export const variantKey = /^(?:(low|medium|high|standard|hd)\/)?(\d+)-x-(\d+)\/(?!\d+-steps\/|max-steps\/)(.+)$/;

/** A size/quality entry's price per image: its per-image price, else per pixel × pixels. */
function variantPrice(entry: Entry, width: number, height: number): bigint {
  const perImage = exactNano(entry, "input_cost_per_image", 0, "per image") ?? exactNano(entry, "output_cost_per_image", 0, "per image");
  if (perImage !== undefined) return perImage;
  const perPixel = amount(entry, "input_cost_per_pixel");
  if (!perPixel) throw new EntryProblem("has no price per image or per pixel");
  const nano = nanoOf(times(perPixel, BigInt(width * height)));
  if (nano === undefined) {
    throw new EntryProblem(`input_cost_per_pixel ${decimalText(perPixel)} × ${width * height} pixels is more than 9 decimal places, not exact`);
  }
  return nano;
}

/** Variants found for a model, and the size/quality entries that could not be priced. */
export interface Variants {
  readonly list: ListedVariant[];
  readonly notes: string[];
  provider?: string;
}

/** One size (and quality) entry, as a variant of the model it names; a price that is not
 * exact is a note on that model rather than a refusal of it. */
export function readVariant(key: string, match: RegExpExecArray, entry: Entry, variants: Map<string, Variants>): void {
  const [, quality, width, height, model] = match;
  const found = variants.get(model) ?? { list: [], notes: [] };
  variants.set(model, found);
  if (typeof entry.litellm_provider === "string") found.provider ??= entry.litellm_provider;
  const when: Record<string, string> = { size: `${width}x${height}`, ...(quality && { quality }) };
  try {
    found.list.push({ when, price: { perImage: variantPrice(entry, Number(width), Number(height)) } });
  } catch (error) {
    if (!(error instanceof EntryProblem)) throw error;
    found.notes.push(`variant ${key} left out: ${error.message}`);
  }
}

function mostSpecificFirst(list: readonly ListedVariant[]): ListedVariant[] {
  return [...list].sort((a, b) => Object.keys(b.when).length - Object.keys(a.when).length);
}

/**
 * Size and quality entries become variants of their model, the most specific first. A
 * model priced by tokens keeps its token prices alone (its answer reports them: a price
 * per image as well would charge twice); a model with no entry of its own is made from
 * its variants, at the dearest one's price where a request matches none.
 */
export function attachVariants(models: ListedModel[], variants: Map<string, Variants>): ListedModel[] {
  const out = models.map((model) => {
    const found = variants.get(model.entry);
    if (!found) return model;
    const byTokens = (model.price.input ?? 0n) > 0n || (model.price.output ?? 0n) > 0n;
    if (byTokens && found.list.length) return { ...model, notes: [...model.notes, "size and quality prices left out: the model is priced by tokens", ...found.notes] };
    const price = found.list.length ? { ...model.price, variants: mostSpecificFirst(found.list) } : model.price;
    return { ...model, price, notes: [...model.notes, ...found.notes] };
  });
  const named = new Set(models.map((m) => m.entry));
  for (const [model, found] of variants) {
    if (named.has(model)) continue;
    const dearest = found.list.reduce((max, v) => (v.price.perImage! > max ? v.price.perImage! : max), 0n);
    const notes = found.list.length ? ["no entry of its own: a request matching no size or quality is charged the dearest one's price", ...found.notes] : found.notes;
    out.push({
      entry: model, name: nameOf(model, found.provider), ...(found.provider && { provider: found.provider }),
      endpoint: "image", kind: "mode image_generation",
      price: found.list.length ? { perImage: dearest, variants: mostSpecificFirst(found.list) } : {},
      notes,
    });
  }
  return out;
}
