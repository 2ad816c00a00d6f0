// gateway.yaml's price keys compile to exact integers and price requests as providers
// charge them: components, tiers by input size, variants by what the request asked,
// service tiers, a channel's cost to the operator, and groups that route cheapest first.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSource, ConfigError } from "../../src/config/index.js";
import { operatorCost, priceUsage } from "../../src/billing/cost.js";
import { planAttempts } from "../../src/routing/plan.js";
import type { Usage } from "../../src/protocols/usage.js";

const build = (text: string) => compileSource(text, { path: "test.yaml", env: {}, generation: 1 });

const head = `
groups: { default: { multiplier: 0.5 }, thrifty: { strategy: cheapest } }
users: { alice: { groups: [default, thrifty] } }
tokens:
  - { name: t1, key: sk-one, user: alice, group: default }
`;

const usage = (u: Partial<Usage>): Usage => ({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0, ...u });

test("every price key compiles to an exact integer: amounts in nano, ratios in ppm", () => {
  const { runtime } = build(`${head}
channels:
  - { name: c1, protocol: openai, base_url: "https://api.openai.com", keys: [k], groups: [default], models: [rt] }
models:
  rt:
    endpoint: realtime
    price:
      input: 4
      output: 16
      cache_read_ratio: 0.1
      cache_write_ratio: 1.25
      cache_write_1h_ratio: 2
      cache_read: 0.4
      cache_write: 5
      cache_write_1h: 8
      audio_input: 32
      audio_cache_read: 0.4
      audio_output: 64
      image_input: 5
      image_output: 40
      reasoning: 12
      per_request: 0.001
      tool_calls: { web_search: 10 }
`);
  assert.deepEqual(runtime.models.get("rt")!.price, {
    inputPer1M: 4_000_000_000n, outputPer1M: 16_000_000_000n, cacheReadPer1M: 400_000_000n, cacheWritePer1M: 5_000_000_000n,
    cacheWrite1hPer1M: 8_000_000_000n, audioInputPer1M: 32_000_000_000n, audioCacheReadPer1M: 400_000_000n,
    audioOutputPer1M: 64_000_000_000n, imageInputPer1M: 5_000_000_000n, imageOutputPer1M: 40_000_000_000n,
    reasoningPer1M: 12_000_000_000n, perRequest: 1_000_000n,
    cacheReadRatioPpm: 100_000n, cacheWriteRatioPpm: 1_250_000n, cacheWrite1hRatioPpm: 2_000_000n,
    toolCallsPer1k: { web_search: 10_000_000_000n },
  });
});

test("a long-context tier bills the whole request at the tier its input exceeds; ratios follow the tier's input", () => {
  const { runtime } = build(`${head}
channels:
  - { name: c1, protocol: anthropic, base_url: "https://api.anthropic.com", keys: [k], groups: [default], models: [sonnet] }
models:
  sonnet:
    price:
      input: 3
      output: 15
      cache_read_ratio: 0.1
      cache_write_ratio: 1.25
      cache_write_1h_ratio: 2
      tiers:
        - { above_input_tokens: 200000, input: 6, output: 22.5 }
`);
  const price = runtime.models.get("sonnet")!.price;
  // At the threshold: base prices. 150,000 + 50,000 cached = 200,000, not above it.
  const base = priceUsage(usage({ input: 150_000, cacheRead: 50_000, output: 1000 }), price, 1_000_000n);
  // 150,000 × 3 + 50,000 × 0.3 + 1000 × 15 (per 1M) = 0.45 + 0.015 + 0.015 = 0.48
  assert.equal(base.costNano, 480_000_000n);
  assert.equal(base.tierAbove, undefined);
  // One token more (a 1-hour cache write counts as input): every token at the tier.
  const long = priceUsage(usage({ input: 150_000, cacheRead: 50_000, cacheWrite: 1, cacheWrite1h: 1, output: 1000 }), price, 1_000_000n);
  // 150,000 × 6 + 50,000 × 0.6 + 1 × 12 + 1000 × 22.5 (per 1M) = 0.9 + 0.03 + 0.000012 + 0.0225
  assert.equal(long.costNano, 952_512_000n);
  assert.equal(long.tierAbove, 200_000);
  assert.deepEqual(long.lines.map((l) => l.component), ["input", "cache_read", "cache_write_1h", "output"]);
});

