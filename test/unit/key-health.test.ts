// Key health in parts: what each provider's real error bodies mean for the key (refused, out
// of credit, a suspicion to confirm, or an ordinary answer, whatever their messages quote), the records in the keyed store (shared by every server
// on it, fresh for a changed key list, cooled down by time), the rotation that skips keys
// out, the recent figures, and the /metrics reading `gateway channels` relies on.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compileSource } from "../../src/config/index.js";
import { metricsUrlOf } from "../../src/cli/channels.js";
import { samplesOf } from "../../src/cli/metrics-scrape.js";
import { anthropicProvider } from "../../src/providers/anthropic/manifest.js";
import { geminiProvider } from "../../src/providers/gemini/manifest.js";
import { openaiProvider } from "../../src/providers/openai/manifest.js";
import { judgeKeyFault, type KeyFault, type ProviderSpec } from "../../src/providers/provider.js";
import { isOut, KeyHealth, keyFingerprint } from "../../src/routing/key-health.js";
import { KeyStats } from "../../src/routing/key-stats.js";
import { KeyRotation } from "../../src/routing/keys.js";
import type { Channel } from "../../src/runtime/types.js";
import { MemoryKeyedStore } from "../../src/state/memory-keyed.js";
import { eventually } from "../helpers/gateway.js";

/** What a provider makes of an answer: the fault its status and structured fields state;
 * "confirm <fault>" when only its message says so (a probe of the gateway's must confirm). */
function faultOf(provider: ProviderSpec, status: number, body: unknown): KeyFault | `confirm ${KeyFault}` | undefined {
  const verdict = judgeKeyFault(provider.keyFaults, status, typeof body === "string" ? body : JSON.stringify(body));
  return verdict === undefined ? undefined : verdict.confirm ? `confirm ${verdict.fault}` : verdict.fault;
}

