import assert from "node:assert/strict";
import { test } from "node:test";
import { costOf, formatNano } from "../../src/billing/cost.js";
import {
  CUT_OUTPUT_TOKENS_PER_SECOND, IMAGE_RESERVE_TOKENS, TOOLS_RESERVE_TOKENS, cutAnswerUsage, fallbackUsage, requestedAnswers,
  requestedMaxTokens, reserveInputTokens, reserveUsage,
} from "../../src/billing/estimate.js";
import { toNano, toPpm } from "../../src/config/money.js";
import type { Usage } from "../../src/protocols/usage.js";
import type { Price } from "../../src/runtime/types.js";

const usage = (u: Partial<Usage>): Usage => ({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0, ...u });
const price = (p: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number; perRequest?: number;
  perImage?: number; perSecond?: number; per1kChars?: number }): Price => ({
  inputPer1M: p.input === undefined ? undefined : toNano(p.input),
  outputPer1M: p.output === undefined ? undefined : toNano(p.output),
  cacheReadRatioPpm: p.cacheRead === undefined ? undefined : toPpm(p.cacheRead),
  cacheWriteRatioPpm: p.cacheWrite === undefined ? undefined : toPpm(p.cacheWrite),
  perRequest: p.perRequest === undefined ? undefined : toNano(p.perRequest),
  perImage: p.perImage === undefined ? undefined : toNano(p.perImage),
  perSecond: p.perSecond === undefined ? undefined : toNano(p.perSecond),
  per1kChars: p.per1kChars === undefined ? undefined : toNano(p.per1kChars),
});
const ONE = 1_000_000n; // multiplier 1.0 in ppm
const DEFAULT_GROUP = toPpm(0.7);

// Each row: usage, price, multiplier, expected cost in nano-units, worked out by hand.
const table: { name: string; usage: Usage; price: Price; mult: bigint; units?: object; nano: bigint }[] = [
  { name: "1M input at 0.15", usage: usage({ input: 1_000_000 }), price: price({ input: 0.15, output: 0.6 }), mult: ONE, nano: 150_000_000n },
  { name: "gpt-4o-mini small call", usage: usage({ input: 10, cacheRead: 2, output: 5, reasoning: 1 }),
    // 10×0.15/1M + 2×0.15×0.5/1M + 5×0.6/1M = 1.5e-6 + 0.15e-6 + 3e-6 = 4.65e-6 → 4650 nano
    price: price({ input: 0.15, output: 0.6, cacheRead: 0.5 }), mult: ONE, nano: 4650n },
  { name: "default group 0.7", usage: usage({ input: 10, cacheRead: 2, output: 5 }),
    price: price({ input: 0.15, output: 0.6, cacheRead: 0.5 }), mult: DEFAULT_GROUP, nano: 3255n },
  { name: "claude cache read 0.1 and write 1.25", usage: usage({ input: 1000, cacheRead: 100_000, cacheWrite: 2000, output: 500 }),
    // 1000×3 + 100000×3×0.1 + 2000×3×1.25 + 500×15 = 3000+30000+7500+7500 = 48000 µ-units → 0.048 → 48,000,000 nano
    price: price({ input: 3, output: 15, cacheRead: 0.1, cacheWrite: 1.25 }), mult: ONE, nano: 48_000_000n },
  { name: "thinking is billed as output", usage: usage({ output: 1000, reasoning: 800 }),
    price: price({ input: 3, output: 15 }), mult: ONE, nano: 15_000_000n },
  { name: "unset cache ratios bill at the input price", usage: usage({ cacheRead: 1000, cacheWrite: 1000 }),
    price: price({ input: 2 }), mult: ONE, nano: 4_000_000n },
  { name: "rounds half up once, at the end", usage: usage({ input: 1 }), price: price({ input: 0.0005 }), mult: ONE, nano: 1n },
  { name: "below half a nano rounds to zero", usage: usage({ input: 1 }), price: price({ input: 0.0004 }), mult: ONE, nano: 0n },
  { name: "per request", usage: usage({}), price: price({ perRequest: 0.01 }), mult: DEFAULT_GROUP, nano: 7_000_000n },
  { name: "per image × 3", usage: usage({}), price: price({ perImage: 0.04 }), mult: ONE, units: { images: 3 }, nano: 120_000_000n },
  { name: "per second, 6.5 s", usage: usage({}), price: price({ perSecond: 0.07 }), mult: ONE, units: { milliseconds: 6500 }, nano: 455_000_000n },
  { name: "per 1k chars, 1500 chars", usage: usage({}), price: price({ per1kChars: 0.015 }), mult: ONE, units: { characters: 1500 }, nano: 22_500_000n },
  { name: "no float drift over large counts", usage: usage({ input: 123_456_789, output: 987_654_321 }),
    // 123456789×0.1/1M + 987654321×0.3/1M = 12.3456789 + 296.2962963 = 308.6419752 → ×0.7 = 216.04938264
    price: price({ input: 0.1, output: 0.3 }), mult: DEFAULT_GROUP, nano: 216_049_382_640n },
];

