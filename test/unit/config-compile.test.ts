// Compiling gateway.yaml: defaults, exact money, routing tiers, key handling, matchers,
// environment substitution, immutability, and the shipped default config.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { inspect } from "node:util";
import { fileURLToPath } from "node:url";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileSource, loadConfigFile, requestSchemaFile, toNano } from "../../src/config/index.js";
import { compileIpMatcher, compileNameMatcher } from "../../src/config/matchers.js";
import { parseDuration, parseSize } from "../../src/config/units.js";
import { minimalConfig } from "../helpers/minimal-config.js";

const sha = (s: string): string => createHash("sha256").update(s).digest("hex");

const minimal = minimalConfig;

function build(text: string, env: NodeJS.ProcessEnv = {}) {
  return compileSource(text, { path: "test.yaml", env, generation: 7 });
}

test("defaults fill every optional setting", () => {
  const { runtime, warnings } = build(minimal);
  assert.deepEqual(warnings, []);
  assert.deepEqual(runtime.server, {
    host: "127.0.0.1",
    port: 8080,
    trustProxy: false,
    maxBodyBytes: 32 * 1024 * 1024,
    upstreamTimeoutMs: 300_000,
    upstreamAttempts: 3,
    drainTimeoutMs: 30_000,
    headerTimeoutMs: 15_000,
    bodyTimeoutMs: 60_000,
    streamIdleTimeoutMs: 120_000,
    usageDrainTimeoutMs: 30_000,
    maxBodyMemoryBytes: 512 * 1024 * 1024,
    maxEventBytes: 16 * 1024 * 1024,
    workers: 1,
    realtimeMaxSessionMs: 30 * 60_000,
  });
  assert.equal(runtime.store, "sqlite:./data/gateway.db");
  assert.equal(runtime.metricsPath, "/metrics");
  assert.equal(runtime.generation, 7);
  assert.equal(runtime.sourceHash, sha(minimal));
  assert.equal(runtime.limits.requestRate, undefined);
  assert.equal(runtime.groups.get("default")?.multiplier, 1);
  const alice = runtime.users.get("alice");
  assert.equal(alice?.creditNano, 0n);
  assert.equal(alice?.active, true);
  const token = runtime.tokensByHash.get(sha("sk-one"));
  assert.equal(token?.active, true);
  assert.equal(token?.expiresAt, undefined);
  assert.equal(token?.allowIp, undefined);
  const channel = runtime.channels.get("c1");
  assert.equal(channel?.priority, 0);
  assert.equal(channel?.weight, 1);
  assert.equal(channel?.enabled, true);
  assert.equal(channel?.baseUrl.href, "https://api.openai.com/v1");
  assert.equal(runtime.models.get("m")?.endpoint, "chat");
});

test("explicit settings are parsed", () => {
  const { runtime } = build(
    minimal +
      "server: { listen: '[::1]:9090', trust_proxy: true, max_body: 512KiB, upstream_timeout: 1m, upstream_attempts: 5, drain_timeout: 250ms,\n" +
      "  header_timeout: 5s, body_timeout: 10s, stream_idle_timeout: 30s, usage_drain_timeout: 2s, max_body_memory: 64MiB,\n  max_event_size: 1MiB, realtime_max_session: 90s }\n" +
      "store: redis://localhost:6379/0\nmetrics: { path: /m }\nlimits:\n  request_rate: { max: 60, per: 1m }\n  total_requests: { max: 300, per: 5m }\n",
  );
  assert.deepEqual(runtime.server, { host: "::1", port: 9090, trustProxy: true, maxBodyBytes: 524288, upstreamTimeoutMs: 60_000, upstreamAttempts: 5, drainTimeoutMs: 250,
    headerTimeoutMs: 5000, bodyTimeoutMs: 10_000, streamIdleTimeoutMs: 30_000, usageDrainTimeoutMs: 2000, maxBodyMemoryBytes: 64 * 1024 * 1024,
    maxEventBytes: 1024 * 1024, workers: 1, realtimeMaxSessionMs: 90_000 });
  assert.equal(runtime.store, "redis://localhost:6379/0");
  assert.deepEqual(runtime.limits, { requestRate: { max: 60, perMs: 60_000 }, totalRequests: { max: 300, perMs: 300_000 } });
});

test("units: durations and sizes", () => {
  assert.equal(parseDuration("250ms"), 250);
  assert.equal(parseDuration("1h"), 3_600_000);
  assert.equal(parseDuration(1.5), 1500);
  assert.equal(parseSize("100kb"), 100_000);
  assert.equal(parseSize("1GiB"), 2 ** 30);
  assert.equal(parseSize("10MB"), 10_000_000);
  assert.throws(() => parseDuration("5 minutes"), /invalid duration "5 minutes"/);
  assert.throws(() => parseSize("32MeB"), /invalid size "32MeB"/);
});

