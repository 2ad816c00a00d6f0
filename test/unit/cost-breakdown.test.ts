// A cost anyone can check: the breakdown a usage entry keeps reproduces its total exactly,
// from the text alone, for any usage and any price (a seeded property test), and the
// lines' exact subtotals add up to it before the one rounding.

import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeBreakdown, encodeBreakdown, subtotalText, totalOf } from "../../src/billing/breakdown.js";
import { priceUsage } from "../../src/billing/cost.js";
import type { Units, Usage } from "../../src/protocols/usage.js";
import type { Price } from "../../src/runtime/types.js";

/** mulberry32: a small seeded generator, so a failure names the seed that reproduces it. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomCase(random: () => number) {
  const int = (max: number): number => Math.floor(random() * (max + 1));
  const maybe = <T>(value: () => T): T | undefined => (random() < 0.5 ? value() : undefined);
  const nano = (): bigint => BigInt(int(100_000)) * BigInt(10 ** int(6)) + BigInt(int(999));
  const ppm = (): bigint => BigInt(int(3_000_000));
  const amounts = (): Price => {
    const p: Record<string, unknown> = {
      inputPer1M: maybe(nano), outputPer1M: maybe(nano), cacheReadRatioPpm: maybe(ppm), cacheWriteRatioPpm: maybe(ppm),
      cacheWrite1hRatioPpm: maybe(ppm), cacheReadPer1M: maybe(nano), cacheWritePer1M: maybe(nano), cacheWrite1hPer1M: maybe(nano),
      audioInputPer1M: maybe(nano), audioCacheReadPer1M: maybe(nano), audioOutputPer1M: maybe(nano), imageInputPer1M: maybe(nano),
      imageOutputPer1M: maybe(nano), reasoningPer1M: maybe(nano), perRequest: maybe(nano), perSecond: maybe(nano),
      perImage: maybe(nano), per1kChars: maybe(nano),
      toolCallsPer1k: maybe(() => ({ web_search: nano(), web_fetch: maybe(nano) })),
    };
    for (const k of Object.keys(p)) if (p[k] === undefined) delete p[k];
    return p as Price;
  };
  const price: Price = {
    ...amounts(),
    ...(random() < 0.3 && { tiers: [{ aboveInputTokens: 500_000, price: amounts() }, { aboveInputTokens: 200_000, price: amounts() }] }),
    ...(random() < 0.3 && { serviceTiersPpm: { flex: 500_000n, priority: ppm() } }),
    ...(random() < 0.3 && { variants: [{ when: { size: "1024x1024", quality: "high" }, price: amounts() }] }),
  };
  const input = int(800_000);
  const cacheRead = int(300_000);
  const cacheWrite = int(100_000);
  const output = int(200_000);
  const usage: Usage = {
    input, cacheRead, cacheWrite, output, reasoning: int(output),
    audioInput: int(input), imageInput: int(input), audioCacheRead: int(cacheRead), cacheWrite1h: int(cacheWrite),
    audioOutput: int(output), imageOutput: int(output),
    ...(random() < 0.3 && { serviceTier: random() < 0.5 ? "flex" : "priority" }),
    ...(random() < 0.3 && { toolCalls: { web_search: int(20), web_fetch: int(5) } }),
  };
  const units: Units = {
    requests: maybe(() => int(3)), images: maybe(() => int(8)), milliseconds: maybe(() => int(600_000)), characters: maybe(() => int(50_000)),
    ...(random() < 0.3 && { variant: { size: "1024x1024", quality: "high" } }),
  };
  const multiplierPpm = BigInt(int(5_000_000));
  return { usage, price, units, multiplierPpm };
}

/** An exact decimal text as a numerator over 10^places. */
function scaled(text: string, places: number): bigint {
  const [int, frac = ""] = text.split(".");
  return BigInt(int + frac.padEnd(places, "0"));
}

