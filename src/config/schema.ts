// Validates parsed gateway.yaml against schemas/gateway.schema.json (compiled once) and
// turns ajv's errors into issues a person can act on: which key, what is wrong.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import Ajv2020Module from "ajv/dist/2020.js";
import type { ErrorObject, ValidateFunction } from "ajv";
import type { KeyPath, RawIssue } from "./locate.js";

/** Absolute path of the gateway.yaml JSON Schema shipped with the package. */
export const gatewaySchemaPath = fileURLToPath(new URL("../../schemas/gateway.schema.json", import.meta.url));

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (compiled) return compiled;
  const ajv = new Ajv2020Module.default({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
  // Our annotation: the message shown when a pattern or oneOf fails.
  ajv.addKeyword({ keyword: "x-message", schemaType: "string" });
  compiled = ajv.compile(JSON.parse(readFileSync(gatewaySchemaPath, "utf8")) as object);
  return compiled;
}

/** Converts a JSON pointer into a key path, using the data to tell list indexes from keys. */
function pointerToPath(pointer: string, data: unknown): (string | number)[] {
  const path: (string | number)[] = [];
  let node = data;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    const segment = Array.isArray(node) ? Number(key) : key;
    path.push(segment);
    node = node && typeof node === "object" ? (node as Record<string | number, unknown>)[segment] : undefined;
  }
  return path;
}

const typeWords: Record<string, string> = {
  object: "a mapping",
  array: "a list",
  string: "a string",
  number: "a number",
  integer: "a whole number",
  boolean: "true or false",
  null: "empty",
};

function describe(value: unknown): string {
  if (value === null || value === undefined) return "empty";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "number" && !Number.isInteger(value)) return `${value}`;
  return JSON.stringify(value);
}

function closest(word: string, candidates: string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    const row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      let diagonal = row[0];
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const above = row[j];
        row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
        diagonal = above;
      }
    }
    return row[b.length];
  };
  const ranked = candidates.map((c) => ({ c, d: distance(word, c) })).sort((x, y) => x.d - y.d);
  return ranked[0] && ranked[0].d <= Math.max(2, Math.floor(word.length / 3)) ? ranked[0].c : undefined;
}

function translate(error: ErrorObject, path: KeyPath): RawIssue | undefined {
  const schema = (error.parentSchema ?? {}) as Record<string, unknown>;
  const custom = typeof schema["x-message"] === "string" ? schema["x-message"] : undefined;
  const params = error.params as Record<string, unknown>;
  if (error.propertyName !== undefined) {
    return { path: [...path, error.propertyName], at: "key", message: `invalid name "${error.propertyName}": ${custom ?? error.message}` };
  }
  switch (error.keyword) {
    case "additionalProperties": {
      const key = String(params.additionalProperty);
      const known = Object.keys((schema.properties as object | undefined) ?? {});
      const hint = closest(key, known);
      return { path: [...path, key], at: "key", message: `unknown key "${key}"${hint ? ` (did you mean "${hint}"?)` : ""}` };
    }
    case "required":
      return { path: [...path, String(params.missingProperty)], message: `missing required key "${params.missingProperty}"` };
    case "type": {
      const wanted = String(params.type).split(",").map((t) => typeWords[t] ?? t);
      return { path, message: `must be ${wanted.join(" or ")}, not ${describe(error.data)}` };
    }
    case "enum":
      return { path, message: `must be one of ${(params.allowedValues as unknown[]).join(", ")}, not ${describe(error.data)}` };
    case "pattern":
    case "oneOf":
      return { path, message: custom ?? error.message ?? "is invalid" };
    case "minimum":
      return { path, message: `must be ${params.limit} or more, not ${describe(error.data)}` };
    case "maximum":
      return { path, message: `must be ${params.limit} or less, not ${describe(error.data)}` };
    case "minItems":
    case "minLength":
    case "minProperties":
      return { path, message: params.limit === 1 ? "must not be empty" : (error.message ?? "is too short") };
    case "propertyNames":
    case "if":
      return undefined; // reported by the inner error, which names the key
    default:
      return { path, message: error.message ?? `fails ${error.keyword}` };
  }
}

/** Checks `data` against the schema; returns every problem (empty when valid). */
export function schemaIssues(data: unknown): RawIssue[] {
  const validate = validator();
  if (validate(data)) return [];
  const issues: RawIssue[] = [];
  const seen = new Set<string>();
  const errors = validate.errors ?? [];
  // A misspelt key is reported once, as unknown with a suggestion, not also as missing.
  const suggested = new Set<string>();
  for (const error of errors) {
    if (error.keyword !== "additionalProperties") continue;
    const known = Object.keys(((error.parentSchema as Record<string, unknown>)?.properties as object | undefined) ?? {});
    const hint = closest(String(error.params.additionalProperty), known);
    if (hint) suggested.add(`${error.instancePath}/${hint}`);
  }
  for (const error of errors) {
    // Errors inside oneOf/anyOf branches are summarised by the oneOf error itself.
    if (/\/(oneOf|anyOf)\/\d+\//.test(error.schemaPath)) continue;
    if (error.keyword === "required" && suggested.has(`${error.instancePath}/${error.params.missingProperty}`)) continue;
    const issue = translate(error, pointerToPath(error.instancePath, data));
    if (!issue) continue;
    const id = JSON.stringify([issue.path, issue.message]);
    if (!seen.has(id)) {
      seen.add(id);
      issues.push(issue);
    }
  }
  return issues;
}