test("service tiers multiply the price by the tier the answer names, else the one the request asked", () => {
  const { runtime } = build(`${head}
channels:
  - { name: c1, protocol: openai, base_url: "https://api.openai.com", keys: [k], groups: [default], models: [gpt-5] }
models:
  gpt-5: { price: { input: 1.25, output: 10, service_tiers: { flex: 0.5, priority: 2 } } }
`);
  const price = runtime.models.get("gpt-5")!.price;
  const used = usage({ input: 1_000_000, output: 100_000 }); // 1.25 + 1 = 2.25
  assert.equal(priceUsage(used, price, 1_000_000n).costNano, 2_250_000_000n);
  assert.equal(priceUsage({ ...used, serviceTier: "flex" }, price, 1_000_000n).costNano, 1_125_000_000n);
  assert.equal(priceUsage({ ...used, serviceTier: "priority" }, price, 500_000n).costNano, 2_250_000_000n);
  // The answer's word wins over the request's; an unknown tier is the list price.
  assert.equal(priceUsage({ ...used, serviceTier: "default" }, price, 1_000_000n, { variant: { service_tier: "flex" } }).costNano, 2_250_000_000n);
  assert.equal(priceUsage(used, price, 1_000_000n, { variant: { service_tier: "flex" } }).costNano, 1_125_000_000n);
});

test("variants choose the price by the request's size and quality; the first match wins", () => {
  const { runtime } = build(`${head}
channels:
  - { name: c1, protocol: openai, base_url: "https://api.openai.com", keys: [k], groups: [default], models: [img] }
models:
  img:
    endpoint: image
    price:
      per_image: 0.04
      variants:
        - { when: { size: "1024x1024", quality: high }, per_image: 0.167 }
        - { when: { quality: high }, per_image: 0.25 }
`);
  const price = runtime.models.get("img")!.price;
  const none = usage({});
  assert.equal(priceUsage(none, price, 1_000_000n, { images: 2 }).costNano, 80_000_000n);
  assert.equal(priceUsage(none, price, 1_000_000n, { images: 2, variant: { size: "1024x1024", quality: "high" } }).costNano, 334_000_000n);
  assert.equal(priceUsage(none, price, 1_000_000n, { images: 1, variant: { size: "1536x1024", quality: "high" } }).costNano, 250_000_000n);
  assert.deepEqual(priceUsage(none, price, 1_000_000n, { images: 1, variant: { size: "1024x1024", quality: "high" } }).variant, { size: "1024x1024", quality: "high" });
});

test("a component the price does not name is billed at its closest base price and reported as a fallback", () => {
  const { runtime } = build(`${head}
channels:
  - { name: c1, protocol: openai, base_url: "https://api.openai.com", keys: [k], groups: [default], models: [m] }
models:
  m: { price: { input: 2, output: 8, cache_read_ratio: 0.5 } }
`);
  const price = runtime.models.get("m")!.price;
  const priced = priceUsage(usage({ input: 1000, audioInput: 400, cacheRead: 100, audioCacheRead: 100, output: 500, audioOutput: 200, reasoning: 100 }), price, 1_000_000n);
  // text in 600 × 2 + audio in 400 × 2 + cached audio 100 × 1 + reasoning 100 × 8 + text out 200 × 8 + audio out 200 × 8
  // = 1200 + 800 + 100 + 800 + 1600 + 1600 = 6100 per 1M → 6100 × 1000 nano = 6,100,000
  assert.equal(priced.costNano, 6_100_000n);
  assert.deepEqual(priced.fallbacks, ["audio_input", "audio_cache_read", "audio_output"]);
});

test("a channel's cost: its own price for a model, else the list price, × its multiplier; no group multiplier", () => {
  const { runtime } = build(`${head}
channels:
  - name: c1
    protocol: openai
    base_url: "https://api.openai.com"
    keys: [k]
    groups: [default]
    models: [a, b]
    cost: { multiplier: 0.9, prices: { b: { input: 1, output: 2 } } }
models:
  a: { price: { input: 10, output: 20 } }
  b: { price: { input: 10, output: 20 } }
`);
  const channel = runtime.channels.get("c1")!;
  const used = usage({ input: 1_000_000, output: 1_000_000 });
  assert.equal(operatorCost(used, runtime.models.get("a")!.price, "a", channel.cost), 27_000_000_000n);
  assert.equal(operatorCost(used, runtime.models.get("b")!.price, "b", channel.cost), 2_700_000_000n);
  assert.equal(operatorCost(used, runtime.models.get("a")!.price, "a", undefined), 30_000_000_000n);
});

