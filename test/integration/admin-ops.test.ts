// The admin API's operator views end to end (what the console's operator pages read): live
// traffic, channel key health, testing a key, the compiled price list, code batches, CSV
// exports and user search. The real gateway on 127.0.0.1:0, a fake OpenAI upstream, raw
// HTTP; usage entries with known money are recorded in the gateway's own store so every
// figure is checked to the nano-unit. Every JSON answer is checked against the served
// OpenAPI document.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { stringify } from "yaml";
import { formatNano } from "../../src/billing/cost.js";
import { keyFingerprint } from "../../src/routing/key-health.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { adminClient, assertError, type AdminCallOptions } from "../helpers/admin-client.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { entry } from "../helpers/usage-entry.js";
import { CHANNEL_KEY, channel, config, hello, rawRequest, TOKEN, type RawResponse } from "./support.js";

const KEYS = { ops: "adm-ops-key-0123456789abcdef", viewer: "adm-viewer-key-0123456789abc", payer: "adm-payer-key-0123456789abcd" };
/** A key the fake refuses (401): the spare channel's only one. */
const BAD_KEY = "sk-upstream-REFUSED-0000000000";
const MINUTE = 60_000;
const minuteIso = (ms: number) => new Date(Math.floor(ms / MINUTE) * MINUTE).toISOString();

function yaml(fakeUrl: string): string {
  return config({
    channels: [channel("main", fakeUrl), channel("spare", fakeUrl, { keys: [BAD_KEY], models: ["gpt-4o-2024-08-06"] })],
    server: { body_timeout: "2s" },
  }) + stringify({
    admin: {
      keys: [
        { name: "ops", key: KEYS.ops, scopes: ["read", "write", "billing"] },
        { name: "viewer", key: KEYS.viewer, scopes: ["read"] },
        { name: "payer", key: KEYS.payer, scopes: ["billing"] },
      ],
    },
  });
}

