// The admin API end to end: the real gateway on 127.0.0.1:0 with admin keys of each scope,
// a fake OpenAI upstream, raw HTTP. Every successful answer is checked against the schema the
// served OpenAPI document gives for it, so the document cannot drift from what is answered.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { stringify } from "yaml";
import { adminRoutes } from "../../src/admin/routes.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { DocumentCheck } from "../helpers/admin-client.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { CHANNEL_KEY, channel, config, hello, rawRequest, type RawResponse } from "./support.js";

const KEYS = {
  ops: "adm-ops-key-0123456789abcdef",
  viewer: "adm-viewer-key-0123456789abc",
  writer: "adm-writer-key-0123456789abc",
  cashier: "adm-cashier-key-0123456789ab",
};
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function adminYaml(fakeUrl: string, admin: Record<string, unknown> = {}): string {
  // A short body_timeout: a refused body's unread rest is dropped within it (and no timer
  // outlives the suite by the default minute).
  return config({ channels: [channel("main", fakeUrl)], server: { body_timeout: "2s" } }) + stringify({
    admin: {
      ...admin,
      keys: [
        { name: "ops", key: KEYS.ops, scopes: ["read", "write", "billing"] },
        { name: "viewer", key_sha256: sha256(KEYS.viewer), scopes: ["read"] },
        { name: "writer", key: KEYS.writer, scopes: ["read", "write"] },
        { name: "cashier", key: KEYS.cashier, scopes: ["read", "billing"] },
      ],
    },
  });
}

interface Call {
  readonly key?: string | null;
  readonly body?: unknown;
  readonly raw?: string;
  readonly headers?: Record<string, string>;
}

let doc: DocumentCheck | undefined;

async function call(base: string, method: string, path: string, opts: Call = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  const key = opts.key === undefined ? KEYS.ops : opts.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | undefined = opts.raw;
  if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers["content-type"] = "application/json";
  const r = await rawRequest(`${base}${path}`, { method, headers, body });
  assert.ok(r.headers["x-gateway-request-id"], `${method} ${path}: no request id`);
  for (const secret of Object.values(KEYS)) assert.ok(!r.text.includes(secret), `${method} ${path} echoed an admin key`);
  if (r.status < 300 && doc) doc.check(method, path, r);
  if (r.status >= 400) {
    assert.equal(typeof r.json?.error?.message, "string", r.text);
    assert.equal(typeof r.json?.error?.type, "string", r.text);
    assert.equal(typeof r.json?.error?.code, "string", r.text);
  }
  return r;
}

function assertError(r: RawResponse, status: number, code: string, message?: RegExp): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json.error.code, code, r.text);
  if (message) assert.match(r.json.error.message, message);
}

function chatWith(base: string, key: string): Promise<RawResponse> {
  return rawRequest(`${base}/v1/chat/completions`, {
    method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(hello),
  });
}

