// Walks the gateway.yaml JSON Schema into a flat list of documented keys (path, resolved
// schema, required or not), the one view both the reference generator and its tests use.

/** The subset of JSON Schema that schemas/gateway.schema.json uses. */
export interface SchemaNode {
  title?: string;
  description?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  patternProperties?: Record<string, SchemaNode>;
  propertyNames?: SchemaNode;
  items?: SchemaNode;
  required?: string[];
  oneOf?: SchemaNode[];
  $ref?: string;
  $defs?: Record<string, SchemaNode>;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  minProperties?: number;
  pattern?: string;
  "x-message"?: string;
}

/** One key of gateway.yaml as the reference documents it. */
export interface SchemaKey {
  /** Dotted path: `server.listen`, `groups.<group>.multiplier`, `tokens[].name`. */
  path: string;
  /** The key's own schema with its `$ref` merged in (its own keywords win). */
  node: SchemaNode;
  /** Name of the `$defs` entry it refers to, if any (duration, size, money…). */
  ref?: string;
  required: boolean;
  /** Nesting level: 0 for top-level keys. */
  depth: number;
  /** The `$defs` entry whose own section documents this key (`price`), if any. */
  section?: string;
  /** For a list of mappings whose entries repeat keys of their section's definition (a
   * price's tiers[] and variants[]): those keys, documented once, not again per entry. */
  repeats?: string[];
}

/** `$defs` entries documented once, in a section of their own: the keys that refer to one
 * link there instead of repeating its keys. */
export const sectionDefs = ["price"] as const;

/** The `$defs` name a `$ref` points at. */
function refName(ref: string): string {
  const match = /^#\/\$defs\/(.+)$/.exec(ref);
  if (!match) throw new Error(`unsupported $ref ${ref}: only #/$defs/<name> is documented`);
  return match[1];
}

/** Resolves a node's `$ref` against `$defs`; the node's own keywords override the target's. */
export function resolveNode(node: SchemaNode, defs: Record<string, SchemaNode>): { node: SchemaNode; ref?: string } {
  if (node.$ref === undefined) return { node };
  const name = refName(node.$ref);
  const target = defs[name];
  if (!target) throw new Error(`$ref ${node.$ref} names no $defs entry`);
  const { $ref: _ref, ...own } = node;
  return { node: { ...target, ...own }, ref: name };
}

/** Placeholder segment for the entries of a map keyed by name: groups → <group>. */
function entryName(key: string): string {
  return `<${key.replace(/s$/, "")}>`;
}

/** Whether a node is (or maps names to) a definition documented in its own section. */
function refersToSection(node: SchemaNode): boolean {
  const target = node.$ref ?? (typeof node.additionalProperties === "object" ? node.additionalProperties.$ref : undefined);
  return target !== undefined && (sectionDefs as readonly string[]).includes(refName(target));
}

/**
 * Every key of the schema, depth first in file order (so the output is deterministic), then
 * the keys of each section definition (`price.input`, `price.tiers[].above_input_tokens`).
 * A key that refers to a section definition is not descended into; a list entry's keys that
 * repeat its section definition's own are named in the list key's `repeats`, not again.
 */
export function schemaKeys(root: SchemaNode): SchemaKey[] {
  const defs = root.$defs ?? {};
  const keys: SchemaKey[] = [];
  let section: SchemaNode | undefined;

  const visitObject = (object: SchemaNode, prefix: string, depth: number): void => {
    const required = new Set(object.required ?? []);
    for (const [name, child] of Object.entries(object.properties ?? {})) {
      if (section && object !== section && JSON.stringify(section.properties?.[name]) === JSON.stringify(child)) continue;
      const path = prefix + name;
      const resolved = resolveNode(child, defs);
      const key: SchemaKey = { path, ...resolved, required: required.has(name), depth };
      const repeats = section && repeatedKeys(resolved.node, section);
      if (repeats?.length) key.repeats = repeats;
      keys.push(key);
      if (!refersToSection(child)) visitChildren(resolved.node, path, name, depth + 1);
    }
    // Pattern keys (x-*) last: they are the exception, not the configuration.
    for (const [name, child] of Object.entries(object.patternProperties ?? {})) {
      const path = prefix + name.replace(/^\^/, "").replace(/\$$/, "") + "*";
      keys.push({ path, node: child, required: false, depth });
    }
  };

  const visitChildren = (node: SchemaNode, path: string, name: string, depth: number): void => {
    if (node.properties) visitObject(node, `${path}.`, depth);
    const entry = typeof node.additionalProperties === "object" ? resolveNode(node.additionalProperties, defs).node : undefined;
    if (entry?.properties) visitObject(entry, `${path}.${entryName(name)}.`, depth);
    const item = node.items ? resolveNode(node.items, defs).node : undefined;
    if (item?.properties) visitObject(item, `${path}[].`, depth);
  };

  visitObject(root, "", 0);
  for (const name of sectionDefs) {
    const def = defs[name];
    if (!def) continue;
    section = def;
    const from = keys.length;
    visitObject(def, `${name}.`, 1);
    for (const key of keys.slice(from)) key.section = name;
  }
  return keys;
}

/** The keys a list of mappings' entries share with `section` (a tier's amounts). */
function repeatedKeys(node: SchemaNode, section: SchemaNode): string[] {
  const item = node.items?.properties;
  if (!item) return [];
  return Object.keys(item).filter((name) => JSON.stringify(section.properties?.[name]) === JSON.stringify(item[name]));
}

/** Paths of keys (in `properties` or `patternProperties`, `$defs` included) with no description. */
export function undocumentedKeys(root: SchemaNode): string[] {
  const missing: string[] = [];
  const visit = (node: unknown, at: string): void => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => visit(item, `${at}/${i}`));
      return;
    }
    if (!node || typeof node !== "object") return;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if ((key === "properties" || key === "patternProperties") && value && typeof value === "object") {
        for (const [name, child] of Object.entries(value as Record<string, SchemaNode>)) {
          const text = child.description;
          if (typeof text !== "string" || text.trim() === "") missing.push(`${at}/${key}/${name}`);
        }
      }
      visit(value, `${at}/${key}`);
    }
  };
  visit(root, "#");
  return missing;
}