for (const row of table) {
  test(`cost: ${row.name}`, () => {
    assert.equal(costOf(row.usage, row.price, row.mult, row.units), row.nano);
  });
}

test("the same usage costs the same through every protocol's normalisation", async () => {
  const { normalizeOpenAIUsage } = await import("../../src/protocols/openai/usage.js");
  const fromOpenAI = normalizeOpenAIUsage({ prompt_tokens: 1200, completion_tokens: 300,
    prompt_tokens_details: { cached_tokens: 200 }, completion_tokens_details: { reasoning_tokens: 100 } })!;
  const canonical = usage({ input: 1000, cacheRead: 200, output: 300, reasoning: 100 });
  const p = price({ input: 3, output: 15, cacheRead: 0.1 });
  assert.equal(costOf(fromOpenAI, p, ONE), costOf(canonical, p, ONE));
});

test("formatNano is exact", () => {
  assert.equal(formatNano(1_500_000n), "0.0015");
  assert.equal(formatNano(0n), "0");
  assert.equal(formatNano(123_000_000_001n), "123.000000001");
  assert.equal(formatNano(-5n), "-0.000000005");
});

test("estimates: max tokens under every protocol's name, reserve and fallback usage", () => {
  assert.equal(requestedMaxTokens({ max_tokens: 100 }), 100);
  // Both set: an upstream honours whichever it knows, so the larger is reserved for.
  assert.equal(requestedMaxTokens({ max_completion_tokens: 50, max_tokens: 100 }), 100);
  assert.equal(requestedMaxTokens({ generationConfig: { maxOutputTokens: 77 } }), 77);
  // proto3 JSON takes snake_case names and numeric strings: both hold the upstream.
  assert.equal(requestedMaxTokens({ generation_config: { max_output_tokens: "9000" } }), 9000);
  assert.equal(requestedMaxTokens({ max_tokens: -1 }), undefined);
  assert.equal(requestedMaxTokens({ max_tokens: null }), undefined);
  assert.equal(requestedAnswers({ n: 3 }), 3);
  assert.equal(requestedAnswers({ generationConfig: { candidateCount: 2 } }), 2);
  assert.equal(requestedAnswers({ n: 0 }), 1);
  assert.deepEqual(reserveUsage(100, 64), usage({ input: 100, output: 64 }));
  assert.deepEqual(fallbackUsage(400, 41), usage({ input: 100, output: 11 }));
});

test("reserved input: ASCII bytes / 3, every non-ASCII byte a token, a fixed count per image and for tools", () => {
  const ascii = Buffer.from(JSON.stringify({ messages: [{ role: "user", content: "x".repeat(300) }] }));
  assert.equal(reserveInputTokens(ascii), Math.ceil(ascii.length / 3));
  const cjk = Buffer.from(JSON.stringify({ messages: [{ role: "user", content: "漢".repeat(100) }] }));
  assert.equal(reserveInputTokens(cjk), Math.ceil((cjk.length - 300) / 3) + 300, "CJK: 3 bytes a character, each a token");
  const image = { type: "image_url", image_url: { url: "https://x.test/a.png" } };
  const withImages = Buffer.from(JSON.stringify({ messages: [{ role: "user", content: [image, image] }] }));
  assert.equal(reserveInputTokens(withImages), Math.ceil(withImages.length / 3) + 2 * IMAGE_RESERVE_TOKENS, "one count per image, not per mention");
  const anthropicImage = Buffer.from('{"messages":[{"role":"user","content":[{"type": "image","source":{"type":"url","url":"u"}}]}]}');
  assert.equal(reserveInputTokens(anthropicImage), Math.ceil(anthropicImage.length / 3) + IMAGE_RESERVE_TOKENS);
  const tools = Buffer.from(JSON.stringify({ tools: [{ type: "function", function: { name: "f" } }], messages: [] }));
  assert.equal(reserveInputTokens(tools), Math.ceil(tools.length / 3) + TOOLS_RESERVE_TOKENS);
});

test("a cut answer: reported counts over the guess; a client that left pays for the time read, within the reservation", () => {
  const guess = cutAnswerUsage({ bodyBytes: 400, outputChars: 41 });
  assert.deepEqual(guess, usage({ input: 100, output: 11 }), "nothing else known: the byte estimate");
  const reported = cutAnswerUsage({ bodyBytes: 400, outputChars: 41, reported: usage({ input: 7, cacheRead: 3, output: 900, reasoning: 800 }) });
  assert.deepEqual(reported, usage({ input: 7, cacheRead: 3, output: 900, reasoning: 800 }));
  const left = cutAnswerUsage({ bodyBytes: 400, outputChars: 41, readMs: 2500, reservedOutput: 10_000 });
  assert.equal(left.output, 2.5 * CUT_OUTPUT_TOKENS_PER_SECOND);
  assert.equal(cutAnswerUsage({ bodyBytes: 400, outputChars: 41, readMs: 600_000, reservedOutput: 10_000 }).output, 10_000, "at most the reservation");
  // What the provider reported is billed whole, even past the reservation.
  assert.equal(cutAnswerUsage({ bodyBytes: 0, outputChars: 0, readMs: 1, reservedOutput: 10, reported: usage({ output: 50 }) }).output, 50);
});

