// Which models of gateway.yaml a price list prices, and what their price becomes: each
// model is looked up by its name, then by the upstream names channels map it to; a name
// several providers list is settled by --provider, by the provider of the channels that
// serve the model, or by the providers agreeing. Keys the list's format cannot state are
// kept as gateway.yaml has them.

import type { Endpoint } from "../runtime/types.js";
import { flatten, priceChanges, priceValueOf, type FieldChange } from "./diff.js";
import type { ListedModel, PriceList } from "./listed.js";
import { gatewayPrice, isPriced, Num, type PriceObject, type PriceValue } from "./price-keys.js";

/** The parts of gateway.yaml the import reads. */
export interface ConfigModels {
  readonly models: Readonly<Record<string, { readonly price?: unknown } | null | undefined>>;
  readonly channels: readonly { readonly protocol?: string; readonly models?: readonly string[]; readonly model_map?: Readonly<Record<string, string>> }[];
}

export interface PlanOptions {
  /** Only these models (of gateway.yaml or of the list, added when new). */
  readonly models?: readonly string[];
  /** Also add every model of the list that gateway.yaml lacks. */
  readonly all?: boolean;
  /** Only entries of this provider (LiteLLM's litellm_provider, models.dev's provider id). */
  readonly provider?: string;
}

/** One model whose price the import sets. */
export interface ModelPlan {
  readonly name: string;
  readonly listed: ListedModel;
  /** True when gateway.yaml does not have the model yet. */
  readonly added: boolean;
  /** The whole model for an added one (endpoint, max_output_tokens, price). */
  readonly body?: PriceObject;
  /** The price gateway.yaml gets (uncovered keys kept as they were). */
  readonly price: PriceObject;
  readonly changes: readonly FieldChange[];
}

export interface ImportPlan {
  readonly models: readonly ModelPlan[];
  /** gateway.yaml models the list prices as they are. */
  readonly unchanged: readonly string[];
  /** gateway.yaml models the list does not have. */
  readonly missing: readonly string[];
  /** What was left out, by model. */
  readonly notes: readonly string[];
  /** Models that cannot be imported as asked (a refused or ambiguous entry). */
  readonly errors: readonly string[];
}

/** The list providers that stand for a channel protocol, in both formats' names. */
const providersOfProtocol: Readonly<Record<string, readonly string[]>> = {
  openai: ["openai", "text-completion-openai"],
  anthropic: ["anthropic"],
  gemini: ["gemini", "google", "vertex_ai-language-models"],
};

type Found = { model: ListedModel } | { problem: string } | undefined;

/** Looks a name up in the list: the entry of that name, else the model of that name. */
function lookup(list: PriceList, name: string, options: PlanOptions, preferred: readonly string[]): Found {
  const ofProvider = (p: string | undefined) => options.provider === undefined || p === options.provider;
  let found = list.models.filter((m) => m.entry === name && ofProvider(m.provider));
  if (found.length === 0) found = list.models.filter((m) => m.name === name && ofProvider(m.provider));
  if (found.length === 0) {
    const refused = list.refused.find((r) => (r.entry === name || r.name === name) && ofProvider(r.provider));
    return refused ? { problem: `entry "${refused.entry}"${refused.provider ? ` (${refused.provider})` : ""}: ${refused.reason}` } : undefined;
  }
  if (found.length === 1) return { model: found[0] };
  const ofChannels = found.filter((m) => m.provider !== undefined && preferred.includes(m.provider));
  if (ofChannels.length === 1) return { model: ofChannels[0] };
  const prices = new Set(found.map((m) => [...flatten(gatewayPrice(m.price))].join(";")));
  if (prices.size === 1) return { model: found[0] };
  return { problem: `several providers list "${name}" at different prices (${found.map((m) => m.provider).join(", ")}): name one with --provider` };
}

/** The names a gateway model may have in the list, and the providers of its channels. */
function namesOf(config: ConfigModels, model: string): { names: string[]; preferred: string[] } {
  const names = [model];
  const preferred: string[] = [];
  for (const channel of config.channels) {
    if (!channel.models?.includes(model)) continue;
    const upstream = channel.model_map?.[model];
    if (upstream && !names.includes(upstream)) names.push(upstream);
    preferred.push(...(providersOfProtocol[channel.protocol ?? ""] ?? []));
  }
  return { names, preferred };
}