test("money is exact in nano-units, ratios in ppm", () => {
  const { runtime } = build(
    minimal.replace("m: { price: { input: 1 } }", "m: { price: { input: 0.15, output: 0.6, cache_read_ratio: 0.1, cache_write_ratio: 1.25 } }") +
      "  s: { price: { input: 3, output: 15 } }\n  v: { endpoint: video, price: { per_second: 0.07 } }\n" +
      "  i: { endpoint: image, price: { per_image: 0.04, per_request: 0.000000001, per_1k_chars: 0.3 } }\n",
  );
  assert.deepEqual(runtime.models.get("m")?.price, { inputPer1M: 150_000_000n, outputPer1M: 600_000_000n, cacheReadRatioPpm: 100_000n, cacheWriteRatioPpm: 1_250_000n });
  assert.deepEqual(runtime.models.get("s")?.price, { inputPer1M: 3_000_000_000n, outputPer1M: 15_000_000_000n });
  assert.deepEqual(runtime.models.get("v")?.price, { perSecond: 70_000_000n });
  assert.deepEqual(runtime.models.get("i")?.price, { perImage: 40_000_000n, perRequest: 1n, per1kChars: 300_000_000n });
  // Float products would give 70000000.00000001 and 299999999.99999994; decimal text is exact.
  assert.equal(toNano(1e-9), 1n);
  assert.equal(toNano(2.5e-7), 250n);
  assert.equal(toNano(1e21), 10n ** 30n);
  assert.throws(() => toNano(0.1 + 0.2), /more than 9 decimal places/);
});

const routing = `
groups: { default: {}, vip: { multiplier: 0.5 } }
users: { alice: { credit: 12.5, groups: [default, vip] } }
tokens:
  - { name: t1, key: sk-one, user: alice, group: default }
channels:
  - { name: low, protocol: openai, base_url: "https://a.example", keys: [k], groups: [default], models: [m], priority: -1 }
  - { name: high-a, protocol: openai, base_url: "https://b.example", keys: [k], groups: [default, vip], models: [m, n], priority: 10, weight: 3 }
  - { name: mid, protocol: anthropic, base_url: "https://c.example", keys: [k], groups: [default], models: [m], priority: 5 }
  - { name: high-b, protocol: gemini, base_url: "https://d.example", keys: [k], groups: [default], models: [m], priority: 10, weight: 2 }
  - { name: off, protocol: openai, base_url: "https://e.example", keys: [k], groups: [default], models: [m], priority: 99, status: disabled }
  - { name: keyless, protocol: openai, base_url: "https://f.example", keys: ["\${NO_KEY:-}", ""], groups: [default], models: [m], priority: 99 }
models:
  m: { price: { input: 1 } }
  n: { price: { input: 1 } }
  orphan: { price: { input: 1 } }
`;

test("candidates: tiers by priority, descending, weights summed, disabled and keyless excluded", () => {
  const { runtime, warnings } = build(routing);
  const tiers = runtime.candidates.get("default")?.get("m") ?? [];
  assert.deepEqual(
    tiers.map((t) => [t.priority, t.channels.map((c) => c.name), t.totalWeight]),
    [
      [10, ["high-a", "high-b"], 5],
      [5, ["mid"], 1],
      [-1, ["low"], 1],
    ],
  );
  assert.strictEqual(tiers[0].channels[0], runtime.channels.get("high-a"), "tiers share the channel objects");
  assert.deepEqual(runtime.candidates.get("vip")?.get("m")?.map((t) => t.channels.map((c) => c.name)), [["high-a"]]);
  assert.equal(runtime.candidates.get("vip")?.has("orphan"), false, "only non-empty entries");
  assert.equal(runtime.channels.get("off")?.enabled, false);
  assert.equal(runtime.channels.get("keyless")?.enabled, false);
  assert.deepEqual(runtime.channels.get("keyless")?.keys, []);
  assert.ok(warnings.includes("channel keyless has no keys; it starts disabled"));
  assert.ok(warnings.some((w) => /model orphan is listed by no channel/.test(w)));
  assert.equal(runtime.users.get("alice")?.creditNano, 12_500_000_000n);
  assert.equal(runtime.groups.get("vip")?.multiplier, 0.5);
});

