// A model's `request_schema` (schemas/requests/<name>.json) compiled into a check the
// pipeline runs on each request body before routing: a missing field is 400
// missing_required_parameter, any other mismatch 400 invalid_parameter, naming the field.

import { readFileSync } from "node:fs";
import Ajv2020Module from "ajv/dist/2020.js";
import type { ErrorObject } from "ajv";
import type { RequestCheck, RequestProblem } from "../runtime/types.js";

// verbose: errors carry their schema, whose `description` explains a rule in the 400.
const ajv = new Ajv2020Module.default({ allErrors: false, strict: false, allowUnionTypes: true, verbose: true });

function fieldOf(pointer: string): string {
  return pointer.split("/").slice(1).map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~")).join(".");
}

function problemOf(err: ErrorObject): RequestProblem {
  if (err.keyword === "required") {
    const parent = fieldOf(err.instancePath);
    const missing = String((err.params as { missingProperty?: string }).missingProperty);
    const field = parent ? `${parent}.${missing}` : missing;
    return { kind: "missing", field, message: `Missing required parameter '${field}'.` };
  }
  const field = fieldOf(err.instancePath) || "(body)";
  const custom = (err.parentSchema as { description?: string } | undefined)?.description;
  return { kind: "invalid", field, message: `Invalid parameter '${field}': ${err.message ?? "does not match"}${custom ? ` (${custom})` : ""}.` };
}

/** Compiles the schema file at `path`; throws with a readable message when it is not a
 * valid JSON Schema. */
export function compileRequestSchema(path: string): RequestCheck {
  const validate = ajv.compile(JSON.parse(readFileSync(path, "utf8")) as object);
  return (body) => (validate(body) ? undefined : problemOf(validate.errors![0]));
}