test("strategy: cheapest tries channels of equal priority by their cost, weighted among equals; priority still comes first", () => {
  const { runtime } = build(`${head}
channels:
  - { name: dear, protocol: openai, base_url: "https://a.example", keys: [k], groups: [default, thrifty], models: [m] }
  - { name: cheap, protocol: openai, base_url: "https://b.example", keys: [k], groups: [default, thrifty], models: [m], cost: { multiplier: 0.5 } }
  - { name: mid-1, protocol: openai, base_url: "https://c.example", keys: [k], groups: [default, thrifty], models: [m], cost: { multiplier: 0.8 } }
  - { name: mid-2, protocol: openai, base_url: "https://d.example", keys: [k], groups: [default, thrifty], models: [m], cost: { multiplier: 0.8 } }
  - { name: first, protocol: openai, base_url: "https://e.example", keys: [k], groups: [thrifty], models: [m], priority: 1, cost: { multiplier: 2 } }
models:
  m: { price: { input: 1, output: 1 } }
`);
  const thrifty = runtime.candidates.get("thrifty")!.get("m")!;
  assert.deepEqual(thrifty.map((t) => t.channels.map((c) => c.name)), [["first"], ["cheap"], ["mid-1", "mid-2"], ["dear"]]);
  assert.deepEqual(thrifty.map((t) => t.priority), [1, 0, 0, 0]);
  for (const draw of [0, 0.99]) {
    const plan = planAttempts(thrifty, 10, () => true, () => draw).map((c) => c.name);
    assert.deepEqual([plan[0], plan[1], plan[4]], ["first", "cheap", "dear"]);
    assert.deepEqual(new Set(plan.slice(2, 4)), new Set(["mid-1", "mid-2"]));
  }
  // The weighted group keeps one tier per priority.
  assert.deepEqual(runtime.candidates.get("default")!.get("m")!.map((t) => t.channels.length), [4]);
});

test("bad prices are refused with their path: inexact amounts in tiers and variants, shared thresholds, a cost for a model the channel does not serve", () => {
  const text = `${head}
channels:
  - { name: c1, protocol: openai, base_url: "https://api.openai.com", keys: [k], groups: [default], models: [m], cost: { prices: { other: { input: 1 } } } }
models:
  m:
    price:
      input: 1
      service_tiers: { flex: 0.1234567 }
      tiers:
        - { above_input_tokens: 1000, input: 0.0000000001 }
        - { above_input_tokens: 1000, input: 2 }
      variants:
        - { when: { size: "1024x1024" }, tool_calls: { web_search: 0.0000000001 } }
  other: { price: { input: 1 } }
`;
  assert.throws(() => build(text), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    const found = err.issues.map((i) => `${i.path}: ${i.message}`).join("\n");
    for (const want of [
      /models\.m\.price\.service_tiers\.flex: ratio 0\.1234567 has more than 6 decimal places/,
      /models\.m\.price\.tiers\[0\]\.input: amount 1e-10 has more than 9 decimal places/,
      /models\.m\.price\.tiers\[1\]\.above_input_tokens: same threshold as tiers\[0\]/,
      /models\.m\.price\.variants\[0\]\.tool_calls\.web_search: amount 1e-10 has more than 9 decimal places/,
      /channels\[0\]\.cost\.prices\.other: "other" is not one of this channel's models/,
    ]) assert.match(found, want);
    return true;
  });
});

test("a reservation's worst case puts input and output in their dearest components, and only where one is dearer", async () => {
  const { worstCase } = await import("../../src/billing/cost.js");
  const text = usage({ input: 1000, output: 500 });
  // Text alone, or audio priced as text: nothing moves (and nothing is warned as a fallback).
  assert.equal(worstCase(text, { inputPer1M: 4_000_000_000n, outputPer1M: 16_000_000_000n }), text);
  assert.equal(worstCase(text, { inputPer1M: 4_000_000_000n, outputPer1M: 16_000_000_000n, audioOutputPer1M: 16_000_000_000n }), text);
  const audio = { inputPer1M: 4_000_000_000n, outputPer1M: 16_000_000_000n, audioInputPer1M: 32_000_000_000n, audioOutputPer1M: 64_000_000_000n, imageInputPer1M: 5_000_000_000n };
  const worst = worstCase(text, audio);
  assert.deepEqual(worst, { ...text, audioInput: 1000, audioOutput: 500 });
  // 1000 × 32 + 500 × 64 = 64,000 per 1M, against 1000 × 4 + 500 × 16 = 12,000 as text.
  assert.equal(priceUsage(worst, audio, 1_000_000n).costNano, 64_000_000n);
  assert.deepEqual(worstCase(text, { inputPer1M: 1n, outputPer1M: 2n, reasoningPer1M: 3n, imageOutputPer1M: 4n, imageInputPer1M: 1n }),
    { ...text, imageOutput: 500 });
});
