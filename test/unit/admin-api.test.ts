// The admin API's pure parts: the admin key check and its scopes, the 400 messages made from
// ajv's errors, the version a change names, and the OpenAPI document made from the routes.

import { test } from "node:test";
import assert from "node:assert/strict";
import { adminKeyOf, requireScope } from "../../src/admin/auth.js";
import { openApiDocument } from "../../src/admin/openapi.js";
import { expectedVersion } from "../../src/admin/request-parts.js";
import { adminRoutes } from "../../src/admin/routes.js";
import { checkOf } from "../../src/admin/validation.js";
import { sha256Hex } from "../../src/config/hash.js";
import { GatewayError } from "../../src/errors/gateway-error.js";
import type { AdminKey } from "../../src/runtime/types.js";

const keys: AdminKey[] = [
  { name: "ops", keyHash: sha256Hex("key-ops"), scopes: new Set(["read", "write", "billing"]) },
  { name: "viewer", keyHash: sha256Hex("key-viewer"), scopes: new Set(["read"]) },
];

function thrownBy(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError, String(err));
    return err;
  }
  assert.fail("did not throw");
}

test("an admin key is found by its hash; none or an unknown one is a 401 that repeats nothing", () => {
  assert.equal(adminKeyOf({ authorization: "Bearer key-viewer" }, keys).name, "viewer");
  assert.equal(adminKeyOf({ authorization: "bearer   key-ops " }, keys).name, "ops");
  assert.equal(thrownBy(() => adminKeyOf({}, keys)).code, "missing_admin_key");
  assert.equal(thrownBy(() => adminKeyOf({ authorization: "Basic a2V5LW9wcw==" }, keys)).code, "missing_admin_key");
  const wrong = thrownBy(() => adminKeyOf({ authorization: "Bearer key-opsx" }, keys));
  assert.equal(wrong.code, "invalid_admin_key");
  assert.equal(wrong.status, 401);
  assert.ok(!wrong.message.includes("key-opsx"));
  assert.equal(thrownBy(() => adminKeyOf({ authorization: "Bearer key-ops" }, [])).code, "invalid_admin_key");
});

test("a missing scope is a 403 naming it", () => {
  requireScope(keys[1], "read");
  const refused = thrownBy(() => requireScope(keys[1], "billing"));
  assert.equal(refused.status, 403);
  assert.match(refused.message, /'viewer' lacks the 'billing' scope/);
});

test("ajv's first error becomes one message naming the field", () => {
  const user = checkOf("UserCreate");
  const token = checkOf("TokenPatch");
  assert.equal(user({ name: "ok", groups: ["default"], credit: "1.5" }), undefined);
  assert.equal(user({})?.message, "name: is required");
  assert.equal(user({})?.code, "missing_required_parameter");
  assert.match(user({ name: "ok", extra: 1 })?.message ?? "", /^extra: is not known here \(known: name, groups, status, note, credit, plan, limits, budgets\)/);
  assert.equal(user({ name: "ok", groups: "default" })?.message, "groups: must be a list");
  assert.equal(user({ name: "ok", groups: ["a", 2] })?.message, "groups[1]: must be a string");
  assert.equal(user({ name: "ok", credit: false })?.message, "credit: must be a string or a number");
  assert.equal(user("text")?.message, "(body): must be a JSON object");
  assert.match(user({ name: "a b" })?.message ?? "", /^name: must be as described: Letters, digits/);
  assert.equal(token({ expires: null, quota: null, allow_ips: null }), undefined);
  assert.equal(token({ status: "revoked" })?.message, "status: must be one of: active, disabled");
  assert.equal(checkOf("CodesCreate")({ count: 0, amount: 1, expires: "1d" })?.message, "count: must be >= 1");
});

test("the version a change names: the body's or If-Match's, which must agree", () => {
  assert.equal(expectedVersion(undefined, {}), undefined);
  assert.equal(expectedVersion(3, {}), 3);
  assert.equal(expectedVersion(undefined, { "if-match": '"4"' }), 4);
  assert.equal(expectedVersion(undefined, { "if-match": 'W/"5"' }), 5);
  assert.equal(expectedVersion(undefined, { "if-match": "*" }), undefined);
  assert.equal(expectedVersion(6, { "if-match": '"6"' }), 6);
  assert.throws(() => expectedVersion(6, { "if-match": '"7"' }), /^Error: version: is 6 but If-Match says 7/);
  assert.throws(() => expectedVersion(undefined, { "if-match": "abc" }), /If-Match: must be a version/);
});

test("the OpenAPI document holds every route once, with its path parameters, scope and schemas", () => {
  const doc = openApiDocument(adminRoutes, "1.2.3") as any;
  assert.equal(doc.openapi, "3.1.0");
  assert.equal(doc.info.version, "1.2.3");
  const ids = new Set<string>();
  for (const route of adminRoutes) {
    const op = doc.paths[route.path][route.method.toLowerCase()];
    assert.ok(!ids.has(route.operationId), `operationId ${route.operationId} twice`);
    ids.add(route.operationId);
    const inPath = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    assert.deepEqual(op.parameters.filter((p: any) => p.in === "path").map((p: any) => p.name), inPath);
    for (const p of op.parameters) assert.ok(p.schema && (p.in !== "path" || p.required === true), `${route.path} ${p.name}`);
    assert.ok(Object.keys(op.responses).length > 0);
    if (route.scope) {
      assert.equal(op["x-scope"], route.scope);
      for (const status of ["401", "403"]) assert.ok(op.responses[status], `${route.operationId} lacks ${status}`);
    } else {
      assert.deepEqual(op.security, []);
    }
    if (route.body) assert.equal(op.requestBody.content["application/json"].schema.$ref, `#/components/schemas/${route.body}`);
  }
  assert.deepEqual(openApiDocument(adminRoutes, "1.2.3"), doc, "made the same each time");
});
