// The console's customer data endpoints (src/admin/console/me) on real stores: the gateway
// on a SQLite file, and again with its usage log and accounts on PostgreSQL, requests served
// through it from a fake OpenAI upstream and entries appended to its usage log, the
// handlers called through `meRoutes` as the console's shell will call them. Checked: each
// customer sees only their own user's (or token's) data whatever they send, spend figures
// equal the admin usage report and `gateway usage` to the nano, requests page on the server
// without gap or repeat, token changes obey console.customer_tokens and are audited, a
// redemption here is the dashboard endpoint's, and bad input is a 400 naming the field.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { parseMoney } from "../../src/accounts/money-input.js";
import { openAccountStore } from "../../src/accounts/open.js";
import type { AccountStore } from "../../src/accounts/store.js";
import { meRoutes, type Customer, type MeAnswer, type MeDeps } from "../../src/admin/console/me/routes.js";
import { formatNano } from "../../src/billing/cost.js";
import { runUsage } from "../../src/cli/usage.js";
import { GUESSES } from "../../src/pipeline/redemption.js";
import type { State } from "../../src/state/interfaces.js";
import { openState } from "../../src/state/open.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { entry } from "../helpers/usage-entry.js";
import { CHANNEL_KEY, TOKEN, channel, config, hello, rawRequest, token, type RawResponse } from "./support.js";

const NANO = 1_000_000_000n;
const DAY = 86_400_000;
const ADMIN_KEY = "adm-console-me-key-0123456789";
const TIME_ZONE = "Asia/Kolkata";
const operator = { actor: "test:operator" };

function yaml(fakeUrl: string, customerTokens: boolean): string {
  return config({
    channels: [channel("main", fakeUrl, { models: ["gpt-4o-mini", "gpt-4o-2024-08-06", "claude-sonnet-4-5"] })],
    users: { carol: { credit: 10, groups: ["default"] } },
    tokens: [token("carol-main", TOKEN, { user: "carol" })],
  }) + stringify({
    admin: { keys: [{ name: "ops", key: ADMIN_KEY, scopes: ["read", "write", "billing"] }] },
    usage: { timezone: TIME_ZONE },
    console: { customer_tokens: customerTokens },
  });
}

interface Backend {
  readonly name: string;
  /** store (and ledger) specs in a fresh place, and how to remove it. */
  open(dir: string): Promise<{ spec: { store: string; ledger?: string }; drop(): Promise<void> }>;
}

const backends: readonly Backend[] = [
  { name: "SQLite file", open: async (dir) => ({ spec: { store: `sqlite:${join(dir, "gateway.db")}` }, drop: async () => {} }) },
  {
    name: "PostgreSQL ledger",
    open: async (dir) => {
      const db: TestDatabase = await createTestDatabase("consoleme");
      return { spec: { store: `sqlite:${join(dir, "gateway.db")}`, ledger: db.url }, drop: () => db.drop() };
    },
  },
];