test("usage normalises identically from each protocol's own fields", async () => {
  const { normalizeOpenAIUsage } = await import("../../src/protocols/openai/usage.js");
  const { normalizeAnthropicUsage } = await import("../../src/protocols/anthropic/usage.js");
  const { normalizeGeminiUsage } = await import("../../src/protocols/gemini/usage.js");
  // One consumption: 1000 fresh input, 200 read from cache, 300 output of which 100 thinking.
  const expected = usage({ input: 1000, cacheRead: 200, output: 300, reasoning: 100 });
  assert.deepEqual(normalizeOpenAIUsage({ prompt_tokens: 1200, completion_tokens: 300,
    prompt_tokens_details: { cached_tokens: 200 }, completion_tokens_details: { reasoning_tokens: 100 } }), expected);
  assert.deepEqual(normalizeAnthropicUsage({ input_tokens: 1000, cache_read_input_tokens: 200,
    cache_creation_input_tokens: 0, output_tokens: 300, output_tokens_details: { thinking_tokens: 100 } }), expected);
  assert.deepEqual(normalizeGeminiUsage({ promptTokenCount: 1200, cachedContentTokenCount: 200,
    candidatesTokenCount: 200, thoughtsTokenCount: 100, totalTokenCount: 1500 }), expected);
  const p = price({ input: 3, output: 15, cacheRead: 0.1, cacheWrite: 1.25 });
  // (1000×3 + 200×3×0.1 + 300×15) / 1M = 0.00756; × 0.7 = 0.005292
  assert.equal(costOf(expected, p, DEFAULT_GROUP), 5_292_000n);
});

test("hosted tool calls cost their price per 1k calls × the multiplier; unpriced tools cost nothing", () => {
  const price: Price = { inputPer1M: toNano(1), toolCallsPer1k: { web_search: toNano(10), file_search: toNano(2.5) } };
  const usage: Usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0, toolCalls: { web_search: 3, file_search: 1, web_fetch: 7 } };
  // 3 × 10 / 1000 + 1 × 2.5 / 1000 = 0.0325; × 0.7 = 0.02275; web_fetch is not priced.
  assert.equal(costOf(usage, price, toPpm(0.7)), 22_750_000n);
  assert.equal(costOf({ ...usage, toolCalls: undefined }, price, toPpm(0.7)), 0n);
  // One call at a price that is not a multiple of 1000 nano rounds once, half up.
  assert.equal(costOf({ ...usage, toolCalls: { web_search: 1 } }, { toolCallsPer1k: { web_search: 1501n } }, toPpm(1)), 2n);
});

test("hosted tool calls are read from each provider's report", async () => {
  const { normalizeAnthropicUsage } = await import("../../src/protocols/anthropic/usage.js");
  const { responseUsage } = await import("../../src/protocols/openai/responses-usage.js");
  const { geminiAnswerUsage } = await import("../../src/protocols/gemini/usage.js");
  assert.deepEqual(normalizeAnthropicUsage({ input_tokens: 1, output_tokens: 1, server_tool_use: { web_search_requests: 2, web_fetch_requests: 0 } })?.toolCalls, { web_search: 2 });
  assert.equal(normalizeAnthropicUsage({ input_tokens: 1, output_tokens: 1, server_tool_use: { web_search_requests: 0 } })?.toolCalls, undefined);
  const output = [{ type: "web_search_call" }, { type: "file_search_call" }, { type: "code_interpreter_call" }, { type: "web_search_call" }, { type: "message" }];
  assert.deepEqual(responseUsage({ output, usage: { input_tokens: 1, output_tokens: 1 } })?.toolCalls, { web_search: 2, file_search: 1, code_interpreter: 1 });
  assert.equal(responseUsage({ output }), undefined, "no usage: the answer reported none, calls or not");
  const grounded = (metadata: object) => geminiAnswerUsage({ candidates: [{ groundingMetadata: metadata }], usageMetadata: { promptTokenCount: 1 } })?.toolCalls;
  assert.deepEqual(grounded({ webSearchQueries: ["a", "b", "a"] }), { web_search: 2 });
  assert.deepEqual(grounded({ groundingChunks: [] }), { web_search: 1 }, "grounded without queries named: one search");
  assert.equal(geminiAnswerUsage({ candidates: [{}], usageMetadata: { promptTokenCount: 1 } })?.toolCalls, undefined);
});
