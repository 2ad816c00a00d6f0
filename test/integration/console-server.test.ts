// The console's server side over raw HTTP: the page under a strict CSP, hashed assets with
// immutable caching and nothing else served, sign-in sessions (cookie, CSRF, rate-limited
// failures, ended by a disabled token), the customer's figures equal to the billing endpoint's
// and the CLI's, the admin API as the operator's key, and admin.listen's split.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { AdminApi } from "../../src/admin/api.js";
import { ConsoleApp } from "../../src/admin/console/app.js";
import { ConsoleAssets } from "../../src/admin/console/assets.js";
import { CONTENT_SECURITY_POLICY } from "../../src/admin/console/answers.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { ADMIN_KEYS, ConsoleClient, adminCall, consoleYaml, customerWithToken, ensureConsoleBuilt } from "../helpers/console.js";
import { stringify } from "yaml";
import { config, rawRequest } from "./support.js";

describe("the console on the main listener", () => {
  let gw: TestGateway;
  let key: string;
  before(async () => {
    await ensureConsoleBuilt();
    gw = await startTestGateway(consoleYaml());
    key = await customerWithToken(gw.url, "carol", "12.345678901");
  });
  after(() => gw.close());

  test("the page is served under the CSP, never cached, naming its hashed assets", async () => {
    for (const path of ["/console", "/console/", "/console/users/somewhere"]) {
      const r = await rawRequest(`${gw.url}${path}`);
      assert.equal(r.status, 200, path);
      assert.equal(r.headers["content-security-policy"], CONTENT_SECURITY_POLICY);
      assert.equal(r.headers["x-content-type-options"], "nosniff");
      assert.equal(r.headers["referrer-policy"], "no-referrer");
      assert.equal(r.headers["cache-control"], "no-store");
      assert.match(String(r.headers["content-type"]), /^text\/html/);
      assert.match(r.text, /<script type="module" src="\/console\/assets\/main\.[A-Z0-9]+\.js"><\/script>/);
      assert.doesNotMatch(r.text, /<script>|<style>|style="/, "nothing inline: the CSP would block it");
    }
    assert.match(CONTENT_SECURITY_POLICY, /^default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'$/);
  });

  test("assets: immutable, the right type; anything not in the manifest is 404, traversal included", async () => {
    const page = await rawRequest(`${gw.url}/console`);
    const js = /src="(\/console\/assets\/[^"]+\.js)"/.exec(page.text)![1];
    const css = /href="(\/console\/assets\/[^"]+\.css)"/.exec(page.text)![1];
    const a = await rawRequest(`${gw.url}${js}`);
    assert.equal(a.status, 200);
    assert.equal(a.headers["content-type"], "text/javascript; charset=utf-8");
    assert.equal(a.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.equal(a.headers["x-content-type-options"], "nosniff");
    assert.equal((await rawRequest(`${gw.url}${css}`)).headers["content-type"], "text/css; charset=utf-8");
    for (const path of ["/console/assets/main.js", "/console/assets/nope.ABC.js", "/console/assets/../../package.json",
      "/console/assets/%2e%2e%2f%2e%2e%2fpackage.json", "/console/assets/..%2fmanifest.json", "/console/assets/"]) {
      const r = await rawRequest(`${gw.url}${path}`);
      assert.equal(r.status, 404, path);
      assert.equal(r.json?.error?.code, "not_found", path);
    }
    assert.equal((await rawRequest(`${gw.url}/console`, { method: "POST" })).status, 405);
  });

  test("a customer signs in with their token: an HttpOnly SameSite cookie, and their own figures", async () => {
    const c = new ConsoleClient(gw.url);
    const r = await c.signIn(key);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual({ role: r.json.role, name: r.json.name }, { role: "customer", name: "carol-main" });
    assert.match(r.json.csrf, /^[A-Za-z0-9_-]{43}$/);
    const cookie = String(r.headers["set-cookie"]);
    assert.match(cookie, /^gateway_console=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/console$/, "not Secure over plain HTTP");
    assert.ok(!r.text.includes(key) && !cookie.includes(key), "the secret is never echoed");
    const me = await c.call("GET", "/console/api/me");
    assert.equal(me.status, 200, me.text);
    assert.equal(me.headers["cache-control"], "no-store");
    const shown = await gw.accounts.service.user("carol"); // what `gateway users show carol` prints
    const billing = await rawRequest(`${gw.url}/v1/dashboard/billing/subscription`, { headers: { authorization: `Bearer ${key}` } });
    assert.deepEqual(me.json, {
      role: "customer", token: "carol-main", user: "carol", group: "default",
      balance: shown.balance, reserved: shown.reserved, spent: shown.spent, currency: "USD",
    });
    assert.equal(me.json.balance, "12.345678901");
    assert.match(billing.text, /"balance":12\.345678901[,}]/);
    assert.deepEqual((await c.call("GET", "/console/api/session")).json, r.json);
  });

  test("a customer's session cannot reach the admin API, and no session reaches anything", async () => {
    const c = new ConsoleClient(gw.url);
    await c.signIn(key);
    const r = await c.call("GET", "/console/api/admin/users");
    assert.equal(r.status, 403);
    assert.equal(r.json.error.code, "admin_scope_missing");
    const none = new ConsoleClient(gw.url);
    for (const path of ["/console/api/me", "/console/api/session", "/console/api/admin/users"]) {
      const n = await none.call("GET", path);
      assert.equal(n.status, 401, path);
      assert.equal(n.json.error.code, "console_not_signed_in");
    }
  });

  test("every change needs the session's CSRF token", async () => {
    const c = new ConsoleClient(gw.url);
    await c.signIn(ADMIN_KEYS.ops);
    const body = { amount: "1", reason: "csrf probe", idempotency_key: "csrf-probe" };
    const without = await c.call("POST", "/console/api/admin/users/carol/credit", body, { csrf: false });
    assert.equal(without.status, 403);
    assert.equal(without.json.error.code, "console_csrf_mismatch");
    c.csrf = "x".repeat(43);
    assert.equal((await c.call("POST", "/console/api/admin/users/carol/credit", body)).status, 403);
    assert.equal((await c.call("DELETE", "/console/api/session")).status, 403);
    assert.equal((await adminCall(gw.url, "GET", "/admin/v1/users/carol")).json.balance, "12.345678901", "nothing was credited");
    const form = await rawRequest(`${gw.url}/console/api/session`, {
      method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `secret=${key}`,
    });
    assert.equal(form.status, 400, "a cross-site form cannot sign anyone in");
  });

  test("an operator uses the admin API as their key: scopes checked, their name in the audit log", async () => {
    const ops = new ConsoleClient(gw.url);
    assert.equal((await ops.signIn(ADMIN_KEYS.ops)).json.role, "operator");
    const list = await ops.call("GET", "/console/api/admin/users?prefix=car&limit=5");
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.json.data.map((u: { name: string }) => u.name), ["carol"]);
    const credit = await ops.call("POST", "/console/api/admin/users/carol/credit", { amount: "0.000000099", reason: "console", idempotency_key: "k-1" });
    assert.equal(credit.status, 201, credit.text);
    assert.equal(credit.json.user.balance, "12.345679");
    const audit = await adminCall(gw.url, "GET", "/admin/v1/audit?target=carol");
    assert.ok(audit.json.data.some((e: { actor: string }) => e.actor === "ops"), audit.text);
    const viewer = new ConsoleClient(gw.url);
    await viewer.signIn(ADMIN_KEYS.viewer);
    const refused = await viewer.call("POST", "/console/api/admin/users/carol/credit", { amount: "1", reason: "no", idempotency_key: "k-2" });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error.code, "admin_scope_missing");
    await adminCall(gw.url, "POST", "/admin/v1/users/carol/credit", { amount: "-0.000000099", reason: "undo", idempotency_key: "k-undo" });
  });

  test("disabling the token ends its console session and refuses it on the API", async () => {
    const dave = await customerWithToken(gw.url, "dave", "3");
    const c = new ConsoleClient(gw.url);
    await c.signIn(dave);
    assert.equal((await c.call("GET", "/console/api/me")).status, 200);
    const ops = new ConsoleClient(gw.url);
    await ops.signIn(ADMIN_KEYS.ops);
    assert.equal((await ops.call("PATCH", "/console/api/admin/tokens/dave-main", { status: "disabled" })).status, 200);
    const me = await c.call("GET", "/console/api/me");
    assert.equal(me.status, 401);
    assert.equal(me.json.error.code, "token_disabled");
    assert.equal((await c.call("GET", "/console/api/session")).json.error.code, "console_not_signed_in", "the session is gone");
    const again = await new ConsoleClient(gw.url).signIn(dave);
    assert.equal(again.status, 401);
    assert.equal(again.json.error.code, "token_disabled");
  });

  test("sign-out ends the session", async () => {
    const c = new ConsoleClient(gw.url);
    await c.signIn(key);
    const out = await c.call("DELETE", "/console/api/session");
    assert.equal(out.status, 200);
    assert.match(String(out.headers["set-cookie"]), /Max-Age=0/);
    assert.equal((await c.call("GET", "/console/api/me")).status, 401);
  });

  test("the customer data endpoints answer through a session: scoped to the customer, changes need the CSRF token", async () => {
    const c = new ConsoleClient(gw.url);
    await c.signIn(key);
    const spend = await c.call("GET", "/console/api/me/spend?days=7");
    assert.equal(spend.status, 200, spend.text);
    assert.equal(spend.json.days.length, 7);
    const requests = await c.call("GET", "/console/api/me/requests?limit=5");
    assert.equal(requests.status, 200, requests.text);
    assert.ok(Array.isArray(requests.json.rows));
    const tokens = await c.call("GET", "/console/api/me/tokens");
    assert.equal(tokens.status, 200, tokens.text);
    assert.ok(JSON.stringify(tokens.json).includes("carol-main") && !JSON.stringify(tokens.json).includes(key), "hints, never the key");
    const bad = await c.call("GET", "/console/api/me/spend?days=1000");
    assert.equal(bad.status, 400);
    assert.equal((await c.call("POST", "/console/api/me/redeem", { code: "gw-nope" }, { csrf: false })).status, 403, "no CSRF token, no redemption");
    const wrongMethod = await c.call("PUT", "/console/api/me/spend", {});
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.allow, "GET");
    assert.equal((await c.call("GET", "/console/api/me/tokens/%E0%A4%A")).status, 404, "a malformed escape names nothing");
  });

  test("the customer routes: unknown ones 404, a wrong method 405; signing in again replaces the session", async () => {
    const c = new ConsoleClient(gw.url);
    await c.signIn(key);
    assert.equal((await c.call("GET", "/console/api/me/nothing-here")).status, 404);
    const post = await c.call("POST", "/console/api/me", {});
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, "GET");
    const first = c.cookie;
    await c.signIn(key);
    assert.notEqual(c.cookie, first);
    const old = new ConsoleClient(gw.url);
    old.cookie = first;
    assert.equal((await old.call("GET", "/console/api/me")).status, 401, "the first session ended");
    assert.equal((await c.call("GET", "/console/api/me")).status, 200);
  });

  test("failed sign-ins are refused in the catalogue's shape, then rate-limited per address", async () => {
    const c = new ConsoleClient(gw.url);
    const first = await c.signIn("sk-not-a-real-key-000000000000");
    assert.equal(first.status, 401);
    assert.equal(first.json.error.type, "gateway_error");
    assert.equal(typeof first.json.error.message, "string");
    assert.equal(first.json.error.code, "console_signin_refused");
    let status = 0;
    for (let i = 0; i < 12 && status !== 429; i++) status = (await c.signIn(`sk-wrong-${i}-0000000000000000`)).status;
    assert.equal(status, 429);
    const limited = await c.signIn(key);
    assert.equal(limited.status, 429, "a right secret waits too: the limit is on the address");
    assert.ok(Number(limited.headers["retry-after"]) >= 1);
  });
});