describe("admin API: operator views", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let api: (method: string, path: string, opts?: AdminCallOptions) => Promise<RawResponse>;
  let seq = 0;
  const record = (over: Partial<Parameters<typeof entry>[0]>) => gw.store.record(entry({ requestId: `rec-${++seq}`, time: Date.now(), ...over }));

  before(async () => {
    fake = await startFakeOpenAI({ keys: [CHANNEL_KEY], name: "main" });
    gw = await startTestGateway(yaml(fake.url));
    api = await adminClient(gw.url, KEYS.ops, [...Object.values(KEYS), CHANNEL_KEY, BAD_KEY]);
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  test("traffic: every minute of the last N, requests, errors and cost exact to the nano; bad minutes named", async () => {
    const twoAgo = Math.floor((Date.now() - 2 * MINUTE) / MINUTE) * MINUTE + 10; // three entries in one minute
    await record({ time: twoAgo, costNano: 1_000_000_001n, token: "tr-a", user: "tr-u" });
    await record({ time: twoAgo + 1, costNano: 2n, status: 502, error: "upstream_error", token: "tr-a", user: "tr-u" });
    await record({ time: twoAgo + 2, costNano: 0n, status: 429, token: "tr-a", user: "tr-u" });
    const served = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(hello),
    });
    assert.equal(served.status, 200, served.text);
    const chatCost = gw.store.logs({ token: "alice-main", limit: 1 })[0].costNano;
    assert.ok(chatCost > 0n);

    const asked = Date.now();
    const r = await api("GET", "/admin/v1/traffic?minutes=5", { key: KEYS.viewer });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.minutes, 5);
    assert.equal(r.json.data.length, 5);
    assert.ok([minuteIso(asked), minuteIso(Date.now())].includes(r.json.data.at(-1).minute), "the current minute is last");
    const at = r.json.data.find((m: { minute: string }) => m.minute === minuteIso(twoAgo));
    assert.deepEqual(at, { minute: minuteIso(twoAgo), requests: 3, errors: 2, cost: "1.000000003" });
    assert.equal(r.json.total.requests, 4);
    assert.equal(r.json.total.errors, 2);
    assert.equal(r.json.total.cost, formatNano(1_000_000_003n + chatCost), "the minutes' exact sum");
    assert.equal((await api("GET", "/admin/v1/traffic")).json.data.length, 60, "60 minutes by default");
    assertError(await api("GET", "/admin/v1/traffic?minutes=0"), 400, "invalid_parameter", /^minutes: must be >= 1/);
    assertError(await api("GET", "/admin/v1/traffic?minutes=1441"), 400, "invalid_parameter", /^minutes: must be <= 1440/);
    assertError(await api("GET", "/admin/v1/traffic?minutes=many"), 400, "invalid_parameter", /^minutes: must be a whole number/);
    assertError(await api("GET", "/admin/v1/traffic", { key: KEYS.payer }), 403, "admin_scope_missing", /'read'/);
    assertError(await api("GET", "/admin/v1/traffic", { key: null }), 401, "missing_admin_key");
  });

  test("channels/stats: each key's state, exact requests and errors, error rate, latency p50/p95; a span to look back", async () => {
    const spare = keyFingerprint(BAD_KEY);
    const now = Date.now();
    for (let i = 1; i <= 20; i++) await record({ time: now - 10 * MINUTE + i, channel: "spare", key: spare, durationMs: i * 10, status: i <= 3 ? 500 : 200 });
    await record({ time: now - 2 * 3_600_000, channel: "spare", key: spare, durationMs: 5000 }); // before the default hour
    await record({ time: now - MINUTE, channel: "retired", key: "0000ffff", durationMs: 7 });

    const r = await api("GET", "/admin/v1/channels/stats", { key: KEYS.viewer });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.data.map((c: { channel: string }) => c.channel), ["main", "spare", "retired"], "config order, then the log's others");
    const [spareKey] = r.json.data[1].keys;
    assert.deepEqual(spareKey, {
      fingerprint: spare, state: "in_rotation", requests: 20, errors: 3, error_rate: 0.15, p50_ms: 100, p95_ms: 190, latency_sample: 20,
    });
    assert.deepEqual(r.json.data[2], {
      channel: "retired", enabled: false,
      keys: [{ fingerprint: "0000ffff", state: "unknown", requests: 1, errors: 0, error_rate: 0, p50_ms: 7, p95_ms: 7, latency_sample: 1 }],
    });
    const mainKey = r.json.data[0].keys[0];
    assert.equal(mainKey.fingerprint, keyFingerprint(CHANNEL_KEY));
    const three = await api("GET", "/admin/v1/channels/stats?since=3h");
    assert.equal(three.json.data[1].keys[0].requests, 21, "the span reaches the older request");
    assert.deepEqual([three.json.data[1].keys[0].p50_ms, three.json.data[1].keys[0].p95_ms], [110, 200], "nearest rank of 21: the 11th and the 20th");
    assertError(await api("GET", "/admin/v1/channels/stats?since=2999-01-01"), 400, "invalid_parameter", /^since: is in the future/);
    assertError(await api("GET", "/admin/v1/channels/stats?since=yesterday"), 400, "invalid_parameter", /^since: /);
    assertError(await api("GET", "/admin/v1/channels/stats", { key: KEYS.payer }), 403, "admin_scope_missing", /'read'/);
  });

  test("test a key: the probe's result (ok, or refused with its class), nothing logged or charged, audited; scope write", async () => {
    const main = keyFingerprint(CHANNEL_KEY);
    const spare = keyFingerprint(BAD_KEY);
    const logged = gw.store.logs({ limit: 1000 }).length;
    const asked = fake.received.length;

    const ok = await api("POST", `/admin/v1/channels/main/keys/${main}/test`);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.ok, true);
    assert.equal(ok.json.status, 200);
    assert.equal(ok.json.model, "gpt-4o-mini");
    assert.equal(ok.json.mode, "plain");
    assert.equal(ok.json.error_class, undefined);
    assert.ok(ok.json.total_ms >= 0);
    assert.equal(fake.received.length, asked + 1, "one request reached the provider");

    const streamed = await api("POST", `/admin/v1/channels/main/keys/${main}/test?mode=stream&model=gpt-4o-mini`);
    assert.equal(streamed.json.ok, true, streamed.text);
    assert.equal(streamed.json.mode, "stream");

    const refused = await api("POST", `/admin/v1/channels/spare/keys/${spare}/test`);
    assert.equal(refused.status, 200, refused.text);
    assert.deepEqual([refused.json.ok, refused.json.status, refused.json.error_class], [false, 401, "auth"]);
    assert.match(refused.json.message, /Incorrect API key/);
    assert.equal(gw.store.logs({ limit: 1000 }).length, logged, "a test is not a request: no usage entry");
    const states = await api("GET", "/admin/v1/channels");
    assert.equal(states.json.data[1].keys[0].state, "in_rotation", "a test does not take a key out");

    const audit = await api("GET", `/admin/v1/audit?target=${encodeURIComponent(`spare/${spare}`)}`);
    assert.deepEqual(audit.json.data.map((a: { action: string; actor: string }) => `${a.action} by ${a.actor}`), ["key.test by ops"]);
    assert.equal(audit.json.data[0].after.error_class, "auth");

    assertError(await api("POST", `/admin/v1/channels/main/keys/${main}/test`, { key: KEYS.viewer }), 403, "admin_scope_missing", /'write'/);
    assertError(await api("POST", `/admin/v1/channels/nope/keys/${main}/test`), 404, "not_found");
    assertError(await api("POST", "/admin/v1/channels/main/keys/00000000/test"), 404, "not_found");
    assertError(await api("POST", `/admin/v1/channels/main/keys/${main}/test?model=gpt-9`), 400, "invalid_parameter", /^model: channel 'main' does not serve 'gpt-9'/);
    assertError(await api("POST", `/admin/v1/channels/main/keys/${main}/test?mode=fast`), 400, "invalid_parameter", /^mode: must be one of: plain, stream/);
  });

  test("prices: every model's compiled rates as exact decimals, what each group charges, the multipliers and the source", async () => {
    const r = await api("GET", "/admin/v1/prices", { key: KEYS.viewer });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.source.file, "test.yaml", "the file the test gateway was started from");
    assert.match(r.json.source.sha256, /^[0-9a-f]{64}$/);
    assert.deepEqual(r.json.groups, { default: "0.7", video: "1" });
    assert.deepEqual(r.json.data.map((m: { model: string }) => m.model), ["gpt-4o-mini", "gpt-4o-2024-08-06", "claude-sonnet-4-5", "gemini-2.5-flash"]);
    const mini = r.json.data[0];
    assert.deepEqual(mini.endpoints, ["chat"]);
    assert.deepEqual(mini.groups, { default: "0.7" }, "the groups of the channels serving it");
    const rows = Object.fromEntries(mini.sections[0].rows.map((row: { component: string }) => [row.component, row]));
    assert.deepEqual(rows.input, { component: "input", per: "1M tokens", price: "0.15", from: "own", fallback: false, charged: { default: "0.105" } });
    assert.deepEqual([rows.output.price, rows.output.charged.default], ["0.6", "0.42"]);
    assert.equal(rows.reasoning.from, "= output");
    assert.deepEqual(mini.channels, [{ channel: "main", enabled: true, basis: "list", multiplier: "1" }]);
    assert.deepEqual(r.json.data[2].groups, {}, "no channel serves claude here");
    assertError(await api("GET", "/admin/v1/prices", { key: KEYS.payer }), 403, "admin_scope_missing", /'read'/);
    assertError(await api("GET", "/admin/v1/prices?model=x"), 400, "invalid_parameter", /^model: is not known here/);
  });

  test("codes: batches listed in name order with amount, count, redeemed, expiry and maker, paged; never a code", async () => {
    const made: Record<string, string[]> = {};
    for (const [batch, amount] of [["cb-gift", "1.000000001"], ["cb-promo-2", "2"], ["cb-promo-1", "0.5"]] as const) {
      const r = await api("POST", "/admin/v1/codes", { key: KEYS.payer, body: { count: 2, amount, expires: "2999-01-01T00:00:00Z", batch } });
      assert.equal(r.status, 201, r.text);
      made[batch] = r.json.codes;
    }
    assert.equal((await api("POST", "/admin/v1/users", { body: { name: "cb-user", groups: ["default"] } })).status, 201);
    const { json: { key } } = await api("POST", "/admin/v1/tokens", { body: { name: "cb-user-1", user: "cb-user" } });
    const redeemed = await rawRequest(`${gw.url}/v1/dashboard/redeem`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ code: made["cb-gift"][0] }),
    });
    assert.equal(redeemed.status, 200, redeemed.text);

    const all = await api("GET", "/admin/v1/codes?prefix=cb-", { key: KEYS.viewer });
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.json.data.map((b: { batch: string }) => b.batch), ["cb-gift", "cb-promo-1", "cb-promo-2"]);
    const [gift] = all.json.data;
    assert.deepEqual(gift, {
      batch: "cb-gift", count: 2, amount: "1.000000001", expires: "2999-01-01T00:00:00.000Z", redeemed: 1, created_at: gift.created_at, actor: "payer",
    });
    assert.deepEqual(gift, (await api("GET", "/admin/v1/codes/cb-gift")).json, "as the batch reads alone");
    for (const code of Object.values(made).flat()) assert.ok(!all.text.includes(code), "a list never shows a code");

    const page1 = await api("GET", "/admin/v1/codes?prefix=cb-&limit=2");
    assert.deepEqual([page1.json.data.map((b: { batch: string }) => b.batch), page1.json.next], [["cb-gift", "cb-promo-1"], "cb-promo-1"]);
    const page2 = await api("GET", `/admin/v1/codes?prefix=cb-&limit=2&after=${page1.json.next}`);
    assert.deepEqual(page2.json.data.map((b: { batch: string }) => b.batch), ["cb-promo-2"]);
    assert.ok(!("next" in page2.json));
    assertError(await api("GET", "/admin/v1/codes?limit=0"), 400, "invalid_parameter", /^limit: must be >= 1/);
    assertError(await api("GET", "/admin/v1/codes", { key: KEYS.payer }), 403, "admin_scope_missing", /'read'/);
  });
  test("CSV: usage and audit as RFC 4180 downloads, the same rows and exact decimals as the JSON; quoting and formula guard", async () => {
    const t = Date.now() - 5000;
    await record({ time: t, model: 'csv, "quoted" model', token: "csv-t", user: "csv-u", costNano: 1_000_000_001n, channelCostNano: 400_000_000n, channel: "main" });
    await record({ time: t, model: "=HYPERLINK(1)", token: "csv-t", user: "csv-u", costNano: 3n, channelCostNano: 5n, channel: "main" });
    await record({ time: t, model: "csv-unknown-cost", token: "csv-t", user: "csv-u", costNano: 7n, channel: "main" });

    const json = await api("GET", "/admin/v1/usage?by=model&since=1h");
    const csv = await api("GET", "/admin/v1/usage?by=model&since=1h&format=csv", { key: KEYS.viewer });
    assert.equal(csv.status, 200, csv.text);
    assert.equal(csv.headers["content-type"], "text/csv; charset=utf-8");
    assert.equal(csv.headers["content-disposition"], 'attachment; filename="usage-model.csv"');
    assert.ok(csv.text.endsWith("\r\n") && !/[^\r]\n/.test(csv.text), "CRLF line ends");
    const [header, ...rows] = parseCsv(csv.text);
    assert.deepEqual(header, ["model", "requests", "input", "cache_read", "cache_write", "output", "reasoning", "cost", "channel_cost", "margin", "margin_percent", "channel_cost_unknown", "channel_cost_recorded"]);
    assert.equal(rows.length, json.json.data.length);
    rows.forEach((row, i) => {
      const expected = json.json.data[i];
      const key = expected.key === null ? "" : expected.key.startsWith("=") ? `'${expected.key}` : expected.key;
      assert.deepEqual(row, [key, ...header.slice(1).map((c) => (expected[c] === null ? "" : String(expected[c])))], `row ${i}`);
    });
    assert.ok(csv.text.includes('"csv, ""quoted"" model",1,'), "a field with a comma and quotes is quoted, its quotes doubled");
    const quoted = rows.find((r) => r[0] === 'csv, "quoted" model')!;
    assert.deepEqual([quoted[7], quoted[8], quoted[9], quoted[10]], ["1.000000001", "0.4", "0.600000001", "60.00"]);
    assert.ok(rows.some((r) => r[0] === "'=HYPERLINK(1)"), "a formula is written as text");
    const unknown = rows.find((r) => r[0] === "csv-unknown-cost")!;
    assert.deepEqual([unknown[8], unknown[9], unknown[11]], ["", "", "1"], "unknown costs are empty, never 0");
    assert.equal((await api("GET", "/admin/v1/usage?by=day&format=csv")).headers["content-disposition"], 'attachment; filename="usage-day.csv"');
    assertError(await api("GET", "/admin/v1/usage?by=model&format=xml"), 400, "invalid_parameter", /^format: must be one of: json, csv/);
    assertError(await api("GET", "/admin/v1/usage?by=model&format=csv", { key: KEYS.payer }), 403, "admin_scope_missing");

    const audit = await api("GET", "/admin/v1/audit?limit=3");
    const auditCsv = await api("GET", "/admin/v1/audit?limit=3&format=csv");
    assert.equal(auditCsv.headers["content-disposition"], 'attachment; filename="audit.csv"');
    assert.equal(auditCsv.headers["x-next-before"], audit.json.next);
    const [auditHeader, ...auditRows] = parseCsv(auditCsv.text);
    assert.deepEqual(auditHeader, ["id", "at", "actor", "action", "target", "before", "after"]);
    assert.deepEqual(auditRows, audit.json.data.map((r: Record<string, unknown>) => [
      String(r.id), r.at, r.actor, r.action, r.target, r.before === undefined ? "" : JSON.stringify(r.before), r.after === undefined ? "" : JSON.stringify(r.after),
    ]));
  });
});

/** RFC 4180 read back: quoted fields with doubled quotes, CRLF rows (a parser of the test's own). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (text[i] === '"' && text[i + 1] === '"') (field += '"'), (i += 2);
        else if (text[i] === '"') { i++; break; }
        else field += text[i++];
      }
    } else if (text[i] === ",") (row.push(field), (field = ""), i++);
    else if (text.startsWith("\r\n", i)) (row.push(field), rows.push(row), (row = []), (field = ""), (i += 2));
    else field += text[i++];
  }
  assert.equal(row.length + field.length, 0, "the document ends with CRLF");
  return rows;
}
