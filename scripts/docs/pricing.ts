// Renders docs/pricing.md: how a request is priced, the component table (from the schema's
// descriptions of a price's keys, and what an omitted key falls back to from the code that
// `gateway check --prices` uses), the breakdown and how to reproduce a total by hand, the
// operator's cost, and worked examples (pricing-examples.ts) priced by the gateway's own
// priceUsage and encodeBreakdown, so the page cannot drift from the code.

import { Document, isScalar, stringify, visit } from "yaml";
import { decodeBreakdown, encodeBreakdown, perLabel, subtotalText, totalOf, type Breakdown } from "../../src/billing/breakdown.js";
import { formatNano, formatScaled, operatorCost, priceUsage, type Priced } from "../../src/billing/cost.js";
import { componentRows } from "../../src/billing/price-table.js";
import { modelPriceTable, renderPriceTable } from "../../src/cli/price-table.js";
import { compileSource } from "../../src/config/index.js";
import type { RawModel } from "../../src/config/raw.js";
import type { Units, Usage } from "../../src/protocols/usage.js";
import type { Price, Runtime } from "../../src/runtime/types.js";
import { prose } from "./config-reference.js";
import { workedExamples, type WorkedExample } from "./pricing-examples.js";
import {
  breakdownIntro, cheapestText, fallbackWarningText, howPricedText, marginIntro, pricingIntro, tiersIntro,
} from "./pricing-text.js";
import type { SchemaNode } from "./schema-tree.js";

const MILLION = 1_000_000n;
/** The multiplier of the group the examples are charged at: the list price. */
const LIST = MILLION;

/** Where each amount key shows in a breakdown, when not under its own name. */
const breakdownName: Readonly<Record<string, string>> = {
  per_request: "requests", per_image: "images", per_second: "milliseconds (per 1k)", per_1k_chars: "characters (per 1k)",
};

/** The config every example's model is compiled from: two groups, a channel per family
 * (the anthropic one bought at 10% off list), the examples' models. */
function examplesConfig(): string {
  const models: Record<string, RawModel> = {};
  for (const ex of workedExamples) if (ex.entry) models[ex.model] = ex.entry;
  const byProtocol = (p: string): string[] => workedExamples.filter((ex) => ex.entry && protocolOf(ex) === p).map((ex) => ex.model);
  const channel = (name: string, url: string, extra = ""): string =>
    `  - { name: ${name}, protocol: ${name}, base_url: "${url}", keys: [k], groups: [default, partners], models: [${byProtocol(name).join(", ")}]${extra} }\n`;
  return "groups: { default: {}, partners: { multiplier: 0.7 } }\n" +
    "users: { ops: { groups: [default, partners] } }\n" +
    "tokens:\n  - { name: docs, key: sk-docs, user: ops, group: default }\n" +
    "channels:\n" +
    channel("openai", "https://api.openai.com", ", cost: { multiplier: 0.8 }") +
    channel("anthropic", "https://api.anthropic.com", ", cost: { multiplier: 0.9 }") +
    channel("gemini", "https://generativelanguage.googleapis.com") +
    stringify({ models });
}

function protocolOf(ex: WorkedExample): string {
  return ex.model.startsWith("claude") ? "anthropic" : ex.model.startsWith("gemini") ? "gemini" : "openai";
}

/** Prices a usage with the gateway's code and checks its breakdown adds up to the same total. */
function priced(runtime: Runtime, model: string, usage: Usage, units: Units | undefined, multiplierPpm: bigint): { priced: Priced; text: string; read: Breakdown } {
  const price = runtime.models.get(model)!.price;
  const result = priceUsage(usage, price, multiplierPpm, units);
  const text = encodeBreakdown(result);
  const read = decodeBreakdown(text);
  if (totalOf(read) !== result.costNano) throw new Error(`${model}: the breakdown "${text}" does not add up to ${result.costNano}`);
  return { priced: result, text, read };
}

/** YAML as an operator writes it: lists and mappings of plain values on one line. */
function yamlOf(value: unknown): string {
  const doc = new Document(value);
  visit(doc, {
    Seq: (_key, node) => void (node.flow = node.items.every(isScalar)),
    Map: (_key, node) => void (node.flow = node.items.every((pair) => isScalar(pair.value)) && node.items.length <= 3),
  });
  return doc.toString().trimEnd().replace(/\[ ([^\]\n]*) \]/g, "[$1]");
}

const count = (n: number): string => n.toLocaleString("en-US");

/** An exact decimal text as an integer of 10^-places. */
function scaled(text: string, places: number): bigint {
  const [int, frac = ""] = text.split(".");
  return BigInt(int + frac.padEnd(places, "0"));
}

/** The breakdown's lines as a table: quantity × price / per (× multipliers) = exact subtotal. */
function linesTable(read: Breakdown): string[] {
  const rows = read.lines.map((line) =>
    `| \`${line.component}\` | ${count(line.quantity)} | ${formatScaled(line.priceFemto, 15)} | ${perLabel(line.per)} | ${subtotalText(line, read)} |`);
  return ["| line | quantity | price | per | subtotal |", "|---|--:|--:|--:|--:|", ...rows];
}