describe("admin API on the main listener", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let api: (method: string, path: string, opts?: Call) => Promise<RawResponse>;

  before(async () => {
    fake = await startFakeOpenAI({ keys: [CHANNEL_KEY], name: "main" });
    gw = await startTestGateway(adminYaml(fake.url));
    api = (method, path, opts) => call(gw.url, method, path, opts);
    const served = await api("GET", "/admin/v1/openapi.json", { key: null });
    assert.equal(served.status, 200, served.text);
    doc = new DocumentCheck(served.json);
  });
  after(async () => {
    doc = undefined;
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  test("the OpenAPI document is served without a key, names every route and its schemas compile", async () => {
    const r = await api("GET", "/admin/v1/openapi.json", { key: null });
    assert.equal(r.json.openapi, "3.1.0");
    for (const route of adminRoutes) {
      const op = r.json.paths[route.path]?.[route.method.toLowerCase()];
      assert.ok(op, `${route.method} ${route.path} missing from the document`);
      assert.equal(op.operationId, route.operationId);
      if (route.scope) assert.deepEqual(op.security, [{ adminKey: [] }]);
    }
    const ajv = new Ajv2020Module.default({ strict: true, strictRequired: false, allowUnionTypes: true });
    ((addFormatsModule as any).default ?? addFormatsModule)(ajv);
    ajv.addKeyword({ keyword: "components" });
    ajv.addSchema({ $id: "doc", components: r.json.components });
    for (const name of Object.keys(r.json.components.schemas)) assert.ok(ajv.compile({ $ref: `doc#/components/schemas/${name}` }), name);
    // Every $ref in the document resolves.
    const refs = JSON.stringify(r.json).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const ref of refs) {
      const name = /#\/components\/schemas\/(\w+)/.exec(ref)?.[1];
      assert.ok(name && r.json.components.schemas[name], `dangling ${ref}`);
    }
  });

  test("keys and scopes: 401 without or with a wrong key, 403 naming the missing scope", async () => {
    const none = await api("GET", "/admin/v1/users", { key: null });
    assertError(none, 401, "missing_admin_key");
    assert.match(String(none.headers["www-authenticate"]), /Bearer/);
    assertError(await api("GET", "/admin/v1/users", { key: "adm-not-a-key-0000000000000" }), 401, "invalid_admin_key");
    assertError(await api("GET", "/admin/v1/users", { key: KEYS.ops + "x" }), 401, "invalid_admin_key");
    assert.equal((await api("GET", "/admin/v1/users", { key: KEYS.viewer })).status, 200);
    assertError(await api("POST", "/admin/v1/users", { key: KEYS.viewer, body: { name: "nobody" } }), 403, "admin_scope_missing", /'write'/);
    assertError(await api("POST", "/admin/v1/users", { key: KEYS.cashier, body: { name: "nobody" } }), 403, "admin_scope_missing", /'write'/);
    assertError(await api("POST", "/admin/v1/users/alice/credit", { key: KEYS.writer, body: { amount: 1, reason: "x" } }), 403, "admin_scope_missing", /'billing'/);
    assertError(await api("POST", "/admin/v1/codes", { key: KEYS.writer, body: { count: 1, amount: 1, expires: "1d" } }), 403, "admin_scope_missing", /'billing'/);
    assertError(await api("POST", "/admin/v1/tokens", { key: KEYS.cashier, body: { name: "x", user: "alice" } }), 403, "admin_scope_missing", /'write'/);
    // A refused key changes nothing.
    assertError(await api("GET", "/admin/v1/users/nobody"), 404, "not_found");
  });

  test("unknown paths 404, wrong methods 405 with Allow, bad bodies and fields 400 naming the field", async () => {
    assertError(await api("GET", "/admin/v1/nothing"), 404, "not_found");
    assertError(await api("GET", "/admin/v2/users"), 404, "not_found");
    const wrong = await api("DELETE", "/admin/v1/users");
    assertError(wrong, 405, "method_not_allowed");
    assert.equal(wrong.headers.allow, "GET, POST");
    assert.equal((await api("PUT", "/admin/v1/tokens/x")).headers.allow, "GET, PATCH, DELETE");
    assertError(await api("POST", "/admin/v1/users", { raw: "{not json" }), 400, "invalid_json");
    assertError(await api("POST", "/admin/v1/users", { raw: "" }), 400, "invalid_json");
    assertError(await api("POST", "/admin/v1/users", { body: [1] }), 400, "invalid_parameter", /^\(body\): must be a JSON object/);
    assertError(await api("POST", "/admin/v1/users", { body: { groups: ["default"] } }), 400, "missing_required_parameter", /^name: is required/);
    assertError(await api("POST", "/admin/v1/users", { body: { name: "u-x", colour: "red" } }), 400, "invalid_parameter", /^colour: is not known here/);
    assertError(await api("POST", "/admin/v1/users", { body: { name: "u-x", status: "gone" } }), 400, "invalid_parameter", /^status: must be one of: active, disabled/);
    assertError(await api("POST", "/admin/v1/users", { body: { name: "u-x", groups: ["nope"] } }), 400, "invalid_parameter", /^groups: no group 'nope'/);
    assertError(await api("POST", "/admin/v1/users", { body: { name: "u-x", groups: [7] } }), 400, "invalid_parameter", /^groups\[0\]: must be a string/);
    assertError(await api("POST", "/admin/v1/users", { body: { name: "bad name" } }), 400, "invalid_parameter", /^name: /);
    assertError(await api("POST", "/admin/v1/users/alice/credit", { body: { amount: "ten", reason: "x" } }), 400, "invalid_parameter", /^amount: "ten" is not an amount/);
    assertError(await api("POST", "/admin/v1/users/alice/credit", { body: { amount: true, reason: "x" } }), 400, "invalid_parameter", /^amount: must be a string or a number/);
    assertError(await api("POST", "/admin/v1/users/alice/credit", { body: { amount: 0, reason: "x" } }), 400, "invalid_parameter", /^amount: must not be zero/);
    assertError(await api("GET", "/admin/v1/users?limit=0"), 400, "invalid_parameter", /^limit: must be >= 1/);
    assertError(await api("GET", "/admin/v1/users?limit=many"), 400, "invalid_parameter", /^limit: must be a whole number/);
    assertError(await api("GET", "/admin/v1/users?colour=red"), 400, "invalid_parameter", /^colour: is not known here/);
    const big = await api("POST", "/admin/v1/users", { raw: JSON.stringify({ name: "big", note: "x".repeat(1024 * 1024 + 10) }) });
    assertError(big, 413, "body_too_large");
  });

  test("users: create with an opening grant, read, list in pages, change by version; a race is refused", async () => {
    const created = await api("POST", "/admin/v1/users", { body: { name: "u-dana", groups: ["default"], note: "dana@example.com", credit: "25.5" } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.balance, "25.5");
    assert.equal(created.json.version, 1);
    assert.equal(created.headers.etag, '"1"');
    assertError(await api("POST", "/admin/v1/users", { body: { name: "u-dana" } }), 409, "name_taken");
    assertError(await api("POST", "/admin/v1/users", { body: { name: "alice" } }), 409, "name_taken", /gateway\.yaml/);
    for (const n of ["u-eve", "u-fay", "u-gus"]) assert.equal((await api("POST", "/admin/v1/users", { body: { name: n, groups: ["default"] } })).status, 201);

    const yamlUser = await api("GET", "/admin/v1/users/alice");
    assert.equal(yamlUser.json.source, "gateway.yaml");
    assert.equal(yamlUser.json.credit, "100");
    assertError(await api("GET", "/admin/v1/users/u-nobody"), 404, "not_found", /No user 'u-nobody'/);

    const seen: string[] = [];
    let next: string | undefined;
    do {
      const page = await api("GET", `/admin/v1/users?prefix=u-&limit=3${next ? `&after=${encodeURIComponent(next)}` : ""}`);
      assert.equal(page.status, 200, page.text);
      seen.push(...page.json.data.map((u: { name: string }) => u.name));
      next = page.json.next;
    } while (next !== undefined);
    assert.deepEqual(seen, ["u-dana", "u-eve", "u-fay", "u-gus"]);
    const all = await api("GET", "/admin/v1/users?limit=1000");
    assert.ok(!("next" in all.json), "no next on the last page");
    assert.ok(all.json.data.some((u: { name: string }) => u.name === "alice"));

    // Two changes based on the same version: one lands, the other is refused whole.
    const [a, b] = await Promise.all([
      api("PATCH", "/admin/v1/users/u-dana", { body: { note: "first", version: 1 } }),
      api("PATCH", "/admin/v1/users/u-dana", { body: { note: "second", version: 1 } }),
    ]);
    assert.deepEqual([a.status, b.status].sort(), [200, 409], `${a.text} ${b.text}`);
    const loser = a.status === 409 ? a : b;
    assertError(loser, 409, "version_conflict");
    const now = await api("GET", "/admin/v1/users/u-dana");
    assert.equal(now.json.version, 2);
    assert.equal(now.json.note, (a.status === 200 ? a : b).json.note);
    assertError(await api("PATCH", "/admin/v1/users/u-dana", { body: { note: "stale" }, headers: { "if-match": '"1"' } }), 409, "version_conflict");
    const byHeader = await api("PATCH", "/admin/v1/users/u-dana", { body: { note: null, groups: ["default", "video"] }, headers: { "if-match": '"2"' } });
    assert.equal(byHeader.status, 200, byHeader.text);
    assert.equal(byHeader.json.note, undefined);
    assert.deepEqual(byHeader.json.groups, ["default", "video"]);
    assertError(await api("PATCH", "/admin/v1/users/u-dana", { body: { version: 3 } }), 400, "invalid_parameter", /^\(body\): name something to change/);
    assertError(await api("PATCH", "/admin/v1/users/u-dana", { body: { note: "x", version: 3 }, headers: { "if-match": '"2"' } }), 400, "invalid_parameter", /^version: /);
    assertError(await api("PATCH", "/admin/v1/users/alice", { body: { status: "disabled" } }), 400, "invalid_parameter", /gateway\.yaml/);
    assertError(await api("PATCH", "/admin/v1/users/u-nobody", { body: { status: "disabled" } }), 404, "not_found");
  });

  test("credit: a top-up raises the balance; the same idempotency key credits once; entries newest first", async () => {
    await api("POST", "/admin/v1/users", { body: { name: "c-hana", groups: ["default"] } });
    const first = await api("POST", "/admin/v1/users/c-hana/credit", { body: { amount: "10.000000001", reason: "payment 1", idempotency_key: "pay-1" } });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.json.created, true);
    assert.equal(first.json.entry.actor, "ops");
    assert.equal(first.json.user.balance, "10.000000001");
    const replay = await api("POST", "/admin/v1/users/c-hana/credit", { key: KEYS.cashier, body: { amount: "10.000000001", reason: "payment 1 again", idempotency_key: "pay-1" } });
    assert.equal(replay.status, 200, replay.text);
    assert.equal(replay.json.created, false);
    assert.equal(replay.json.entry.id, first.json.entry.id);
    assert.equal(replay.json.user.balance, "10.000000001");
    assertError(await api("POST", "/admin/v1/users/c-hana/credit", { body: { amount: 11, reason: "other", idempotency_key: "pay-1" } }), 409, "idempotency_mismatch");
    // The key may come as the Idempotency-Key header.
    const viaHeader = await api("POST", "/admin/v1/users/c-hana/credit", { key: KEYS.cashier, body: { amount: 5, reason: "payment 2" }, headers: { "idempotency-key": "pay-2" } });
    assert.equal(viaHeader.status, 201);
    assert.equal(viaHeader.json.entry.idempotency_key, "pay-2");
    assert.equal(viaHeader.json.entry.actor, "cashier");
    assert.equal((await api("POST", "/admin/v1/users/c-hana/credit", { body: { amount: 5, reason: "payment 2" }, headers: { "idempotency-key": "pay-2" } })).status, 200);
    const down = await api("POST", "/admin/v1/users/c-hana/credit", { body: { amount: "-0.5", reason: "goodwill reversed" } });
    assert.equal(down.json.entry.kind, "adjustment");
    assert.equal((await api("GET", "/admin/v1/users/c-hana")).json.balance, "14.500000001");
    const yamlTopUp = await api("POST", "/admin/v1/users/alice/credit", { body: { amount: 1, reason: "top-up" } });
    assert.equal(yamlTopUp.json.user.credit, "101");
    assertError(await api("POST", "/admin/v1/users/c-nobody/credit", { body: { amount: 1, reason: "x" } }), 404, "not_found");
    assertError(await api("POST", "/admin/v1/users/c-hana/credit", { body: { amount: 1, reason: " " } }), 400, "invalid_parameter", /^reason: /);

    const entries = await api("GET", "/admin/v1/users/c-hana/credit?limit=2");
    assert.deepEqual(entries.json.data.map((e: { amount: string }) => e.amount), ["-0.5", "5"]);
    const rest = await api("GET", `/admin/v1/users/c-hana/credit?limit=2&before=${entries.json.next}`);
    assert.deepEqual(rest.json.data.map((e: { amount: string }) => e.amount), ["10.000000001"]);
    assert.ok(!("next" in rest.json));
  });

  test("tokens: a created key serves a real request, a disabled user's is refused, and a revoked one is refused (401)", async () => {
    await api("POST", "/admin/v1/users", { body: { name: "t-ivan", groups: ["default"], credit: 10 } });
    const created = await api("POST", "/admin/v1/tokens", { body: { name: "t-ivan-ci", user: "t-ivan", expires: "30d", quota: "2.5", models: ["gpt-4o-*"] } });
    assert.equal(created.status, 201, created.text);
    const key: string = created.json.key;
    assert.match(key, /^sk-gw-/);
    assert.equal(created.json.group, "default");
    assert.equal(created.json.quota, "2.5");
    assert.equal(created.headers["cache-control"], "no-store");

    const ok = await chatWith(gw.url, key);
    assert.equal(ok.status, 200, ok.text);

    const read = await api("GET", "/admin/v1/tokens/t-ivan-ci");
    assert.ok(!read.text.includes(key) && !read.text.includes(sha256(key)), "a read never shows the key or its hash");
    assert.ok(read.json.key_hint.startsWith(key.slice(0, 10)));
    const listed = await api("GET", "/admin/v1/tokens?user=t-ivan");
    assert.deepEqual(listed.json.data.map((t: { name: string }) => t.name), ["t-ivan-ci"]);
    assert.equal((await api("GET", "/admin/v1/tokens?user=nobody")).json.data.length, 0);
    assert.equal((await api("GET", "/admin/v1/tokens/alice-main")).json.source, "gateway.yaml");

    assertError(await api("POST", "/admin/v1/tokens", { body: { name: "t-ivan-ci", user: "t-ivan" } }), 409, "name_taken");
    assertError(await api("POST", "/admin/v1/tokens", { body: { name: "t-x", user: "alice" } }), 400, "invalid_parameter", /^user: /);
    assertError(await api("POST", "/admin/v1/tokens", { body: { name: "t-x", user: "t-nobody" } }), 400, "invalid_parameter", /^user: no user/);
    assertError(await api("POST", "/admin/v1/tokens", { body: { name: "t-x", user: "t-ivan", allow_ips: ["not-an-ip"] } }), 400, "invalid_parameter", /^allow_ips: /);
    assertError(await api("POST", "/admin/v1/tokens", { body: { name: "t-x", user: "t-ivan", expires: "someday" } }), 400, "invalid_parameter", /^expires: /);
    assertError(await api("POST", "/admin/v1/tokens", { body: { name: "t-x", user: "t-ivan", key: "sk-mine" } }), 400, "invalid_parameter", /^key: is not known here/);

    // A disabled token, then a disabled user: refused; enabled again: served.
    const v = read.json.version as number;
    const disabled = await api("PATCH", "/admin/v1/tokens/t-ivan-ci", { body: { status: "disabled", version: v } });
    assert.equal(disabled.status, 200, disabled.text);
    assertError(await api("PATCH", "/admin/v1/tokens/t-ivan-ci", { body: { status: "active", version: v } }), 409, "version_conflict");
    assertError(await chatWith(gw.url, key), 401, "token_disabled");
    assert.equal((await api("PATCH", "/admin/v1/tokens/t-ivan-ci", { body: { status: "active", quota: null } })).json.quota, undefined);
    assert.equal((await api("PATCH", "/admin/v1/users/t-ivan", { body: { status: "disabled" } })).status, 200);
    assertError(await chatWith(gw.url, key), 401, "user_disabled");
    assert.equal((await api("PATCH", "/admin/v1/users/t-ivan", { body: { status: "active" } })).status, 200);
    assert.equal((await chatWith(gw.url, key)).status, 200);

    const revoked = await api("DELETE", "/admin/v1/tokens/t-ivan-ci", { key: KEYS.writer });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal(revoked.json.status, "revoked");
    assertError(await chatWith(gw.url, key), 401, "invalid_token");
    assert.equal((await api("DELETE", "/admin/v1/tokens/t-ivan-ci")).json.status, "revoked");
    assertError(await api("PATCH", "/admin/v1/tokens/t-ivan-ci", { body: { status: "active" } }), 404, "not_found");
    assertError(await api("DELETE", "/admin/v1/tokens/t-nobody"), 404, "not_found");
    assertError(await api("DELETE", "/admin/v1/tokens/alice-main"), 400, "invalid_parameter", /gateway\.yaml/);
  });

  test("codes: a batch is created once with its codes, and read back", async () => {
    const made = await api("POST", "/admin/v1/codes", { key: KEYS.cashier, body: { count: 3, amount: "2.5", expires: "7d", batch: "promo-1" } });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.json.codes.length, 3);
    assert.equal(new Set(made.json.codes).size, 3);
    assert.equal(made.json.amount, "2.5");
    const read = await api("GET", "/admin/v1/codes/promo-1", { key: KEYS.viewer });
    assert.equal(read.json.count, 3);
    assert.equal(read.json.redeemed, 0);
    assert.ok(!read.text.includes(made.json.codes[0]));
    assertError(await api("POST", "/admin/v1/codes", { body: { count: 1, amount: 1, expires: "7d", batch: "promo-1" } }), 409, "name_taken");
    assertError(await api("POST", "/admin/v1/codes", { body: { count: 0, amount: 1, expires: "7d" } }), 400, "invalid_parameter", /^count: must be >= 1/);
    assertError(await api("POST", "/admin/v1/codes", { body: { count: 1, amount: -1, expires: "7d" } }), 400, "invalid_parameter", /^amount: /);
    assertError(await api("POST", "/admin/v1/codes", { body: { count: 1, amount: 1, expires: "2000-01-01" } }), 400, "invalid_parameter", /^expires: must be in the future/);
    assertError(await api("POST", "/admin/v1/codes", { body: { count: 1, amount: 1 } }), 400, "missing_required_parameter", /^expires: is required/);
    assertError(await api("GET", "/admin/v1/codes/none-such"), 404, "not_found");
    const auto = await api("POST", "/admin/v1/codes", { body: { count: 1, amount: 1, expires: "2999-01-01T00:00:00Z" } });
    assert.match(auto.json.batch, /^batch-/);
  });

  test("usage: the reports of gateway usage, money exact; bad parameters named; admin requests are not logged", async () => {
    await api("POST", "/admin/v1/users", { body: { name: "r-jo", groups: ["default"], credit: 5 } });
    const { json: { key } } = await api("POST", "/admin/v1/tokens", { body: { name: "r-jo-1", user: "r-jo" } });
    const served = await chatWith(gw.url, key);
    assert.equal(served.status, 200, served.text);
    const byToken = await api("GET", "/admin/v1/usage?by=token", { key: KEYS.viewer });
    const row = byToken.json.data.find((r: { key: string }) => r.key === "r-jo-1");
    assert.ok(row, byToken.text);
    assert.equal(row.requests, 1);
    assert.match(row.cost, /^\d+(\.\d+)?$/);
    assert.equal(byToken.json.by, "token");
    const byUser = await api("GET", "/admin/v1/usage?by=user&since=1h");
    assert.equal(byUser.json.data.find((r: { key: string }) => r.key === "r-jo").cost, row.cost);
    assert.equal((await api("GET", "/admin/v1/usage?by=user&until=2000-01-01")).json.data.length, 0);
    assert.equal((await api("GET", "/admin/v1/usage?by=day&timezone=Europe/Berlin")).status, 200);
    assert.equal((await api("GET", "/admin/v1/usage?by=channel")).json.data[0].key, "main");
    // One subject's report: only its requests.
    const ofJo = await api("GET", "/admin/v1/usage?by=token&user=r-jo");
    assert.deepEqual(ofJo.json.data.map((r: { key: string; cost: string }) => [r.key, r.cost]), [["r-jo-1", row.cost]]);
    assert.deepEqual((await api("GET", "/admin/v1/usage?by=user&token=r-jo-1")).json.data.map((r: { key: string }) => r.key), ["r-jo"]);
    assert.equal((await api("GET", "/admin/v1/usage?by=model&user=nobody")).json.data.length, 0);
    assertError(await api("GET", "/admin/v1/usage?by=user&user=r-jo&token=r-jo-1"), 400, "invalid_parameter", /^token: give user or token/);
    // The user's balance shows what was spent.
    const user = await api("GET", "/admin/v1/users/r-jo");
    assert.equal(user.json.spent, row.cost);
    assertError(await api("GET", "/admin/v1/usage"), 400, "missing_required_parameter", /^by: is required/);
    assertError(await api("GET", "/admin/v1/usage?by=colour"), 400, "invalid_parameter", /^by: must be one of: channel/);
    assertError(await api("GET", "/admin/v1/usage?by=user&since=yesterday"), 400, "invalid_parameter", /^since: /);
    assertError(await api("GET", "/admin/v1/usage?by=user&timezone=UTC"), 400, "invalid_parameter", /^timezone: counts days/);
    assertError(await api("GET", "/admin/v1/usage?by=day&timezone=Mars/Olympus"), 400, "invalid_parameter", /^timezone: /);
    // Only chat requests reached the usage log: no admin request is in it.
    assert.ok(gw.store.logs({}).every((e) => e.token !== undefined && e.token !== ""), "an entry without a token");
    assert.equal(gw.store.logs({ token: "r-jo-1" }).length, 1);
  });

  test("channels: each key's state; an operator takes a key out with a reason and puts it back, audited", async () => {
    const list = await api("GET", "/admin/v1/channels", { key: KEYS.viewer });
    assert.equal(list.status, 200, list.text);
    const [main] = list.json.data;
    assert.equal(main.channel, "main");
    const [key] = main.keys;
    assert.deepEqual(key, { fingerprint: key.fingerprint, state: "in_rotation" });
    assert.match(key.fingerprint, /^[0-9a-f]{8}$/);
    const path = `/admin/v1/channels/main/keys/${key.fingerprint}`;
    assertError(await api("POST", `${path}/out`, { key: KEYS.viewer, body: { reason: "x" } }), 403, "admin_scope_missing");
    assertError(await api("POST", `${path}/out`, { body: {} }), 400, "missing_required_parameter", /^reason: is required/);
    assertError(await api("POST", "/admin/v1/channels/nope/keys/abcd1234/out", { body: { reason: "x" } }), 404, "not_found");
    assertError(await api("POST", "/admin/v1/channels/main/keys/00000000/out", { body: { reason: "x" } }), 404, "not_found");
    const out = await api("POST", `${path}/out`, { body: { reason: "provider incident 42" } });
    assert.equal(out.status, 200, out.text);
    assert.equal(out.json.state, "taken_out");
    assert.deepEqual([out.json.taken_out.reason, out.json.taken_out.actor], ["provider incident 42", "ops"]);
    assert.equal((await api("POST", "/admin/v1/users", { body: { name: "ch-user", groups: ["default"], credit: 1 } })).status, 201);
    const refused = await chatWith(gw.url, (await api("POST", "/admin/v1/tokens", { body: { name: "ch-tok", user: "ch-user" } })).json.key);
    assert.equal(refused.status, 503, "its only key is out: the channel is passed over");
    const back = await api("POST", `${path}/in`);
    assert.equal(back.json.state, "in_rotation");
    const audit = await api("GET", `/admin/v1/audit?target=${encodeURIComponent(`main/${key.fingerprint}`)}`);
    assert.deepEqual(audit.json.data.map((r: { action: string }) => r.action), ["key.put_back", "key.take_out"]);
    assert.equal(audit.json.data[1].after.taken_out.reason, "provider incident 42");
    assert.ok(!audit.text.includes(CHANNEL_KEY));
  });

  test("audit: every change is recorded with its actor, before and after, newest first, never a key", async () => {
    await api("POST", "/admin/v1/users", { body: { name: "a-kim", groups: ["default"] } });
    await api("PATCH", "/admin/v1/users/a-kim", { key: KEYS.writer, body: { note: "vip" } });
    await api("POST", "/admin/v1/users/a-kim/credit", { key: KEYS.cashier, body: { amount: 3, reason: "welcome" } });
    const { json: { key } } = await api("POST", "/admin/v1/tokens", { body: { name: "a-kim-1", user: "a-kim" } });
    await api("PATCH", "/admin/v1/tokens/a-kim-1", { body: { allow_ips: ["127.0.0.1"] } });
    await api("DELETE", "/admin/v1/tokens/a-kim-1");
    await api("POST", "/admin/v1/codes", { body: { count: 1, amount: 1, expires: "1d", batch: "a-batch" } });

    const kim = await api("GET", "/admin/v1/audit?target=a-kim", { key: KEYS.viewer });
    assert.deepEqual(kim.json.data.map((r: { action: string; actor: string }) => `${r.action} by ${r.actor}`), ["credit.add by cashier", "user.update by writer", "user.create by ops"]);
    const update = kim.json.data[1];
    assert.equal(update.before.note, undefined);
    assert.equal(update.after.note, "vip");
    const token = await api("GET", "/admin/v1/audit?target=a-kim-1");
    assert.deepEqual(token.json.data.map((r: { action: string }) => r.action), ["token.revoke", "token.update", "token.create"]);
    assert.ok(!token.text.includes(key) && !token.text.includes(sha256(key)), "the audit log never holds a key or its hash");
    assert.deepEqual((await api("GET", "/admin/v1/audit?target=a-batch")).json.data.map((r: { action: string }) => r.action), ["codes.create"]);
    assert.ok((await api("GET", "/admin/v1/audit?actor=cashier")).json.data.every((r: { actor: string }) => r.actor === "cashier"));

    const page1 = await api("GET", "/admin/v1/audit?limit=2");
    assert.equal(page1.json.data.length, 2);
    assert.ok(page1.json.data[0].id > page1.json.data[1].id, "newest first");
    const page2 = await api("GET", `/admin/v1/audit?limit=2&before=${page1.json.next}`);
    assert.ok(page2.json.data[0].id < page1.json.data[1].id);
  });
});