const openaiError = (message: string, type: string, code: string | null) => ({ error: { message, type, param: null, code } });
const anthropicError = (type: string, message: string) => ({ type: "error", error: { type, message }, request_id: "req_011CbrFTcXhtiMzr3s6EocF7" });
const googleError = (code: number, message: string, status: string, details?: object[]) => ({ error: { code, message, status, details } });
const quotaViolation = (quotaId: string) => ({
  "@type": "type.googleapis.com/google.rpc.QuotaFailure",
  violations: [{ quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests", quotaId }],
});

describe("what the providers' error answers mean for the key", () => {
  test("OpenAI: 429 insufficient_quota (as code or, in older answers, type only) is out of credit; a rate limit is not", () => {
    const quota = "You exceeded your current quota, please check your plan and billing details.";
    assert.equal(faultOf(openaiProvider, 429, openaiError(quota, "insufficient_quota", "insufficient_quota")), "quota");
    assert.equal(faultOf(openaiProvider, 429, openaiError(quota, "insufficient_quota", null)), "quota");
    assert.equal(faultOf(openaiProvider, 429, openaiError("Rate limit reached for gpt-4o-mini", "requests", "rate_limit_exceeded")), undefined);
    assert.equal(faultOf(openaiProvider, 401, openaiError("Incorrect API key provided: sk-ab***", "invalid_request_error", "invalid_api_key")), "auth");
    assert.equal(faultOf(openaiProvider, 403, openaiError("Country, region, or territory not supported", "request_forbidden", "unsupported_country_region_territory")), "auth");
    assert.equal(faultOf(openaiProvider, 400, openaiError("Invalid 'messages[0].role'", "invalid_request_error", null)), undefined);
    assert.equal(faultOf(openaiProvider, 429, "not json"), undefined);
  });

  test("OpenAI: a 401 that blames the request's organization or project header leaves the key; an echoed field name is no code", () => {
    assert.equal(faultOf(openaiProvider, 401, openaiError("OpenAI-Organization header should match organization for API key", "invalid_request_error", "mismatched_organization")), undefined);
    assert.equal(faultOf(openaiProvider, 401, openaiError("OpenAI-Project header should match project for API key", "invalid_request_error", "mismatched_project")), undefined);
    // The field name lands in `message` and `param`, never in `code` or `type`.
    assert.equal(faultOf(openaiProvider, 400, { error: { message: "Unrecognized request argument supplied: insufficient_quota", type: "invalid_request_error", param: "insufficient_quota", code: "unknown_parameter" } }), undefined);
    assert.equal(faultOf(openaiProvider, 429, { error: { message: "insufficient_quota invalid_api_key", type: "requests", param: "insufficient_quota", code: "rate_limit_exceeded" } }), undefined);
  });

  test("Anthropic: 400 'credit balance is too low' and a disabled organization are suspicions to confirm (message only); other 400s are answers", () => {
    const credit = "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.";
    assert.equal(faultOf(anthropicProvider, 400, anthropicError("invalid_request_error", credit)), "confirm quota");
    assert.equal(faultOf(anthropicProvider, 400, anthropicError("invalid_request_error", "This organization has been disabled.")), "confirm auth");
    // The same words echoed as a field name: still only a suspicion, which the probe clears.
    assert.equal(faultOf(anthropicProvider, 400, anthropicError("invalid_request_error", "Your credit balance is too low: Extra inputs are not permitted")), "confirm quota");
    assert.ok(anthropicProvider.keyFaults.probe, "Anthropic has a probe to confirm with");
    assert.equal(faultOf(anthropicProvider, 402, anthropicError("billing_error", "There is an issue with your account's billing.")), "quota");
    assert.equal(faultOf(anthropicProvider, 401, anthropicError("invalid_request_error", "authentication_error")), undefined, "a 401 counts by its type, not its text");
    assert.equal(faultOf(anthropicProvider, 400, anthropicError("invalid_request_error", "max_tokens: Field required")), undefined);
    assert.equal(faultOf(anthropicProvider, 401, anthropicError("authentication_error", "invalid x-api-key")), "auth");
    assert.equal(faultOf(anthropicProvider, 403, anthropicError("permission_error", "Your API key does not have permission to use the specified resource.")), "auth");
    assert.equal(faultOf(anthropicProvider, 429, anthropicError("rate_limit_error", "This request would exceed the rate limit")), undefined);
  });

  test("Gemini: 400 API_KEY_INVALID refused; 429 RESOURCE_EXHAUSTED out of quota only on a per-day quota", () => {
    const invalid = googleError(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT", [
      { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com" },
    ]);
    assert.equal(faultOf(geminiProvider, 400, invalid), "auth");
    assert.equal(faultOf(geminiProvider, 400, googleError(400, "Invalid JSON payload received.", "INVALID_ARGUMENT")), undefined);
    const echoed = 'Invalid JSON payload received. Unknown name "API_KEY_INVALID": Cannot find field.';
    assert.equal(faultOf(geminiProvider, 400, googleError(400, echoed, "INVALID_ARGUMENT", [
      { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ description: echoed }] },
    ])), undefined, "the reason must be an ErrorInfo's, not a quoted field name");
    assert.equal(faultOf(geminiProvider, 403, googleError(403, "Permission denied: Consumer 'api_key:x' has been suspended.", "PERMISSION_DENIED", [
      { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "CONSUMER_SUSPENDED", domain: "googleapis.com" },
    ])), "auth");
    assert.equal(faultOf(geminiProvider, 403, googleError(403, "You do not have permission to access the File abc or it may not exist.", "PERMISSION_DENIED")), undefined,
      "a 403 on a file the request names is the request's");
    const exceeded = "You exceeded your current quota, please check your plan and billing details.";
    assert.equal(faultOf(geminiProvider, 429, googleError(429, exceeded, "RESOURCE_EXHAUSTED", [
      quotaViolation("GenerateRequestsPerDayPerProjectPerModel-FreeTier"), quotaViolation("GenerateRequestsPerMinutePerProjectPerModel-FreeTier"),
    ])), "quota");
    assert.equal(faultOf(geminiProvider, 429, googleError(429, exceeded, "RESOURCE_EXHAUSTED", [
      quotaViolation("GenerateRequestsPerMinutePerProjectPerModel-FreeTier"),
    ])), undefined, "a per-minute quota is a rate limit");
    assert.equal(faultOf(geminiProvider, 429, googleError(429, "Resource has been exhausted (e.g. check quota).", "RESOURCE_EXHAUSTED")), undefined);
  });
});