/** The multipliers a breakdown applies, in words. */
function multipliersText(read: Breakdown): string {
  const parts = [`the group's multiplier ${formatScaled(read.multiplierPpm, 6)}`];
  if (read.serviceTier) parts.push(`service tier \`${read.serviceTier.name}\` × ${formatScaled(read.serviceTier.ppm, 6)}`);
  return parts.join(" and ");
}

function exampleSection(ex: WorkedExample, runtime: Runtime): string[] {
  const { priced: p, text, read } = priced(runtime, ex.model, ex.usage, ex.units, LIST);
  const price = ex.entry ? ["```yaml", yamlOf({ models: { [ex.model]: ex.entry } }), "```"] : [`The price of \`${ex.model}\` above.`];
  const chose = [p.tierAbove !== undefined ? `the tier above ${count(p.tierAbove)} input tokens` : undefined,
    p.variant ? `the variant \`${Object.entries(p.variant).map(([k, v]) => `${k}: ${v}`).join(", ")}\`` : undefined].filter(Boolean);
  return [
    `### ${ex.title}`, "",
    `List price: ${ex.source.replace(/^(\S+)/, "<$1>")}.`, "",
    ...price, "",
    `${ex.wire.label}:`, "",
    "```json", JSON.stringify(ex.wire.json, null, 2), "```", "",
    ex.reads, "",
    ...(chose.length ? [`Priced at ${chose.join(" and ")}.`, ""] : []),
    "The breakdown the usage log keeps:", "",
    "```text", text, "```", "",
    ...linesTable(read), "",
    `Each subtotal includes ${multipliersText(read)}. Total: **${formatNano(p.costNano)}**.`, "",
  ];
}

/** The Price field of each token amount key (what a fallback is computed without). */
const tokenFields: Readonly<Record<string, keyof Price>> = {
  input: "inputPer1M", output: "outputPer1M", cache_read: "cacheReadPer1M", cache_write: "cacheWritePer1M",
  cache_write_1h: "cacheWrite1hPer1M", audio_input: "audioInputPer1M", audio_cache_read: "audioCacheReadPer1M",
  audio_output: "audioOutputPer1M", image_input: "imageInputPer1M", image_output: "imageOutputPer1M", reasoning: "reasoningPer1M",
};

/** Distinct ratios, so a rate's origin can be told back by name. */
const ratioNames: ReadonlyArray<readonly [string, keyof Price, bigint]> = [
  ["cache_read_ratio", "cacheReadRatioPpm", 100_001n], ["cache_write_ratio", "cacheWriteRatioPpm", 1_250_001n],
  ["cache_write_1h_ratio", "cacheWrite1hRatioPpm", 2_000_001n],
];

/** What an omitted token amount key is billed as, by the rates `gateway check --prices`
 * shows: of a price that names every other amount, with its ratios and without them. */
function omittedText(key: string): string {
  const field = tokenFields[key];
  if (field === undefined) return "not billed";
  if (key === "input" || key === "output") return "not billed (0)";
  const amounts: Record<string, bigint> = {};
  for (const other of Object.values(tokenFields)) if (other !== field) amounts[other] = 1n;
  const ratios = Object.fromEntries(ratioNames.map(([, f, ppm]) => [f, ppm]));
  const origin = (price: Price): string => {
    const row = componentRows(price).find((r) => r.component === key)!;
    let from = row.from.replace(/^= /, "");
    for (const [name, , ppm] of ratioNames) from = from.replace(formatScaled(ppm, 6), name);
    return row.fallback ? `${from}, and warned once per model` : from;
  };
  const withRatios = origin({ ...amounts, ...ratios } as Price);
  const without = origin(amounts as Price);
  return withRatios === without ? `billed as ${without}` : `billed as ${withRatios}; without the ratio, as ${without}`;
}

/** The component table: each amount key, its breakdown line, what it prices (the schema's
 * words), and what an omitted key is billed as. */
function componentTable(price: SchemaNode): string[] {
  const rows: string[] = [];
  for (const [key, node] of Object.entries(price.properties ?? {})) {
    if (node.$ref !== "#/$defs/money") continue;
    const what = (node.description ?? "").replace(/\s*Omitted:.*$/, "");
    rows.push(`| \`${key}\` | \`${breakdownName[key] ?? key}\` | ${prose(what)} | ${prose(omittedText(key))} |`);
  }
  return ["| key | breakdown line | what it prices | when the price omits it |", "|---|---|---|---|", ...rows];
}

function keyList(price: SchemaNode, test: (key: string, node: SchemaNode) => boolean): string[] {
  return Object.entries(price.properties ?? {})
    .filter(([key, node]) => test(key, node))
    .map(([key, node]) => `- \`${key}\`: ${prose(node.description ?? "")}`);
}