describe("the console with admin.listen set", () => {
  let gw: TestGateway;
  let key: string;
  before(async () => {
    await ensureConsoleBuilt();
    gw = await startTestGateway(consoleYaml({ listen: "127.0.0.1:0" }));
    key = await customerWithToken(gw.adminUrl!, "erin", "1");
  });
  after(() => gw.close());

  test("customers sign in on the main listener; operators only on admin.listen's", async () => {
    assert.equal((await new ConsoleClient(gw.url).signIn(key)).status, 200);
    const refused = await new ConsoleClient(gw.url).signIn(ADMIN_KEYS.ops);
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error.code, "console_operators_elsewhere");
    const ops = new ConsoleClient(gw.adminUrl!);
    assert.equal((await ops.signIn(ADMIN_KEYS.ops)).status, 200);
    assert.equal((await ops.call("GET", "/console/api/admin/users/erin")).json.balance, "1");
    assert.equal((await rawRequest(`${gw.adminUrl}/console`)).status, 200);
  });
});

test("removing an admin key from gateway.yaml ends its console sessions at their next call", async () => {
  await ensureConsoleBuilt();
  const gw = await startTestGateway(consoleYaml());
  try {
    const viewer = new ConsoleClient(gw.url);
    assert.equal((await viewer.signIn(ADMIN_KEYS.viewer)).status, 200);
    assert.equal((await viewer.call("GET", "/console/api/admin/users")).status, 200);
    const ops = new ConsoleClient(gw.url);
    await ops.signIn(ADMIN_KEYS.ops);
    gw.swapConfig(config({ users: {}, tokens: [] }) + stringify({ admin: { keys: [{ name: "ops", key: ADMIN_KEYS.ops, scopes: ["read"] }] } }));
    const gone = await viewer.call("GET", "/console/api/admin/users");
    assert.equal(gone.status, 401);
    assert.equal(gone.json.error.code, "console_not_signed_in");
    assert.equal((await ops.call("GET", "/console/api/admin/users")).status, 200, "a kept key keeps its session");
    const narrowed = await ops.call("POST", "/console/api/admin/users", { name: "zed" });
    assert.equal(narrowed.status, 403, "with the scopes the key has now");
  } finally {
    await gw.close();
  }
});

test("an unbuilt console answers 503 saying how to build it", async () => {
  const gw = await startTestGateway(consoleYaml());
  const admin = new AdminApi(() => gw.box.current, {
    service: gw.accounts.service, store: gw.accounts.store, usageLog: gw.state.usageLog, keyControl: gw.keyControl, now: Date.now,
  });
  const app = new ConsoleApp({
    live: () => gw.box.current, directory: gw.accounts.directory, service: gw.accounts.service, store: gw.accounts.store, keyed: gw.state.keyed,
    limiter: gw.state.limiter, usageLog: gw.state.usageLog, admin, assets: new ConsoleAssets("/nonexistent/console/build"),
  });
  const server = http.createServer((req, res) => void app.handle({ req, res, path: req.url!, query: "", requestId: "t", operators: true }));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const r = await rawRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}/console`);
    assert.equal(r.status, 503);
    assert.match(r.text, /npm run build:console/);
    assert.equal(r.headers["content-security-policy"], CONTENT_SECURITY_POLICY);
  } finally {
    server.close();
    await gw.close();
  }
});
