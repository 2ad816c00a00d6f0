// Checks request bodies and query strings against the API's schemas (compiled once) and turns
// ajv's first error into one sentence that names the field: "amount: must be a string or a number".

import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { ErrorObject, ValidateFunction } from "ajv";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import { schemas, type JsonSchema } from "./schemas.js";

/** The id the schemas are registered under; `#/components/schemas/X` resolves inside it. */
const ROOT = "admin-api";

/** A fresh ajv with every schema of the API registered (the tests compile the document with one too). */
export function adminAjv(): InstanceType<typeof Ajv2020Module.default> {
  const ajv = new Ajv2020Module.default({ allErrors: false, strict: true, strictRequired: false, allowUnionTypes: true, verbose: true });
  // ajv-formats is CommonJS: its function is the module, or its default under some loaders.
  const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: unknown) => void;
  addFormats(ajv);
  // The schemas sit where the OpenAPI document has them, so one `$ref` serves both.
  ajv.addKeyword({ keyword: "components" });
  ajv.addSchema({ $id: ROOT, components: { schemas } });
  return ajv;
}

const ajv = adminAjv();

/** A check of one value: undefined when it passes, else the 400 to answer. */
export type Check = (value: unknown) => GatewayError | undefined;

/** The check of a named schema (a request body). */
export function checkOf(schemaName: keyof typeof schemas): Check {
  return checkWith(ajv.getSchema(`${ROOT}#/components/schemas/${schemaName}`)!);
}

/** The check of a schema made at startup (a route's query string). */
export function checkSchema(schema: JsonSchema): Check {
  return checkWith(ajv.compile(schema));
}

function checkWith(validate: ValidateFunction): Check {
  return (value) => (validate(value) ? undefined : problemOf(validate.errors![0]));
}

const typeWords: Record<string, string> = {
  object: "a JSON object", array: "a list", string: "a string", number: "a number", integer: "a whole number",
  boolean: "true or false", null: "null",
};

/** `/allow_ips/0` → `allow_ips[0]`; the body itself → `(body)`. */
function fieldOf(pointer: string): string {
  let field = "";
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    field += /^\d+$/.test(key) ? `[${key}]` : field === "" ? key : `.${key}`;
  }
  return field;
}

function join(parent: string, child: string): string {
  return parent === "" ? child : `${parent}.${child}`;
}

/** One ajv error as a 400 that names the field. */
function problemOf(err: ErrorObject): GatewayError {
  const at = fieldOf(err.instancePath);
  const params = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case "required": {
      const field = join(at, String(params.missingProperty));
      return new GatewayError(errors.missingParameter, `${field}: is required`);
    }
    case "additionalProperties": {
      const known = Object.keys((err.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      const unknown = join(at, String(params.additionalProperty));
      return invalid(unknown, known.length === 0 ? "is not known here (this takes none)" : `is not known here (known: ${known.join(", ")})`);
    }
    case "type": {
      const types = Array.isArray(params.type) ? (params.type as string[]) : String(params.type).split(",");
      return invalid(at, `must be ${types.map((t) => typeWords[t] ?? t).join(" or ")}`);
    }
    case "enum":
      return invalid(at, `must be one of: ${(params.allowedValues as unknown[]).map(String).join(", ")}`);
    case "pattern": {
      const said = (err.parentSchema as { description?: string } | undefined)?.description;
      return invalid(at, said ? `must be as described: ${said}` : `must match ${String(params.pattern)}`);
    }
    default:
      return invalid(at, err.message ?? "is not valid");
  }
}

function invalid(field: string, message: string): GatewayError {
  return new GatewayError(errors.invalidParameter, `${field || "(body)"}: ${message}`);
}