test("property: the total is reproduced from the breakdown text alone, for 5,000 random usages and prices", () => {
  for (let seed = 1; seed <= 5000; seed++) {
    const { usage, price, units, multiplierPpm } = randomCase(generator(seed));
    const priced = priceUsage(usage, price, multiplierPpm, units);
    const text = encodeBreakdown(priced);
    const read = decodeBreakdown(text);
    assert.equal(totalOf(read), priced.costNano, `seed ${seed}: ${text}`);
    // The exact subtotals (currency, 33 places) sum to the total before its one rounding.
    let sum = 0n;
    for (const line of read.lines) sum += scaled(subtotalText(line, read), 33);
    const unit = 10n ** 24n; // 10^33 currency = 10^24 nano
    assert.equal((sum + unit / 2n) / unit, priced.costNano, `seed ${seed}: subtotals of ${text}`);
  }
});

test("property: every token of a usage is in exactly one line (quantities add up to the totals)", () => {
  for (let seed = 1; seed <= 2000; seed++) {
    const { usage, units, multiplierPpm } = randomCase(generator(seed));
    // Every component priced (distinctly), so no line is left out for a zero price.
    const price: Price = {
      inputPer1M: 1n, outputPer1M: 2n, cacheReadPer1M: 3n, cacheWritePer1M: 4n, cacheWrite1hPer1M: 5n, audioInputPer1M: 6n,
      audioCacheReadPer1M: 7n, imageInputPer1M: 8n, audioOutputPer1M: 9n, imageOutputPer1M: 10n, reasoningPer1M: 11n,
    };
    const lines = priceUsage(usage, price, multiplierPpm || 1n, units).lines;
    const sum = (...names: string[]): number => lines.filter((l) => names.includes(l.component)).reduce((n, l) => n + l.quantity, 0);
    assert.equal(sum("input", "audio_input", "image_input"), usage.input, `seed ${seed}: input`);
    assert.equal(sum("cache_read", "audio_cache_read"), usage.cacheRead, `seed ${seed}: cache reads`);
    assert.equal(sum("cache_write", "cache_write_1h"), usage.cacheWrite, `seed ${seed}: cache writes`);
    assert.equal(sum("output", "reasoning", "audio_output", "image_output"), usage.output, `seed ${seed}: output`);
  }
});

test("the breakdown text is readable and exact: prices per 1M, per 1k and per unit, the multiplier, the tiers that applied", () => {
  const price: Price = {
    inputPer1M: 3_000_000_000n, outputPer1M: 15_000_000_000n, cacheReadRatioPpm: 100_000n, perRequest: 1_000_000n,
    toolCallsPer1k: { web_search: 10_000_000_000n }, serviceTiersPpm: { flex: 500_000n },
  };
  const usage: Usage = { input: 1200, cacheRead: 500, cacheWrite: 0, output: 300, reasoning: 0, toolCalls: { web_search: 2 }, serviceTier: "flex" };
  const priced = priceUsage(usage, price, 700_000n);
  const text = encodeBreakdown(priced);
  assert.equal(text, "input=1200@3/1M cache_read=500@0.3/1M output=300@15/1M requests=1@0.001/1 web_search=2@10/1k multiplier=0.7 service_tier=flex@0.5");
  // (1200 × 3 + 500 × 0.3 + 300 × 15) / 1M + 0.001 + 2 × 10 / 1k = 0.00825 + 0.001 + 0.02 = 0.02925; × 0.7 × 0.5
  assert.equal(priced.costNano, 10_237_500n);
  assert.equal(totalOf(decodeBreakdown(text)), 10_237_500n);
});

test("a breakdown that is not one is refused with the part it cannot read", () => {
  assert.throws(() => decodeBreakdown("input=12@x/1M multiplier=1"), /not quantity@price\/per/);
  assert.throws(() => decodeBreakdown("input=12@3/1M"), /no multiplier/);
  assert.throws(() => decodeBreakdown("multiplier=0.1234567"), /at most 6 places/);
});