test("a token with an empty key is skipped with a warning; the plaintext key is not kept", () => {
  const source = minimal.replace(
    "tokens:\n",
    "tokens:\n  - { name: t2, key: '${T2_KEY:-}', user: alice, group: default }\n  - { name: t3, key_sha256: " + sha("sk-three").toUpperCase() + ", user: alice, group: default, status: disabled }\n",
  );
  const { runtime, warnings } = build(source);
  assert.equal(runtime.tokensByHash.size, 2);
  assert.ok(warnings.some((w) => w.startsWith("token t2 has an empty key; it is skipped")));
  const t3 = runtime.tokensByHash.get(sha("sk-three"));
  assert.equal(t3?.name, "t3");
  assert.equal(t3?.active, false);
  assert.equal(t3?.keyHash, sha("sk-three"));
  assert.doesNotMatch(inspect(runtime, { depth: 10 }), /sk-one/);
  const set = build(source, { T2_KEY: "sk-two" });
  assert.equal(set.runtime.tokensByHash.get(sha("sk-two"))?.name, "t2");
});

test("token fields: expiry, quota, group outside the user's groups warns", () => {
  const source = minimal
    .replace("groups: { default: {} }", "groups: { default: {}, other: {} }")
    .replace("user: alice, group: default }", "user: alice, group: other, expires: 2027-01-01T00:00:00Z, quota: 20.5, models: [m, 'claude-*', gpt-x] }");
  const { runtime, warnings } = build(source);
  const token = runtime.tokensByHash.get(sha("sk-one"));
  assert.equal(token?.expiresAt, Date.UTC(2027, 0, 1));
  assert.equal(token?.quotaNano, 20_500_000_000n);
  assert.ok(warnings.some((w) => /token t1 uses group other, which user alice may not use/.test(w)));
  assert.ok(warnings.some((w) => /token t1 allows model "gpt-x", which is not in the price list/.test(w)));
  assert.equal(token?.allowModel?.("claude-sonnet-4-5"), true);
  assert.equal(token?.allowModel?.("gpt-x"), true);
  assert.equal(token?.allowModel?.("gpt-4o"), false);
});

test("IP matcher: IPv4, IPv6, CIDR and IPv4-mapped clients", () => {
  const allow = compileIpMatcher(["203.0.113.0/24", "198.51.100.7", "2001:db8::/32", "::1"]);
  assert.equal(allow("203.0.113.5"), true);
  assert.equal(allow("203.0.114.5"), false);
  assert.equal(allow("198.51.100.7"), true);
  assert.equal(allow("198.51.100.8"), false);
  assert.equal(allow("::ffff:203.0.113.5"), true);
  assert.equal(allow("::FFFF:198.51.100.7"), true);
  assert.equal(allow("::ffff:198.51.100.8"), false);
  assert.equal(allow("2001:db8:1::5"), true);
  assert.equal(allow("2001:db9::5"), false);
  assert.equal(allow("::1"), true);
  assert.equal(allow("not-an-ip"), false);
});

test("model globs: * and ?, regex characters taken literally", () => {
  const allow = compileNameMatcher(["gpt-4o-mini", "claude-*", "gemini-2.?-flash", "a.b+c"]);
  assert.equal(allow("gpt-4o-mini"), true);
  assert.equal(allow("gpt-4o"), false);
  assert.equal(allow("claude-sonnet-4-5"), true);
  assert.equal(allow("claude-"), true);
  assert.equal(allow("xclaude-1"), false);
  assert.equal(allow("gemini-2.5-flash"), true);
  assert.equal(allow("gemini-2.55-flash"), false);
  assert.equal(allow("a.b+c"), true);
  assert.equal(allow("aXb+c"), false);
});

test("environment: ${VAR}, ${VAR:-default}, $${ escape, inside flow lists and quotes", () => {
  const source = minimal
    .replace("keys: [k]", () => 'keys: [${UP_A}, "${UP_B:-fallback}", ${UP_C:-}, "lit-$${NOT_A_VAR}"]')
    .replace("key: sk-one", 'key: "pre-${TOKEN}-post"');
  const { runtime } = build(source, { UP_A: "a-key", UP_C: "", TOKEN: "mid" });
  assert.deepEqual(runtime.channels.get("c1")?.keys, ["a-key", "fallback", "lit-${NOT_A_VAR}"]);
  assert.equal(runtime.tokensByHash.get(sha("pre-mid-post"))?.name, "t1");
  const empty = build(source, { UP_A: "a", UP_B: "", TOKEN: "x" });
  assert.deepEqual(empty.runtime.channels.get("c1")?.keys, ["a", "fallback", "lit-${NOT_A_VAR}"], ":- also replaces an empty value");
});

