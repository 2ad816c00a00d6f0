// Renders docs/configuration.md from the gateway.yaml JSON Schema: an overview table of every
// key, then one section per key with its type, default, rule and description.

import { resolveNode, schemaKeys, sectionDefs, type SchemaKey, type SchemaNode } from "./schema-tree.js";

/** `$defs` entries documented as value formats, in this order; keys link to them. */
const valueFormats = ["duration", "size", "money", "ratio", "name"] as const;

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading.toLowerCase().replace(/[^a-z0-9 _-]/g, "").replace(/ /g, "-");
}

function code(value: unknown): string {
  return `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
}

/** Markdown table cells may not hold a raw pipe or newline. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

function range(node: SchemaNode): string {
  const { minimum: min, maximum: max } = node;
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return min === 0 ? " ≥ 0" : ` ≥ ${min}`;
  if (max !== undefined) return ` ≤ ${max}`;
  return "";
}

/** Definitions a key's type links to: the value formats and the sections of their own. */
const linkedDefs: readonly string[] = [...valueFormats, ...sectionDefs];

/** A short type phrase for a (resolved) schema node: "integer from 1 to 20", "list of strings". */
function typeOf(node: SchemaNode, ref: string | undefined, defs: Record<string, SchemaNode>): string {
  if (ref && linkedDefs.includes(ref)) return `[${ref}](#${ref})`;
  if (node.enum) return `one of ${node.enum.map(code).join(", ")}`;
  if (node.const !== undefined) return code(node.const);
  if (node.oneOf) return alternatives(node.oneOf, defs);
  const types = Array.isArray(node.type) ? node.type : node.type ? [node.type] : [];
  if (types.includes("array") && node.items) {
    const item = resolveNode(node.items, defs);
    const inner = item.node.properties ? "mappings" : plural(typeOf(item.node, item.ref, defs));
    return `list of ${inner}${node.minItems ? ", not empty" : ""}`;
  }
  if (types.includes("object") || node.properties || node.additionalProperties !== undefined) {
    const entry = typeof node.additionalProperties === "object" ? node.additionalProperties : undefined;
    if (entry && !node.properties) {
      const resolved = resolveNode(entry, defs);
      const linked = resolved.ref !== undefined && linkedDefs.includes(resolved.ref);
      const inner = !linked && resolved.node.properties ? "a mapping" : `a ${typeOf(resolved.node, resolved.ref, defs)}`;
      return `mapping of name to ${inner}`;
    }
    return "mapping";
  }
  if (types.length === 0) return "any";
  return types.join(" or ") + range(node);
}

/** "one of a, b, or a list of them" when a list alternative repeats an enum alternative. */
function alternatives(options: SchemaNode[], defs: Record<string, SchemaNode>): string {
  const phrases = options.map((alt) => {
    const repeated = alt.items?.enum && options.some((other) => other !== alt && JSON.stringify(other.enum) === JSON.stringify(alt.items?.enum));
    return repeated ? "a list of them" : typeOf(alt, undefined, defs);
  });
  return phrases.join(", or ");
}

/** Markdown prose from schema text: `<path>` and the like would otherwise vanish as HTML tags. */
export function prose(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")))
    .join("");
}

function plural(phrase: string): string {
  if (/^one of /.test(phrase)) return `values ${phrase}`;
  return /^(string|integer|number|boolean)\b/.test(phrase) ? phrase.replace(/^(\w+)/, "$1s") : phrase;
}

/** The description without its closing "Default: X." when the default line already says X. */
function describe(node: SchemaNode): string {
  const text = node.description ?? "";
  if (node.default === undefined) return text;
  const shown = typeof node.default === "string" ? node.default : JSON.stringify(node.default);
  const sentence = ` Default: ${shown}.`;
  return text.endsWith(sentence) ? text.slice(0, -sentence.length) : text;
}

function heading(key: SchemaKey): string {
  return key.depth === 0 ? `## \`${key.path}\`` : `### \`${key.path}\``;
}

function facts(key: SchemaKey, defs: Record<string, SchemaNode>): string[] {
  const lines = [`- Type: ${typeOf(key.node, key.ref, defs)}`];
  if (key.node.default !== undefined) lines.push(`- Default: ${code(key.node.default)}`);
  if (key.required) lines.push("- Required");
  const rule = key.node["x-message"];
  if (rule && !(key.ref && (valueFormats as readonly string[]).includes(key.ref))) lines.push(`- Rule: ${prose(rule)}`);
  if (key.repeats?.length) {
    const links = key.repeats.map((name) => `[\`${name}\`](#${anchorOf(`${key.section}.${name}`)})`).join(", ");
    lines.push(`- Each entry: the keys below, and any amount key of a ${key.section} (${links})`);
  }
  return lines;
}

/** The section of one definition documented once (`## Price`): what refers to it, its keys. */
function definitionSection(name: string, keys: SchemaKey[], all: SchemaKey[], defs: Record<string, SchemaNode>, intro: string): string[] {
  const referrers = all.filter((k) => k.section === undefined && (k.ref === name || refOfEntries(k.node) === name));
  const where = referrers.map((k) => `[\`${k.path}\`](#${anchorOf(k.path)})${k.ref === name ? "" : " (each entry)"}`).join(" and ");
  const out = [`## ${name[0].toUpperCase()}${name.slice(1)}`, "", prose(defs[name]?.description ?? ""), "", `Written at ${where}. ${intro}`, ""];
  for (const key of keys) {
    // A list whose entries repeat the definition's keys says what an entry is, too.
    const entry = key.repeats?.length ? resolveNode(key.node.items ?? {}, defs).node.description : undefined;
    out.push(heading(key), "", ...facts(key, defs), "", prose(describe(key.node)), "", entry ? `Each entry: ${prose(entry[0].toLowerCase() + entry.slice(1))}` : "", "");
  }
  return out;
}

/** The `$defs` name a mapping's entries refer to, if any. */
function refOfEntries(node: SchemaNode): string | undefined {
  const entry = typeof node.additionalProperties === "object" ? node.additionalProperties.$ref : undefined;
  return entry?.replace(/^#\/\$defs\//, "");
}

function overview(keys: SchemaKey[], defs: Record<string, SchemaNode>): string[] {
  const rows = keys.map((key) => {
    const link = `[\`${key.path}\`](#${anchorOf(key.path)})`;
    const def = key.node.default === undefined ? (key.required ? "required" : "") : code(key.node.default);
    return `| ${link} | ${cell(typeOf(key.node, key.ref, defs))} | ${cell(def)} |`;
  });
  return ["| key | type | default |", "|---|---|---|", ...rows];
}

/** The whole of docs/configuration.md for `schema` (the parsed gateway.schema.json). */
export function renderConfigReference(schema: SchemaNode): string {
  const defs = schema.$defs ?? {};
  const keys = schemaKeys(schema);
  const out: string[] = [
    "<!-- Generated by `npm run docs` from schemas/gateway.schema.json. Do not edit: change the schema's descriptions and regenerate. -->",
    "",
    "# gateway.yaml reference",
    "",
    prose(schema.description ?? ""),
    "",
    "Check a file with `npx gateway check --config gateway.yaml`: it prints every problem with its line and column and exits 1. In the paths below, `<group>`, `<user>` and `<model>` stand for the names you choose, and `[]` for each entry of a list.",
    "",
    "## Overview",
    "",
    ...overview(keys, defs),
    "",
  ];
  for (const key of keys) {
    if (key.section !== undefined) continue;
    out.push(heading(key), "", ...facts(key, defs), "", prose(describe(key.node)), "");
  }
  const priceIntro = "Every amount is in fiat, per 1M tokens unless its key names another unit; how a request is priced from these keys, with worked examples per provider, is in [pricing.md](pricing.md), and `gateway check --prices` prints a model's price as compiled.";
  out.push(...definitionSection("price", keys.filter((k) => k.section === "price"), keys, defs, priceIntro));
  out.push("## Value formats", "");
  for (const name of valueFormats) {
    const def = defs[name];
    if (!def) continue;
    out.push(`### ${name}`, "", prose(def.description ?? ""), "");
    if (def["x-message"]) out.push(`A value that does not fit is reported as: ${prose(def["x-message"])}.`, "");
  }
  return out.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n";
}
