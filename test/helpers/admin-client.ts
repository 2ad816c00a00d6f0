// An admin API client for integration tests: raw HTTP with an admin key, every successful
// JSON answer checked against the schema the served OpenAPI document gives for it, every
// error against the catalogue's shape, and no answer may echo a secret.

import assert from "node:assert/strict";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { rawRequest, type RawResponse } from "../integration/support.js";

export interface AdminCallOptions {
  /** The admin key; null: none. */
  readonly key?: string | null;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** The answer schemas of a served document, by method, path template and status. */
export class DocumentCheck {
  readonly #ajv = new Ajv2020Module.default({ strict: true, strictRequired: false, allowUnionTypes: true });
  readonly #ops: { method: string; pattern: RegExp; responses: Record<string, { content?: Record<string, { schema: { $ref: string } }> }> }[] = [];

  constructor(readonly doc: any) {
    ((addFormatsModule as any).default ?? addFormatsModule)(this.#ajv);
    this.#ajv.addKeyword({ keyword: "components" });
    this.#ajv.addSchema({ $id: "doc", components: { schemas: doc.components.schemas } });
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      const pattern = new RegExp(`^${path.replace(/\./g, "\\.").replace(/\{\w+\}/g, "[^/]+")}$`);
      for (const [method, op] of Object.entries<any>(item)) this.#ops.push({ method: method.toUpperCase(), pattern, responses: op.responses });
    }
  }

  /** Throws when a JSON answer's body does not match the schema the document gives for it. */
  check(method: string, path: string, r: RawResponse): void {
    const op = this.#ops.find((o) => o.method === method && o.pattern.test(path.split("?")[0]));
    assert.ok(op, `${method} ${path} is not in the document`);
    const content = op.responses[String(r.status)]?.content;
    assert.ok(content, `${method} ${path}: the document has no ${r.status} answer`);
    const type = String(r.headers["content-type"] ?? "").split(";")[0];
    assert.ok(content[type], `${method} ${path}: the document has no ${type} answer`);
    if (type !== "application/json") return;
    const ref = content[type].schema.$ref;
    const valid = this.#ajv.validate({ $ref: `doc${ref}` }, r.json);
    assert.ok(valid, `${method} ${path} ${r.status} does not match ${ref}: ${this.#ajv.errorsText()} in ${r.text}`);
  }
}

/** A client of one gateway's admin API with `defaultKey`, refusing answers that hold any of `secrets`. */
export async function adminClient(base: string, defaultKey: string, secrets: readonly string[]) {
  const call = async (method: string, path: string, opts: AdminCallOptions = {}, doc?: DocumentCheck): Promise<RawResponse> => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? defaultKey : opts.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (body !== undefined) headers["content-type"] = "application/json";
    const r = await rawRequest(`${base}${path}`, { method, headers, body });
    assert.ok(r.headers["x-gateway-request-id"], `${method} ${path}: no request id`);
    for (const secret of secrets) assert.ok(!r.text.includes(secret), `${method} ${path} echoed a secret`);
    if (r.status < 300 && doc) doc.check(method, path, r);
    if (r.status >= 400) assert.equal(typeof r.json?.error?.code, "string", r.text);
    return r;
  };
  const served = await call("GET", "/admin/v1/openapi.json", { key: null });
  assert.equal(served.status, 200, served.text);
  const doc = new DocumentCheck(served.json);
  return (method: string, path: string, opts: AdminCallOptions = {}) => call(method, path, opts, doc);
}

export function assertError(r: RawResponse, status: number, code: string, message?: RegExp): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json.error.code, code, r.text);
  if (message) assert.match(r.json.error.message, message);
}