test("x- keys hold YAML anchors that entries merge in", () => {
  const source = minimal
    .replace("channels:\n", "x-openai: &openai { protocol: openai, groups: [default], models: [m] }\nchannels:\n")
    .replace("models:\n  m:", "  - { <<: *openai, name: c2, base_url: 'https://b.example', keys: [k2] }\nmodels:\n  m:");
  const { runtime } = build(source);
  assert.equal(runtime.channels.get("c2")?.protocol, "openai");
  assert.deepEqual([...(runtime.channels.get("c2")?.models ?? [])], ["m"]);
});

test("request_schema names a file in schemas/requests/ next to the config", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-schema-"));
  try {
    mkdirSync(join(dir, "schemas", "requests"), { recursive: true });
    writeFileSync(join(dir, "schemas", "requests", "video-family-c.json"), "{}");
    const path = join(dir, "gateway.yaml");
    writeFileSync(path, minimal + "  v: { endpoint: video, request_schema: video-family-c, price: { per_second: 0.07 } }\n");
    const { runtime } = await loadConfigFile(path, { env: {} });
    const model = runtime.models.get("v");
    assert.equal(model?.requestSchema, "video-family-c");
    assert.equal(requestSchemaFile(runtime.sourcePath, "video-family-c"), join(dir, "schemas", "requests", "video-family-c.json"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the runtime is deep-frozen", () => {
  const { runtime } = build(routing);
  assert.ok(Object.isFrozen(runtime));
  assert.ok(Object.isFrozen(runtime.server));
  assert.ok(Object.isFrozen(runtime.channels.get("high-a")));
  assert.ok(Object.isFrozen(runtime.channels.get("high-a")?.keys));
  assert.ok(Object.isFrozen(runtime.candidates.get("default")?.get("m")));
  assert.ok(Object.isFrozen(runtime.models.get("m")?.price));
  assert.throws(() => {
    (runtime as { generation: number }).generation = 1;
  }, TypeError);
});

test("the shipped gateway.yaml loads with no environment, with warnings", async () => {
  const path = fileURLToPath(new URL("../../gateway.yaml", import.meta.url));
  const { runtime, warnings } = await loadConfigFile(path, { env: {} });
  assert.deepEqual([runtime.server.host, runtime.server.port], ["127.0.0.1", 8080]);
  assert.equal(runtime.tokensByHash.size, 0);
  assert.ok(warnings.some((w) => /^token .* has an empty key/.test(w)));
  for (const name of ["openai", "anthropic", "gemini"]) {
    assert.ok(warnings.includes(`channel ${name} has no keys; it starts disabled`), name);
  }
  assert.deepEqual(runtime.models.get("gpt-4o-mini")?.price, { inputPer1M: 150_000_000n, outputPer1M: 600_000_000n, cacheReadRatioPpm: 500_000n });
  assert.equal(runtime.models.get("o4-mini")?.endpoint, "responses");
  assert.equal(runtime.models.get("text-embedding-3-small")?.endpoint, "embeddings");
  assert.deepEqual(runtime.limits, { requestRate: { max: 60, perMs: 60_000 }, totalRequests: { max: 300, perMs: 300_000 } });
  assert.equal(runtime.candidates.size, 0, "no channel has keys");

  const withKeys = await loadConfigFile(path, { env: { OPENAI_API_KEY: "sk-o", GATEWAY_TOKEN: "gw" } });
  assert.equal(withKeys.runtime.tokensByHash.size, 1);
  assert.deepEqual(withKeys.runtime.candidates.get("default")?.get("gpt-4o-mini")?.[0].channels.map((c) => c.name), ["openai"]);
});

test("routing.affinity_ttl: default one hour, a duration, 0 turns affinity off; a bad value names the key", () => {
  assert.equal(build(minimal).runtime.affinityTtlMs, 3_600_000);
  assert.equal(build(minimal + "routing: { affinity_ttl: 30m }\n").runtime.affinityTtlMs, 1_800_000);
  assert.equal(build(minimal + "routing: { affinity_ttl: 0 }\n").runtime.affinityTtlMs, 0);
  assert.throws(() => build(minimal + "routing: { affinity_ttl: soon }\n"), /routing\.affinity_ttl/);
});

test("console.customer_tokens: default false (customers only list their tokens), true when set; a stray key is named", () => {
  assert.deepEqual(build(minimal).runtime.console, { customerTokens: false });
  assert.deepEqual(build(minimal + "console: { customer_tokens: true }\n").runtime.console, { customerTokens: true });
  assert.deepEqual(build(minimal + "console: {}\n").runtime.console, { customerTokens: false });
  assert.throws(() => build(minimal + "console: { customer_tokens: yes please }\n"), /console\.customer_tokens/);
  assert.throws(() => build(minimal + "console: { tokens: true }\n"), /console\.tokens/);
});