for (const backend of backends) {
  describe(`console customer endpoints on ${backend.name}`, () => {
    let dir: string;
    let fake: FakeOpenAI;
    let gw: TestGateway;
    let state: State;
    let accountStore: AccountStore;
    let drop: () => Promise<void>;
    let spec: { store: string; ledger?: string };
    let deps: MeDeps;
    const keys: Record<string, string> = {};
    const ann: Customer = { token: "ann-a", user: "ann", group: "default" };
    const annB: Customer = { token: "ann-b", user: "ann", group: "default" };
    const ben: Customer = { token: "ben-main", user: "ben", group: "default" };
    const carol: Customer = { token: "carol-main", user: "carol", group: "default" };
    /** Request ids served through the gateway, per token. */
    const served: Record<string, string[]> = {};
    const now = Date.now();

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), "console-me-"));
      const opened = await backend.open(dir);
      spec = opened.spec;
      drop = opened.drop;
      state = await openState(spec, { baseDir: dir });
      accountStore = await openAccountStore(spec, { baseDir: dir });
      fake = await startFakeOpenAI({ keys: [CHANNEL_KEY], name: "main" });
      gw = await startTestGateway(yaml(fake.url, false), { state, accountStore });
      deps = { service: gw.accounts.service, store: gw.accounts.store, usageLog: state.usageLog, limiter: state.limiter, live: () => gw.box.current };
      for (const user of ["ann", "ben"]) await gw.accounts.service.createUser({ name: user, groups: ["default"], creditNano: 50n * NANO }, operator);
      for (const [name, user] of [["ann-a", "ann"], ["ann-b", "ann"], ["ben-main", "ben"]]) {
        keys[name] = (await gw.accounts.service.createToken({ name, user }, operator)).key;
      }
      keys["carol-main"] = TOKEN;
      // Requests served for real: the gateway prices and logs them.
      for (const [name, count] of [["ann-a", 2], ["ann-b", 1], ["ben-main", 2], ["carol-main", 1]] as const) {
        for (let i = 0; i < count; i++) {
          const res = await chat(keys[name]);
          assert.equal(res.status, 200, res.text);
          (served[name] ??= []).push(String(res.headers["x-gateway-request-id"]));
        }
      }
      // Entries over the last days (some in one millisecond, one refunded, one older than
      // the 30 days), through the usage log itself.
      const at = (daysAgo: number) => now - daysAgo * DAY;
      const logged = [
        entry({ requestId: "ann-old", time: at(45), token: "ann-a", user: "ann", group: "default", model: "gpt-4o-mini", costNano: 70_000_000_001n }),
        entry({ requestId: "ann-d5", time: at(5), token: "ann-a", user: "ann", group: "default", model: "gpt-4o-mini", costNano: 1_234_567_891n }),
        entry({ requestId: "ann-d3", time: at(3), token: "ann-b", user: "ann", group: "default", model: "claude-sonnet-4-5", costNano: 999_999_999n }),
        entry({ requestId: "ann-d3r", time: at(3) + 1, token: "ann-b", user: "ann", group: "default", model: "claude-sonnet-4-5", costNano: 5n }),
        ...[1, 2, 3].map((i) => entry({ requestId: `ann-tie-${i}`, time: at(1), token: "ann-a", user: "ann", group: "default", model: "gpt-4o-mini", costNano: BigInt(i) })),
        entry({ requestId: "ben-d2", time: at(2), token: "ben-main", user: "ben", group: "default", model: "gpt-4o-mini", costNano: 3_000_000_000n }),
        entry({ requestId: "ben-tie", time: at(1), token: "ben-main", user: "ben", group: "default", model: "gpt-4o-mini", costNano: 7n }),
      ];
      for (const e of logged) await state.usageLog.append(e);
      await state.usageLog.refund("ann-d3r", now);
    });

    after(async () => {
      await gw?.close();
      await fake?.close();
      await state?.close();
      await accountStore?.close();
      await drop?.();
      rmSync(dir, { recursive: true, force: true });
      destroyAgents();
    });

    const chat = (key: string): Promise<RawResponse> => rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(hello),
    });
    const admin = (path: string): Promise<RawResponse> => rawRequest(`${gw.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });

    /** Calls the route the console's shell would for `method path`. */
    async function me(method: string, path: string, customer: Customer, opts: { query?: string; body?: unknown } = {}): Promise<MeAnswer & { body: any }> {
      for (const route of meRoutes) {
        if (route.method !== method) continue;
        const pattern = new RegExp(`^${route.path.replace(/\{(\w+)\}/g, "(?<$1>[^/]+)")}$`);
        const m = pattern.exec(path);
        if (!m) continue;
        const params = Object.fromEntries(Object.entries(m.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)]));
        return route.handle({ customer, query: new URLSearchParams(opts.query ?? ""), body: opts.body, now: Date.now(), requestId: "test" }, deps, params);
      }
      throw new Error(`no route for ${method} ${path}`);
    }

    function assertError(answer: MeAnswer & { body: any }, status: number, code: string, message?: RegExp): void {
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, code, JSON.stringify(answer.body));
      assert.equal(typeof answer.body.error.type, "string");
      if (message) assert.match(answer.body.error.message, message);
    }

    test("spend by day and by model equals the admin usage report for the same subject and range, to the nano; the total equals the unfiltered report and gateway usage", async () => {
      const spend = await me("GET", "/spend", ann, { query: "days=30" });
      assert.equal(spend.status, 200, JSON.stringify(spend.body));
      const body = spend.body;
      assert.equal(body.timezone, TIME_ZONE);
      assert.equal(body.days.length, 30);
      assert.ok(body.days.every((d: { date: string; cost: string }) => /^\d{4}-\d{2}-\d{2}$/.test(d.date) && /^\d+(\.\d+)?$/.test(d.cost)));
      const since = new Date(body.since).toISOString();
      const until = new Date(body.until).toISOString();
      const range = `since=${since}&until=${until}`;

      const byDay = await admin(`/admin/v1/usage?by=day&timezone=${TIME_ZONE}&user=ann&${range}`);
      assert.equal(byDay.status, 200, byDay.text);
      const shown = body.days.filter((d: { requests: number }) => d.requests > 0).map((d: any) => [d.date, d.cost, d.requests]);
      assert.deepEqual(shown, byDay.json.data.map((r: any) => [r.key, r.cost, r.requests]).reverse());
      assert.ok(shown.length >= 3, "ann's requests fall on several days");

      const byModel = await admin(`/admin/v1/usage?by=model&user=ann&${range}`);
      assert.deepEqual(body.models.map((m: any) => [m.model, m.cost, m.requests]), byModel.json.data.map((r: any) => [r.key, r.cost, r.requests]));

      // Against the report nobody filtered: ann's row of everyone's.
      const byUser = await admin(`/admin/v1/usage?by=user&${range}`);
      const annRow = byUser.json.data.find((r: any) => r.key === "ann");
      assert.deepEqual([body.total.cost, body.total.requests], [annRow.cost, annRow.requests]);
      // Nothing older than the range, the refund left out, ben's not in it: exactly what was appended.
      const servedCost = (await state.usageLog.logs({ user: "ann", since: body.since, limit: 1000 }))
        .filter((e) => e.refundedAt === undefined).reduce((sum, e) => sum + e.costNano, 0n);
      assert.equal(body.total.cost, formatNano(servedCost));
      assert.ok(!body.models.some((m: any) => m.cost === "70.000000001"));

      // `gateway usage --by user --json` on the same store says the same.
      await state.usageLog.flush();
      let out = "";
      const code = await runUsage(["--by", "user", "--json", "--since", since, "--until", until, "--store", spec.ledger ?? spec.store], {
        out: (t) => void (out += t), err: (t) => void (out += t),
      });
      assert.equal(code, 0, out);
      // Money is written as a JSON number's exact text: read the text, not a float.
      const costText = (line: string) => /"cost":(-?[0-9.]+)/.exec(line)![1];
      const cliLine = out.trim().split("\n").find((l) => JSON.parse(l).key === "ann")!;
      assert.equal(costText(cliLine), body.total.cost);
      // And of ann alone, by model: the console's models.
      out = "";
      assert.equal(await runUsage(["--by", "model", "--user", "ann", "--json", "--since", since, "--until", until, "--store", spec.ledger ?? spec.store], {
        out: (t) => void (out += t), err: (t) => void (out += t),
      }), 0, out);
      const cliModels = out.trim().split("\n").map((l) => [JSON.parse(l).key, costText(l), JSON.parse(l).requests]);
      assert.deepEqual(cliModels, body.models.map((m: any) => [m.model, m.cost, m.requests]));
    });

    test("spend is the token's own for a token without a user, and each user's own: ben sees none of ann's", async () => {
      const benSpend = (await me("GET", "/spend", ben)).body;
      const benRow = (await admin(`/admin/v1/usage?by=user&since=${new Date(benSpend.since).toISOString()}`)).json.data.find((r: any) => r.key === "ben");
      assert.equal(benSpend.total.cost, benRow.cost);
      const tokenOnly = (await me("GET", "/spend", { token: "ann-b", group: "default" })).body;
      const annB = (await admin(`/admin/v1/usage?by=token&token=ann-b&since=${new Date(tokenOnly.since).toISOString()}`)).json.data;
      assert.deepEqual([tokenOnly.total.cost, tokenOnly.total.requests], [annB[0].cost, annB[0].requests]);
      assert.deepEqual(tokenOnly.models.map((m: any) => m.model).sort(), ["claude-sonnet-4-5", "gpt-4o-mini"]);
    });

    test("spend: days from 1 to 90; anything else, or another parameter, is a 400 naming it", async () => {
      assert.equal((await me("GET", "/spend", ann, { query: "days=90" })).body.days.length, 90);
      assert.equal((await me("GET", "/spend", ann, { query: "days=1" })).body.days.length, 1);
      for (const days of ["0", "91", "-1", "7.5", "x", ""]) assertError(await me("GET", "/spend", ann, { query: `days=${days}` }), 400, "invalid_parameter", /^days: /);
      assertError(await me("GET", "/spend", ann, { query: "user=ben" }), 400, "invalid_parameter", /^user: is not known here/);
      assertError(await me("GET", "/spend", ann, { query: "days=3&days=4" }), 400, "invalid_parameter", /^days: is given twice/);
    });

    test("requests: newest first, each customer's user's only, with exact cost and its breakdown", async () => {
      const page = await me("GET", "/requests", annB, { query: "limit=200" });
      assert.equal(page.status, 200, JSON.stringify(page.body));
      const ids = page.body.rows.map((r: any) => r.request_id);
      const expected = (await state.usageLog.logs({ user: "ann", limit: 1000 })).map((e) => e.requestId);
      assert.deepEqual(ids, expected, "every one of ann's requests, both tokens, newest first");
      assert.ok(ids.includes(served["ann-a"][0]) && ids.includes(served["ann-b"][0]) && ids.includes("ann-old"));
      assert.ok(!ids.some((id: string) => id.startsWith("ben") || served["ben-main"].includes(id) || served["carol-main"].includes(id)));
      assert.equal(page.body.next, undefined);

      const real = page.body.rows.find((r: any) => r.request_id === served["ann-a"][0]);
      const logged = (await state.usageLog.logs({ requestId: served["ann-a"][0] }))[0];
      assert.equal(real.model, "gpt-4o-mini");
      assert.equal(real.protocol, "chat-completions");
      assert.equal(real.status, 200);
      assert.equal(real.input_tokens, logged.usage.input);
      assert.equal(real.output_tokens, logged.usage.output);
      assert.equal(real.cost, formatNano(logged.costNano));
      assert.equal(real.breakdown.total, real.cost, "the breakdown adds up to the cost");
      assert.equal(real.breakdown.multiplier, "0.7");
      const components = real.breakdown.lines.map((l: any) => l.component);
      assert.ok(components.includes("input") && components.includes("output"), components.join());
      assert.equal(real.cache_read_tokens, logged.usage.cacheRead || undefined);
      assert.ok(real.breakdown.lines.every((l: any) => /^\d+(\.\d+)?$/.test(l.unit_price) && /^\d+(\.\d+)?$/.test(l.subtotal)));
      for (const hidden of ["channel", "channel_cost", "key", "upstream_model", "token", "user"]) assert.ok(!(hidden in real), `${hidden} is the operator's`);
      const refunded = page.body.rows.find((r: any) => r.request_id === "ann-d3r");
      assert.equal(typeof refunded.refunded_at, "number");
    });

    test("requests by id: one's own, found; another tenant's, or an unknown id, answers 404 alike", async () => {
      const own = await me("GET", "/requests", ann, { query: `id=${served["ann-b"][0]}` });
      assert.equal(own.status, 200, JSON.stringify(own.body));
      assert.deepEqual(own.body.rows.map((r: any) => r.request_id), [served["ann-b"][0]]);
      for (const id of [served["ben-main"][0], "ben-d2", served["carol-main"][0], "no-such-request"]) {
        assertError(await me("GET", "/requests", ann, { query: `id=${id}` }), 404, "not_found", /among this account's requests/);
      }
      // A token without a user sees its own token's only, even among its user's.
      assertError(await me("GET", "/requests", { token: "ann-b", group: "default" }, { query: `id=${served["ann-a"][0]}` }), 404, "not_found");
      assert.equal((await me("GET", "/requests", { token: "ann-b", group: "default" }, { query: `id=${served["ann-b"][0]}` })).status, 200);
      assertError(await me("GET", "/requests", ann, { query: "id=../../etc" }), 400, "invalid_parameter", /^id: /);
      assertError(await me("GET", "/requests", ann, { query: `id=${served["ann-b"][0]}&limit=5` }), 400, "invalid_parameter", /^id: /);
      assertError(await me("GET", "/requests", ann, { query: "user=ben" }), 400, "invalid_parameter", /^user: is not known here/);
    });

    test("requests page on the server: every row once, in order, ties in one millisecond included; bounds named", async () => {
      const all = (await state.usageLog.logs({ user: "ann", limit: 1000 })).map((e) => e.requestId);
      for (const limit of [1, 2, 3]) {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let pages = 0; pages < 50; pages++) {
          const page = await me("GET", "/requests", ann, { query: `limit=${limit}${cursor ? `&before=${cursor}` : ""}` });
          assert.equal(page.status, 200, JSON.stringify(page.body));
          assert.ok(page.body.rows.length <= limit);
          seen.push(...page.body.rows.map((r: any) => r.request_id));
          cursor = page.body.next;
          if (cursor === undefined) break;
        }
        assert.deepEqual(seen, all, `pages of ${limit}`);
      }
      for (const limit of ["0", "201", "x", "-3"]) assertError(await me("GET", "/requests", ann, { query: `limit=${limit}` }), 400, "invalid_parameter", /^limit: /);
      for (const before of ["yesterday", "1-2-3", "12345678901234567-1"]) assertError(await me("GET", "/requests", ann, { query: `before=${before}` }), 400, "invalid_parameter", /^before: /);
      assert.equal((await me("GET", "/requests", ann, { query: "limit=200" })).body.rows.length, all.length);
    });

    test("tokens while console.customer_tokens is off: the user's listed (hints, no keys, not another user's); every change 403", async () => {
      const list = await me("GET", "/tokens", ann);
      assert.equal(list.status, 200, JSON.stringify(list.body));
      assert.equal(list.body.customer_tokens, false);
      assert.deepEqual(list.body.data.map((t: any) => t.name), ["ann-a", "ann-b"]);
      assert.ok(list.body.data.every((t: any) => typeof t.key_hint === "string" && !("key" in t)));
      assert.ok(!JSON.stringify(list.body).includes(keys["ann-a"]));
      assert.equal(list.body.data.find((t: any) => t.name === "ann-a").current, true);
      assertError(await me("POST", "/tokens", ann, { body: { name: "ann-new" } }), 403, "customer_tokens_off", /console\.customer_tokens/);
      assertError(await me("PATCH", "/tokens/ann-b", ann, { body: { quota: 1 } }), 403, "customer_tokens_off");
      assertError(await me("DELETE", "/tokens/ann-b", ann), 403, "customer_tokens_off");
      assert.equal((await gw.accounts.service.token("ann-b")).status, "active");
      // A gateway.yaml user's tokens are listed from the config.
      assert.deepEqual((await me("GET", "/tokens", carol)).body.data.map((t: any) => [t.name, t.source]), [["carol-main", "gateway.yaml"]]);
    });

    test("tokens when the operator allows it: create (key once), set quota and expiry, disable, revoke; audited as the token; another user's is 404", async () => {
      gw.swapConfig(yaml(fake.url, true));
      try {
        const created = await me("POST", "/tokens", ann, { body: { name: "ann-ci", quota: "2.5", expires: "30d" } });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        assert.equal(created.headers?.["cache-control"], "no-store");
        assert.match(created.body.key, /^sk-/);
        assert.deepEqual([created.body.user, created.body.group, created.body.quota], ["ann", "default", "2.5"]);
        // The new key works at once, and is never shown again.
        assert.equal((await chat(created.body.key)).status, 200);
        const listed = (await me("GET", "/tokens", ann)).body;
        assert.deepEqual(listed.data.map((t: any) => t.name), ["ann-a", "ann-b", "ann-ci"]);
        assert.ok(!JSON.stringify(listed).includes(created.body.key));

        const patched = await me("PATCH", "/tokens/ann-ci", annB, { body: { quota: null, expires: "2099-01-01T00:00:00Z" } });
        assert.equal(patched.status, 200, JSON.stringify(patched.body));
        assert.equal(patched.body.quota, undefined);
        assert.equal(patched.body.expires, "2099-01-01T00:00:00.000Z");
        assert.equal((await me("PATCH", "/tokens/ann-ci", ann, { body: { status: "disabled" } })).body.status, "disabled");
        assert.equal((await chat(created.body.key)).status, 401, "a disabled token is refused on its next call");
        assert.equal((await me("PATCH", "/tokens/ann-ci", ann, { body: { status: "active" } })).body.status, "active", "what the customer disabled they may enable");
        const revoked = await me("DELETE", "/tokens/ann-ci", ann);
        assert.equal(revoked.body.status, "revoked");
        assert.equal((await chat(created.body.key)).status, 401);
        assertError(await me("PATCH", "/tokens/ann-ci", ann, { body: { quota: 1 } }), 404, "not_found");

        const audit = (await gw.accounts.store.audit({ target: "ann-ci", limit: 10 })).items;
        assert.deepEqual(audit.map((r) => [r.action, r.actor]).reverse(), [
          ["token.create", "token:ann-a"], ["token.update", "token:ann-b"], ["token.update", "token:ann-a"], ["token.update", "token:ann-a"], ["token.revoke", "token:ann-a"],
        ]);

        // Never another user's token, nor gateway.yaml's, nor one the operator disabled.
        for (const [method, body] of [["PATCH", { quota: 1 }], ["DELETE", undefined]] as const) {
          assertError(await me(method, "/tokens/ben-main", ann, { body }), 404, "not_found", /^No token 'ben-main'/);
          assertError(await me(method, "/tokens/nobody", ann, { body }), 404, "not_found", /^No token 'nobody'/);
        }
        assert.equal((await gw.accounts.service.token("ben-main")).status, "active");
        assertError(await me("POST", "/tokens", carol, { body: { name: "carol-2" } }), 403, "customer_tokens_off", /gateway\.yaml/);
        await gw.accounts.service.updateToken("ann-b", { status: "disabled" }, operator);
        assertError(await me("PATCH", "/tokens/ann-b", ann, { body: { status: "active" } }), 403, "customer_tokens_off", /disabled by the operator/);
        await gw.accounts.service.updateToken("ann-b", { status: "active" }, operator);
        // Not the token one is signed in with.
        assertError(await me("DELETE", "/tokens/ann-a", ann), 400, "invalid_parameter", /^name: this is the token you are signed in with/);
        assertError(await me("PATCH", "/tokens/ann-a", ann, { body: { status: "disabled" } }), 400, "invalid_parameter", /^status: /);
      } finally {
        gw.swapConfig(yaml(fake.url, false));
      }
    });

    test("token changes: bad input is a 400 naming the field, and changes nothing", async () => {
      gw.swapConfig(yaml(fake.url, true));
      try {
        const cases: [string, string, unknown, RegExp][] = [
          ["POST", "/tokens", { name: "ann-x", quota: "lots" }, /^quota: /],
          ["POST", "/tokens", { name: "ann-x", quota: -1 }, /^quota: must not be negative/],
          ["POST", "/tokens", { name: "ann-x", expires: "2001-01-01" }, /^expires: must be in the future/],
          ["POST", "/tokens", { name: "ann x" }, /^name: must be a name/],
          ["POST", "/tokens", { name: "ann-x", user: "ben" }, /^user: is not known here/],
          ["POST", "/tokens", { name: "ann-x", group: "video" }, /^group: is not known here/],
          ["POST", "/tokens", { quota: 1 }, /^name: is required/],
          ["POST", "/tokens", [1], /^\(body\): must be a JSON object/],
          ["PATCH", "/tokens/ann-b", {}, /^\(body\): name something to change/],
          ["PATCH", "/tokens/ann-b", { status: "revoked" }, /^status: must be one of/],
          ["PATCH", "/tokens/ann-b", { models: ["*"] }, /^models: is not known here/],
        ];
        for (const [method, path, body, message] of cases) {
          assertError(await me(method, path, ann, { body }), 400, "invalid_parameter", message);
        }
        assertError(await me("POST", "/tokens", ann, { body: { name: "ben-main" } }), 409, "name_taken");
        assert.deepEqual((await me("GET", "/tokens", ann)).body.data.map((t: any) => t.name), ["ann-a", "ann-b", "ann-ci"]);
        assert.equal((await gw.accounts.service.token("ann-b")).quota, undefined);
      } finally {
        gw.swapConfig(yaml(fake.url, false));
      }
    });

    test("redeem: the same answer and effect as POST /v1/dashboard/redeem, audited as the token; failed guesses share one window", async () => {
      const { codes } = await gw.accounts.service.createCodes({ count: 2, amountNano: 2n * NANO + 1n, expiresAt: Date.now() + 3_600_000, batch: `b-${backend.name.length}` }, operator);
      const before = (await gw.accounts.service.user("ben")).balance;
      const here = await me("POST", "/redeem", ben, { body: { code: codes[0] } });
      assert.equal(here.status, 200, JSON.stringify(here.body));
      const afterHere = (await gw.accounts.service.user("ben")).balance;
      const there = await rawRequest(`${gw.url}/v1/dashboard/redeem`, {
        method: "POST", headers: { authorization: `Bearer ${keys["ben-main"]}`, "content-type": "application/json" }, body: JSON.stringify({ code: codes[1] }),
      });
      assert.equal(there.status, 200, there.text);
      assert.deepEqual(Object.keys(here.body), Object.keys(there.json));
      assert.deepEqual([here.body.object, here.body.redeemed], [there.json.object, there.json.redeemed]);
      assert.equal(here.body.balance, afterHere);
      assert.equal(parseMoney(afterHere, "balance", { allowZero: true }) - parseMoney(before, "balance", { allowZero: true }), 2n * NANO + 1n);
      const audit = (await gw.accounts.store.audit({ target: "ben", limit: 5 })).items.filter((r) => r.action === "code.redeem");
      assert.deepEqual(audit.map((r) => r.actor), ["token:ben-main", "token:ben-main"]);

      const again = await me("POST", "/redeem", ben, { body: { code: codes[0] } });
      const againThere = await rawRequest(`${gw.url}/v1/dashboard/redeem`, {
        method: "POST", headers: { authorization: `Bearer ${keys["ben-main"]}`, "content-type": "application/json" }, body: JSON.stringify({ code: codes[0] }),
      });
      assert.deepEqual([again.status, again.body.error], [againThere.status, againThere.json.error]);
      assertError(await me("POST", "/redeem", ben, { body: {} }), 400, "missing_required_parameter");
      assertError(await me("POST", "/redeem", ben, { body: { code: 5 } }), 400, "invalid_parameter");
      assertError(await me("POST", "/redeem", ben, { body: { code: "x", user: "ann" } }), 400, "invalid_parameter", /^user: is not known here/);

      // Ann's guesses: the console's and the dashboard's count in one window per token.
      for (let i = 0; i < GUESSES.max; i++) assert.equal((await me("POST", "/redeem", ann, { body: { code: `gw-guess-${i}` } })).status, 400);
      const limited = await rawRequest(`${gw.url}/v1/dashboard/redeem`, {
        method: "POST", headers: { authorization: `Bearer ${keys["ann-a"]}`, "content-type": "application/json" }, body: JSON.stringify({ code: "gw-guess-more" }),
      });
      assert.equal(limited.status, 429, limited.text);
      const limitedHere = await me("POST", "/redeem", ann, { body: { code: "gw-guess-more" } });
      assertError(limitedHere, 429, "rate_limited", /failed redemptions/);
      assert.ok(Number(limitedHere.headers?.["retry-after"]) > 0);
    });

    test("quick start: the group's models within the token's allowlist, per protocol, snippets with the page's base URL and no key", async () => {
      const qs = await me("GET", "/quickstart", ann);
      assert.equal(qs.status, 200, JSON.stringify(qs.body));
      assert.deepEqual(qs.body.models, ["claude-sonnet-4-5", "gpt-4o-2024-08-06", "gpt-4o-mini"]);
      assert.deepEqual(qs.body.protocols.map((p: any) => p.protocol), ["chat-completions", "responses", "messages", "generate-content"]);
      const chatGuide = qs.body.protocols[0];
      assert.deepEqual(chatGuide.models, qs.body.models);
      assert.equal(qs.body.protocols[1].models.length, 0, "no model is priced for responses here");
      for (const p of qs.body.protocols.filter((g: any) => g.models.length > 0)) {
        for (const text of Object.values<string>(p.snippets)) {
          assert.ok(text.includes("{base_url}"), `${p.protocol}: ${text}`);
          assert.ok(text.includes("GATEWAY_API_KEY"));
          for (const key of Object.values(keys)) assert.ok(!text.includes(key), "no key in a snippet");
        }
      }
      assert.equal(qs.body.protocols[3].path, "/v1beta/models/claude-sonnet-4-5:generateContent");
      // A stored token's own model list narrows it.
      await gw.accounts.service.updateToken("ann-b", { models: ["gpt-4o-*"] }, operator);
      try {
        assert.deepEqual((await me("GET", "/quickstart", annB)).body.models, ["gpt-4o-2024-08-06", "gpt-4o-mini"]);
      } finally {
        await gw.accounts.service.updateToken("ann-b", { models: null }, operator);
      }
      assertError(await me("GET", "/quickstart", ann, { query: "group=video" }), 400, "invalid_parameter", /^group: is not known here/);
    });
  });
}