function channelOf(yamlKeys: string[], extra = ""): Channel {
  const yaml = `
server: { listen: "127.0.0.1:0" }
groups: { default: { multiplier: 1 } }
users: { alice: { credit: 1 } }
tokens: [{ name: t, key: sk-gw-unit-0123456789, user: alice, group: default }]
models: { m: { endpoint: chat, price: { input: 1, output: 1 } } }
channels:
  - { name: oa, protocol: openai, base_url: "http://127.0.0.1:1", keys: ${JSON.stringify(yamlKeys)}, groups: [default], models: [m]${extra} }
`;
  return compileSource(yaml, { path: "unit.yaml", env: {}, generation: 1 }).runtime.channels.get("oa")!;
}

describe("key health records", () => {
  test("key_cooldown defaults to 10m (auth) and 1h (quota), and takes durations", () => {
    assert.deepEqual(channelOf(["k1"]).keyCooldownMs, { auth: 600_000, quota: 3_600_000 });
    assert.deepEqual(channelOf(["k1"], ", key_cooldown: { auth: 250ms, quota: 2m }").keyCooldownMs, { auth: 250, quota: 120_000 });
  });

  test("a fingerprint is short, stable, and none of the key", () => {
    const key = "sk-proj-SECRET-abcdef0123456789";
    const fp = keyFingerprint(key);
    assert.match(fp, /^[0-9a-f]{8}$/);
    assert.equal(keyFingerprint(key), fp);
    assert.notEqual(keyFingerprint(key + "x"), fp);
    assert.ok(!key.includes(fp.slice(0, 4)) && !key.includes(fp.slice(4)));
  });

  test("a key marked out is out for its reason's cooldown, then in again; others stay in", async () => {
    const keyed = new MemoryKeyedStore();
    const health = new KeyHealth(keyed);
    const channel = channelOf(["k1", "k2", "k3"]);
    const t = 1_000_000;
    await health.markOut(channel, 1, "auth", t);
    await health.markOut(channel, 2, "quota", t);
    const outs = await health.view(channel, t);
    assert.equal(isOut(outs[0], t), false);
    assert.deepEqual(outs[1], { reason: "auth", until: t + 600_000 });
    assert.deepEqual(outs[2], { reason: "quota", until: t + 3_600_000 });
    assert.equal(isOut(outs[1], t + 599_999), true);
    assert.equal(isOut(outs[1], t + 600_000), false, "back after the auth cooldown");
    assert.equal(isOut(outs[2], t + 600_000), true, "still out of credit");
    const states = await health.states(channel, t);
    assert.deepEqual(states.map((s) => s.out?.reason), [undefined, "auth", "quota"]);
    assert.deepEqual(states.map((s) => s.fingerprint), ["k1", "k2", "k3"].map(keyFingerprint));
    for (const [key, value] of await listed(keyed)) {
      for (const secret of ["k1", "k2", "k3"]) assert.ok(!`${key}${value}`.includes(`${secret}"`) && !key.endsWith(secret), "no record holds a key");
    }
  });

  test("the record expires with the cooldown in the store itself", async () => {
    const keyed = new MemoryKeyedStore();
    const health = new KeyHealth(keyed);
    const channel = channelOf(["k1", "k2"], ", key_cooldown: { auth: 100ms }");
    await health.markOut(channel, 0, "auth");
    assert.equal((await health.states(channel)).filter((s) => s.out).length, 1);
    await eventually(async () => (await listed(keyed)).length === 0, 3000, "the record to expire");
    assert.equal((await health.states(channel)).filter((s) => s.out).length, 0);
  });

  test("a changed key list starts every key of the channel afresh", async () => {
    const keyed = new MemoryKeyedStore();
    const health = new KeyHealth(keyed);
    await health.markOut(channelOf(["k1", "k2"]), 0, "auth");
    assert.equal(isOut((await health.view(channelOf(["k1", "k2"])))[0], Date.now()), true, "the same keys after a reload: still out");
    const changed = channelOf(["k1", "k2", "k3"]);
    assert.deepEqual((await health.view(changed)).map((o) => isOut(o, Date.now())), [false, false, false]);
  });

  test("on a shared store, another server sees a key out once its view is older than freshMs", async () => {
    const keyed = new MemoryKeyedStore();
    const a = new KeyHealth(keyed, { freshMs: 1000 });
    const b = new KeyHealth(keyed, { freshMs: 1000 });
    const channel = channelOf(["k1", "k2"]);
    const t = Date.now();
    assert.deepEqual(await a.view(channel, t), [undefined, undefined], "a reads the store the first time");
    assert.deepEqual(await b.view(channel, t), [undefined, undefined]);
    await a.markOut(channel, 0, "quota", t);
    const seenByA = a.view(channel, t);
    assert.ok(!(seenByA instanceof Promise) && isOut(seenByA[0], t), "a knows at once, from its own write");
    assert.ok(!(b.view(channel, t + 999) instanceof Promise), "b answers from its view: no read per request");
    assert.equal((b.view(channel, t + 999) as readonly unknown[])[0], undefined, "within freshMs b routes by what it read");
    b.view(channel, t + 1000); // stale: refreshed in the background, the old view serves meanwhile
    await eventually(() => isOut((b.view(channel, t + 1001) as readonly never[])[0], t + 1001), 2000, "b to refresh");
  });
});