function findFor(list: PriceList, config: ConfigModels, model: string, options: PlanOptions): Found {
  const { names, preferred } = namesOf(config, model);
  let problem: Found;
  for (const name of names) {
    const found = lookup(list, name, options, preferred);
    if (found && "model" in found) return found;
    problem ??= found;
  }
  return problem;
}

/** The price gateway.yaml gets: the list's, plus the old keys the format cannot state. */
function nextPrice(listed: ListedModel, old: PriceObject, covers: ReadonlySet<string>): PriceObject {
  const next: Record<string, PriceValue> = { ...gatewayPrice(listed.price) };
  for (const [key, value] of Object.entries(old)) if (!covers.has(key) && !(key in next)) next[key] = value;
  return next;
}

function addedBody(listed: ListedModel, endpoint: Endpoint): PriceObject {
  return {
    endpoint,
    ...(listed.maxOutputTokens !== undefined && { max_output_tokens: new Num(String(listed.maxOutputTokens)) }),
    price: gatewayPrice(listed.price),
  };
}

/** Compares the list with gateway.yaml's models and says what the import would change. */
export function planImport(list: PriceList, config: ConfigModels, options: PlanOptions = {}): ImportPlan {
  const models: ModelPlan[] = [];
  const unchanged: string[] = [];
  const missing: string[] = [];
  const notes: string[] = [];
  const errors: string[] = [];
  const note = (name: string, listed: ListedModel) => listed.notes.forEach((n) => notes.push(`${name}: ${n}`));
  const existing = Object.keys(config.models);
  const wanted = options.models;
  for (const name of existing) {
    if (wanted && !wanted.includes(name)) continue;
    const found = findFor(list, config, name, options);
    if (!found) missing.push(name);
    else if ("problem" in found) errors.push(`${name}: ${found.problem}`);
    else if (!isPriced(found.model.price)) notes.push(`${name}: the list gives "${found.model.entry}" no price; left as it is`);
    else {
      const oldRaw = config.models[name]?.price;
      const old = (oldRaw && typeof oldRaw === "object" ? priceValueOf(oldRaw) : {}) as PriceObject;
      const price = nextPrice(found.model, old, list.covers);
      const changes = priceChanges(old, price);
      note(name, found.model);
      if (changes.length) models.push({ name, listed: found.model, added: false, price, changes });
      else unchanged.push(name);
    }
  }
  const toAdd = wanted ? wanted.filter((n) => !existing.includes(n)) : options.all ? newNames(list, config, options) : [];
  if (options.all && !wanted) {
    for (const r of list.refused) {
      if ((options.provider === undefined || r.provider === options.provider) && !existing.includes(r.name)) notes.push(`${r.name}: entry "${r.entry}": ${r.reason}; not added`);
    }
  }
  for (const name of toAdd) {
    const explicit = wanted !== undefined;
    const found = lookup(list, name, options, []);
    const skip = (why: string) => (explicit ? errors : notes).push(`${name}: ${why}${explicit ? "" : "; not added"}`);
    if (!found) skip("not in the list");
    else if ("problem" in found) skip(found.problem);
    else if (!isPriced(found.model.price)) skip("the list gives it no price");
    else if (!found.model.endpoint) skip(`${found.model.kind ?? "its kind"} has no gateway endpoint`);
    else {
      const body = addedBody(found.model, found.model.endpoint);
      const price = body.price as PriceObject;
      note(name, found.model);
      models.push({ name, listed: found.model, added: true, body, price, changes: priceChanges({}, price) });
    }
  }
  return { models, unchanged, missing, notes, errors };
}

/** The list's model names gateway.yaml lacks (once each), for --all: neither a model of
 * gateway.yaml nor the upstream name a channel maps one to. */
function newNames(list: PriceList, config: ConfigModels, options: PlanOptions): string[] {
  const known = new Set(Object.keys(config.models));
  for (const channel of config.channels) for (const upstream of Object.values(channel.model_map ?? {})) known.add(upstream);
  const names = new Set<string>();
  for (const m of list.models) {
    if (options.provider !== undefined && m.provider !== options.provider) continue;
    if (!known.has(m.name) && !known.has(m.entry)) names.add(m.name);
  }
  return [...names];
}