describe("admin API placement", () => {
  let fake: FakeOpenAI;
  before(async () => {
    fake = await startFakeOpenAI({ keys: [CHANNEL_KEY], name: "main" });
  });
  after(async () => {
    await fake?.close();
    destroyAgents();
  });

  test("plans, limits and budgets: set at creation, changed one by one by PATCH (null removes), in force on the next request", async () => {
    const withPlans = stringify({ plans: { pro: { limits: { request_rate: { max: 1, per: "1m" } } } } }) + adminYaml(fake.url);
    const gw2 = await startTestGateway(withPlans);
    const api2 = (method: string, path: string, opts?: Call) => call(gw2.url, method, path, opts);
    try {
      const created = await api2("POST", "/admin/v1/users", { body: { name: "s-ann", groups: ["default"], credit: 5, plan: "pro" } });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.json.plan, "pro");
      const { json: { key } } = await api2("POST", "/admin/v1/tokens", { body: { name: "s-ann-1", user: "s-ann", budgets: [{ tokens: 1000000, per: "day" }] } });
      assert.equal((await chatWith(gw2.url, key)).status, 200);
      assert.equal((await chatWith(gw2.url, key)).status, 429, "the plan's request_rate of 1");
      // The user's own limits replace the plan's one by one; the plan stays.
      const raised = await api2("PATCH", "/admin/v1/users/s-ann", { body: { limits: { request_rate: { max: 10, per: "1m" } } } });
      assert.equal(raised.status, 200, raised.text);
      assert.deepEqual([raised.json.plan, raised.json.limits], ["pro", { request_rate: { max: 10, per: "1m" } }]);
      assert.equal((await chatWith(gw2.url, key)).status, 200);
      const token = await api2("PATCH", "/admin/v1/tokens/s-ann-1", { body: { budgets: [{ tokens: 5, per: "day" }] } });
      assert.deepEqual(token.json.budgets, [{ tokens: 5, per: "day" }]);
      assertError(await chatWith(gw2.url, key), 429, "budget_exceeded");
      const cleared = await api2("PATCH", "/admin/v1/tokens/s-ann-1", { body: { budgets: null } });
      assert.ok(!("budgets" in cleared.json), cleared.text);
      assert.equal((await chatWith(gw2.url, key)).status, 200);
      const noPlan = await api2("PATCH", "/admin/v1/users/s-ann", { body: { plan: null } });
      assert.ok(!("plan" in noPlan.json) && noPlan.json.limits, noPlan.text);
      assertError(await api2("PATCH", "/admin/v1/users/s-ann", { body: { plan: "gold" } }), 400, "invalid_parameter", /^plan: no plan 'gold'/);
      assertError(await api2("PATCH", "/admin/v1/users/s-ann", { body: { budgets: [{ tokens: 5 }] } }), 400, "missing_required_parameter", /per/);
      assertError(await api2("PATCH", "/admin/v1/users/s-ann", { body: { budgets: [{ tokens: 5, per: "fortnight" }] } }), 400, "invalid_parameter", /^budgets\.0\.per: /);
      assertError(await api2("POST", "/admin/v1/tokens", { body: { name: "s-ann-2", user: "s-ann", limits: { concurrent: 0 } } }), 400, "invalid_parameter", /concurrent/);
    } finally {
      await gw2.close();
    }
  });

  test("admin.listen serves the API on its own port; the main one answers 404 there", async () => {
    const gw = await startTestGateway(adminYaml(fake.url, { listen: "127.0.0.1:0" }));
    try {
      assert.ok(gw.adminUrl && gw.adminUrl !== gw.url, "admin.listen is served apart");
      const there = await call(gw.adminUrl, "GET", "/admin/v1/users");
      assert.equal(there.status, 200, there.text);
      assert.equal((await call(gw.adminUrl, "GET", "/admin/v1/openapi.json", { key: null })).status, 200);
      assertError(await call(gw.url, "GET", "/admin/v1/users"), 404, "not_found");
      assertError(await call(gw.url, "GET", "/admin/v1/openapi.json", { key: null }), 404, "not_found");
      assertError(await call(gw.adminUrl, "GET", "/v1/models"), 404, "not_found");
      const created = await call(gw.adminUrl, "POST", "/admin/v1/users", { body: { name: "p-lee", groups: ["default"], credit: 1 } });
      assert.equal(created.status, 201, created.text);
      const { json: { key } } = await call(gw.adminUrl, "POST", "/admin/v1/tokens", { body: { name: "p-lee-1", user: "p-lee" } });
      assert.equal((await chatWith(gw.url, key)).status, 200);
    } finally {
      await gw.close();
    }
  });

  test("without admin: every /admin/ path answers 404", async () => {
    const gw = await startTestGateway(config({ channels: [channel("main", fake.url)] }));
    try {
      assertError(await call(gw.url, "GET", "/admin/v1/openapi.json", { key: null }), 404, "not_found");
      assertError(await call(gw.url, "GET", "/admin/v1/users"), 404, "not_found");
      assertError(await call(gw.url, "POST", "/admin/v1/users", { body: { name: "x" } }), 404, "not_found");
    } finally {
      await gw.close();
    }
  });
});