async function listed(keyed: MemoryKeyedStore): Promise<[string, string][]> {
  const found: [string, string][] = [];
  for await (const [k, v] of keyed.entries("")) found.push([k, v]);
  return found;
}

describe("key rotation and recent figures", () => {
  test("pick rotates over the usable keys only, and says when none is", () => {
    const channel = channelOf(["k1", "k2", "k3"]);
    const rotation = new KeyRotation();
    const all = () => true;
    assert.deepEqual([0, 1, 2, 3].map(() => rotation.pick(channel, all)), [0, 1, 2, 0]);
    const notMiddle = (i: number) => i !== 1;
    assert.deepEqual([0, 1, 2].map(() => rotation.pick(channel, notMiddle)), [2, 0, 2]);
    assert.equal(rotation.pick(channel, () => false), undefined);
    const one = channelOf(["k1"]);
    assert.equal(rotation.pick(one, all), 0);
    assert.equal(rotation.pick(one, () => false), undefined);
  });

  test("recent figures cover the last 5 minutes", () => {
    const stats = new KeyStats();
    const t = 10 * 60_000;
    stats.record("oa", "aaaa1111", 0.2, false, t);
    stats.record("oa", "aaaa1111", 0.4, true, t + 1000);
    stats.record("oa", "bbbb2222", 1, true, t - 5 * 60_000);
    assert.deepEqual(stats.recent(t + 2000), [{ channel: "oa", key: "aaaa1111", attempts: 2, failures: 1, seconds: 0.6000000000000001 }]);
    assert.deepEqual(stats.recent(t + 5 * 60_000), [], "older than the window: forgotten");
  });
});

describe("what `gateway channels` reads", () => {
  test("samples of the metrics asked for, with their labels", () => {
    const text = [
      "# HELP gateway_channel_key_up x",
      "# TYPE gateway_channel_key_up gauge",
      'gateway_channel_key_up{channel="oa",key="aaaa1111",reason="none"} 1',
      'gateway_channel_key_up{channel="o\\"a",key="bbbb2222",reason="auth"} 0',
      'gateway_channel_key_recent_seconds{channel="oa",key="aaaa1111"} 0.25',
      'gateway_requests_total{protocol="chat"} 3',
    ].join("\n");
    const found = samplesOf(text, ["gateway_channel_key_up", "gateway_channel_key_recent_seconds"]);
    assert.deepEqual(found.get("gateway_channel_key_up"), [
      { labels: { channel: "oa", key: "aaaa1111", reason: "none" }, value: 1 },
      { labels: { channel: 'o"a', key: "bbbb2222", reason: "auth" }, value: 0 },
    ]);
    assert.deepEqual(found.get("gateway_channel_key_recent_seconds"), [{ labels: { channel: "oa", key: "aaaa1111" }, value: 0.25 }]);
  });

  test("the metrics URL is metrics.listen's, else server.listen's, on a reachable host", () => {
    const runtimeOf = (extra: string) => compileSource(`
server: { listen: "0.0.0.0:8080" }
${extra}
groups: { default: { multiplier: 1 } }
users: { alice: { credit: 1 } }
tokens: [{ name: t, key: sk-gw-unit-0123456789, user: alice, group: default }]
models: {}
channels: []
`, { path: "unit.yaml", env: {}, generation: 1 }).runtime;
    assert.equal(metricsUrlOf(runtimeOf("")), "http://127.0.0.1:8080/metrics");
    assert.equal(metricsUrlOf(runtimeOf('metrics: { listen: "127.0.0.1:9464", path: /m }')), "http://127.0.0.1:9464/m");
  });
});