/** The reproduce-by-hand walk-through: a small gpt-5 request at flex, in a group at 0.7. */
function byHand(runtime: Runtime): string[] {
  const usage: Usage = { input: 1235, cacheRead: 1024, cacheWrite: 0, output: 321, reasoning: 128, serviceTier: "flex" };
  const { priced: p, text, read } = priced(runtime, "gpt-5", usage, undefined, runtime.groups.get("partners")!.multiplierPpm);
  let exact = 0n;
  for (const line of read.lines) exact += scaled(subtotalText(line, read), 33);
  return [
    "For example, a small `gpt-5` request served at `flex` to a token of a group at multiplier 0.7:", "",
    "```text", text, "```", "",
    ...linesTable(read), "",
    `The subtotals add up to exactly ${formatScaled(exact, 33)}; rounded once, half up, to the nano-unit that is **${formatNano(p.costNano)}**, the entry's cost.`, "",
  ];
}

/** The operator's side of the first example: the same request on a channel at 0.8 of list. */
function marginExample(runtime: Runtime): string[] {
  const ex = workedExamples[0];
  const charged = priced(runtime, ex.model, ex.usage, ex.units, LIST).priced.costNano;
  const channel = runtime.channels.get("openai")!;
  const cost = operatorCost(ex.usage, runtime.models.get(ex.model)!.price, ex.model, channel.cost, ex.units);
  return [
    `The \`${ex.model}\` request of the first worked example, charged ${formatNano(charged)} at the list price, on a channel declared with \`cost: { multiplier: ${formatScaled(channel.cost!.multiplierPpm!, 6)} }\`: it cost the operator ${formatNano(cost)}, a margin of ${formatNano(charged - cost)}.`, "",
  ];
}

/** The whole of docs/pricing.md. */
export function renderPricing(schema: SchemaNode): string {
  const price = schema.$defs?.price ?? {};
  const { runtime } = compileSource(examplesConfig(), { path: "pricing-examples.yaml", env: {}, generation: 1 });
  const sample = modelPriceTable(runtime, "claude-sonnet-4-5")!;
  const tiers = price.properties ?? {};
  const out: string[] = [
    "<!-- Generated by `npm run docs` from schemas/gateway.schema.json, scripts/docs/pricing*.ts and the gateway's pricing code. Do not edit: change those and regenerate. -->", "",
    "# Pricing", "",
    pricingIntro, "",
    "## How a request is priced", "",
    howPricedText, "",
    "## Components", "",
    "Each amount key of a price, the line it makes in a breakdown, and what is billed when the price leaves it out:", "",
    ...componentTable(price), "",
    "Ratios, instead of a cache price of its own:", "",
    ...keyList(price, (_k, node) => node.$ref === "#/$defs/ratio"), "",
    `Hosted tools (\`tool_calls\`): ${prose(tiers.tool_calls?.description ?? "")}`, "",
    "## Tiers, variants and service tiers", "",
    tiersIntro, "",
    ...keyList(price, (key) => key === "tiers" || key === "variants" || key === "service_tiers"), "",
    "`gateway check --config gateway.yaml --prices MODEL` prints a model's price as compiled: every component with its rate and where it comes from (its own price, a ratio, or a fallback and to which base), each tier and variant by what it changes, the service tiers, what each group serving it charges and what each channel costs. For the examples' Claude Sonnet 4.5, in a config with a group at 0.7 and an Anthropic channel bought at 0.9 of list:", "",
    "```text", renderPriceTable(sample).trimEnd(), "```", "",
    "## The breakdown, and a total by hand", "",
    breakdownIntro, "",
    ...byHand(runtime),
    "## What a request costs the operator", "",
    marginIntro, "",
    `- \`channels[].cost\`: ${prose(schema.properties?.channels?.items?.properties?.cost?.description ?? "")}`, "",
    ...marginExample(runtime),
    "## strategy: cheapest", "",
    `\`groups.<group>.strategy\`: ${prose(schema.properties?.groups?.additionalProperties && typeof schema.properties.groups.additionalProperties === "object" ? schema.properties.groups.additionalProperties.properties?.strategy?.description ?? "" : "")}`, "",
    cheapestText, "",
    "## Warnings for fallbacks", "",
    fallbackWarningText, "",
    "## Worked examples", "",
    "List prices as each provider published them when this page was written (check the provider's page before copying them); every total below is computed by the gateway's own pricing code when the page is generated, at a group multiplier of 1.", "",
  ];
  for (const ex of workedExamples) out.push(...exampleSection(ex, runtime));
  return out.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n";
}

/** Every worked example's total in the currency, by title (what the docs test checks by hand). */
export function workedTotals(): Record<string, string> {
  const { runtime } = compileSource(examplesConfig(), { path: "pricing-examples.yaml", env: {}, generation: 1 });
  return Object.fromEntries(workedExamples.map((ex) => [ex.title, formatNano(priced(runtime, ex.model, ex.usage, ex.units, LIST).priced.costNano)]));
}
