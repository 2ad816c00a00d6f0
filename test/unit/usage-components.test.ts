// Usage objects of every provider family, as the providers send them, read by the real
// readers (the pass-through specs' and stream taps' billing readers, and the converting
// decoders) and priced by priceUsage to totals worked out by hand. Then, per family, every
// token field of its usage object moves the price: a reader that dropped one (Gemini's
// toolUsePromptTokenCount, an audio or image count, a 1-hour cache write) fails here.
// Prices below are per 1M tokens, so one token costs (price × 1000) nano-units.

import assert from "node:assert/strict";
import { test } from "node:test";
import { priceUsage } from "../../src/billing/cost.js";
import { cutAnswerUsage } from "../../src/billing/estimate.js";
import { toNano, toPpm } from "../../src/config/money.js";
import { messagesOutbound } from "../../src/protocols/anthropic/index.js";
import { messagesPassthrough } from "../../src/protocols/anthropic/passthrough.js";
import { generateOutbound } from "../../src/protocols/gemini/index.js";
import { generatePassthrough } from "../../src/protocols/gemini/passthrough.js";
import { chatOutbound } from "../../src/protocols/openai/index.js";
import { imagesPassthrough, speechPassthrough, transcriptionsPassthrough } from "../../src/protocols/openai/media-passthrough.js";
import { chatPassthrough, responsesPassthrough } from "../../src/protocols/openai/passthrough.js";
import { reportedUsage } from "../../src/protocols/openai/realtime-usage.js";
import { responsesOutbound } from "../../src/protocols/openai/responses-outbound.js";
import type { PassRequest } from "../../src/protocols/passthrough.js";
import type { Usage } from "../../src/protocols/usage.js";
import type { Price } from "../../src/runtime/types.js";
import {
  anthropicAnswer, chatAudio, geminiAnswer, imageAnswer, imageAnswerDetailed, realtimeDone, responsesFlex, speechDone, transcription,
} from "../helpers/usage-fixtures.js";

const ONE = 1_000_000n; // group multiplier 1.0 (ppm)
const DEFAULT_GROUP = toPpm(0.7);

// ---------------------------------------------------------------------------------------
// The real readers.

/** An SSE text of `events` (data lines only), as an upstream sends it. */
const sse = (events: readonly unknown[]): string => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");

/** The usage a pass-through stream tap reads from `text`, pushed in two pieces. */
function tapped(tap: { push(b: Buffer): string; end(): string; readonly usage: Usage | undefined }, text: string): Usage | undefined {
  const half = Math.floor(text.length / 2);
  tap.push(Buffer.from(text.slice(0, half)));
  tap.push(Buffer.from(text.slice(half)));
  tap.end();
  return tap.usage;
}

const readers = {
  chat: (json: unknown) => chatPassthrough.bodyUsage(json),
  responses: (json: unknown) => responsesPassthrough.bodyUsage(json),
  realtime: (event: unknown) => reportedUsage("response.done", event as Record<string, unknown>)?.usage,
  transcription: (json: unknown) => transcriptionsPassthrough.bodyUsage(json),
  speech: (done: unknown) => {
    const req = { raw: Buffer.alloc(0), json: {}, query: "", tokenPriced: true } satisfies PassRequest;
    const delta = { type: "speech.audio.delta", audio: "AAAA" };
    return tapped(speechPassthrough.streamTap!(speechPassthrough.body(req, "gpt-4o-mini-tts").stripUsage), sse([delta, done]));
  },
  images: (json: unknown) => imagesPassthrough.bodyUsage(json),
  anthropic: (json: unknown) => messagesPassthrough.bodyUsage(json),
  gemini: (json: unknown) => generatePassthrough.bodyUsage(json),
};

// ---------------------------------------------------------------------------------------
// Prices as a price list names them (Price object literals with the new fields).

const gpt4oAudio: Price = { inputPer1M: toNano(2.5), outputPer1M: toNano(10), audioInputPer1M: toNano(40), audioOutputPer1M: toNano(80) };
const gpt5: Price = {
  inputPer1M: toNano(1.25), outputPer1M: toNano(10), cacheReadRatioPpm: toPpm(0.1),
  serviceTiersPpm: { flex: toPpm(0.5), priority: toPpm(2) },
};
const gptRealtime: Price = {
  inputPer1M: toNano(4), outputPer1M: toNano(16), cacheReadRatioPpm: toPpm(0.1),
  audioInputPer1M: toNano(32), audioCacheReadPer1M: toNano(0.4), imageInputPer1M: toNano(5), audioOutputPer1M: toNano(64),
};
const gpt4oTranscribe: Price = { inputPer1M: toNano(2.5), audioInputPer1M: toNano(6), outputPer1M: toNano(10) };
const gpt4oMiniTts: Price = { inputPer1M: toNano(0.6), audioOutputPer1M: toNano(12) };
const gptImage1: Price = { inputPer1M: toNano(5), imageInputPer1M: toNano(10), imageOutputPer1M: toNano(40), outputPer1M: toNano(40) };
const claudeSonnet: Price = {
  inputPer1M: toNano(3), outputPer1M: toNano(15), cacheReadRatioPpm: toPpm(0.1), cacheWriteRatioPpm: toPpm(1.25),
  cacheWrite1hRatioPpm: toPpm(2), toolCallsPer1k: { web_search: toNano(10) }, serviceTiersPpm: { priority: toPpm(1.5) },
};
const geminiFlashImage: Price = {
  inputPer1M: toNano(0.3), outputPer1M: toNano(2.5), cacheReadPer1M: toNano(0.03), audioInputPer1M: toNano(1),
  audioCacheReadPer1M: toNano(0.1), imageInputPer1M: toNano(0.3), imageOutputPer1M: toNano(30),
};

/** The priced components of a usage, by name: quantity. */
function quantities(usage: Usage, price: Price): Record<string, number> {
  return Object.fromEntries(priceUsage(usage, price, ONE).lines.map((l) => [l.component, l.quantity]));
}

// ---------------------------------------------------------------------------------------
// Hand-computed totals.

test("chat-completions with audio: audio in and out at their own prices", () => {
  const usage = readers.chat(chatAudio)!;
  assert.deepEqual(quantities(usage, gpt4oAudio), { input: 200, audio_input: 1000, output: 100, audio_output: 700 });
  // 200 × 2500 + 1000 × 40000 + 100 × 10000 + 700 × 80000
  // = 500,000 + 40,000,000 + 1,000,000 + 56,000,000 = 97,500,000 nano
  // (service_tier "default" is not in the price's service tiers: no multiplier)
  assert.equal(usage.serviceTier, "default");
  assert.equal(priceUsage(usage, gpt4oAudio, ONE).costNano, 97_500_000n);
  assert.equal(priceUsage(usage, gpt4oAudio, ONE).fallbacks, undefined, "every component has its own price");
});

test("responses with cache reads, reasoning and service_tier flex", () => {
  const usage = readers.responses(responsesFlex)!;
  assert.deepEqual(quantities(usage, gpt5), { input: 2000, cache_read: 8000, output: 1000, reasoning: 2000 });
  // 2000 × 1250 + 8000 × 125 + 1000 × 10000 + 2000 × 10000
  // = 2,500,000 + 1,000,000 + 10,000,000 + 20,000,000 = 33,500,000
  // × flex 0.5 = 16,750,000 × group 0.7 = 11,725,000 nano
  const priced = priceUsage(usage, gpt5, DEFAULT_GROUP);
  assert.deepEqual(priced.serviceTier, { name: "flex", ppm: toPpm(0.5) });
  assert.equal(priced.costNano, 11_725_000n);
});

test("realtime response.done: uncached and cached audio, image input, audio output", () => {
  const usage = readers.realtime(realtimeDone)!;
  assert.deepEqual(quantities(usage, gptRealtime), {
    input: 350, cache_read: 400, audio_input: 600, audio_cache_read: 600, image_input: 50, output: 100, audio_output: 400,
  });
  // text in 350 × 4000 = 1,400,000; audio in 600 × 32000 = 19,200,000; image in 50 × 5000 = 250,000;
  // cached text+image 400 × 400 = 160,000; cached audio 600 × 400 = 240,000;
  // text out 100 × 16000 = 1,600,000; audio out 400 × 64000 = 25,600,000
  // = 48,450,000 nano
  assert.equal(priceUsage(usage, gptRealtime, ONE).costNano, 48_450_000n);
});

test("transcription tokens: audio input at the audio price", () => {
  const usage = readers.transcription(transcription)!;
  assert.deepEqual(quantities(usage, gpt4oTranscribe), { input: 200, audio_input: 1200, output: 300 });
  // 200 × 2500 + 1200 × 6000 + 300 × 10000 = 500,000 + 7,200,000 + 3,000,000 = 10,700,000 nano
  assert.equal(priceUsage(usage, gpt4oTranscribe, ONE).costNano, 10_700_000n);
});

test("speech SSE usage: the output is audio", () => {
  const usage = readers.speech(speechDone)!;
  assert.deepEqual(quantities(usage, gpt4oMiniTts), { input: 120, audio_output: 2400 });
  // 120 × 600 + 2400 × 12000 = 72,000 + 28,800,000 = 28,872,000 nano
  assert.equal(priceUsage(usage, gpt4oMiniTts, ONE).costNano, 28_872_000n);
});

test("gpt-image-1: text and image input, image output", () => {
  const usage = readers.images(imageAnswer)!;
  assert.deepEqual(quantities(usage, gptImage1), { input: 50, image_input: 200, image_output: 4160 });
  // 50 × 5000 + 200 × 10000 + 4160 × 40000 = 250,000 + 2,000,000 + 166,400,000 = 168,650,000 nano
  assert.equal(priceUsage(usage, gptImage1, ONE).costNano, 168_650_000n);
  const detailed = readers.images(imageAnswerDetailed)!;
  assert.deepEqual(quantities(detailed, gptImage1), { input: 50, image_input: 200, output: 160, image_output: 4000 });
  // output details split it: 160 text at 40 and 4000 image at 40: the same 166,400,000 here
  assert.equal(priceUsage(detailed, gptImage1, ONE).costNano, 168_650_000n);
  assert.equal(priceUsage(detailed, { ...gptImage1, outputPer1M: toNano(8) }, ONE).costNano, 168_650_000n - 160n * 32_000n);
});

test("anthropic: 5-minute and 1-hour cache writes, thinking, web search, priority tier", () => {
  const usage = readers.anthropic(anthropicAnswer)!;
  assert.deepEqual(quantities(usage, claudeSonnet), {
    input: 1500, cache_read: 100000, cache_write: 10000, cache_write_1h: 20000, output: 1500, reasoning: 500, web_search: 3,
  });
  // input 1500 × 3000 = 4,500,000; cache read 100000 × 300 = 30,000,000;
  // 5-minute writes 10000 × 3750 = 37,500,000; 1-hour writes 20000 × 6000 = 120,000,000;
  // output 1500 × 15000 + thinking 500 × 15000 = 30,000,000; web search 3 × 10,000,000 = 30,000,000
  // = 252,000,000 × priority 1.5 = 378,000,000 nano
  assert.equal(priceUsage(usage, claudeSonnet, ONE).costNano, 378_000_000n);
});

test("gemini: audio and image modalities, cached audio, tool-use prompt, thoughts, image output", () => {
  const usage = readers.gemini(geminiAnswer)!;
  assert.deepEqual(quantities(usage, geminiFlashImage), {
    input: 1900, cache_read: 1000, audio_input: 500, audio_cache_read: 1000, image_input: 1000,
    output: 210, reasoning: 700, image_output: 1290,
  });
  // prompt 5000 + tool-use 400 = 5400, of which 2000 cached → 3400 uncached:
  //   audio 1500 − 1000 cached = 500, image 1000, text (and video) 1900
  // text in 1900 × 300 = 570,000; audio in 500 × 1000 = 500,000; image in 1000 × 300 = 300,000;
  // cached text 1000 × 30 = 30,000; cached audio 1000 × 100 = 100,000;
  // text out 210 × 2500 = 525,000; thoughts 700 × 2500 = 1,750,000; image out 1290 × 30000 = 38,700,000
  // = 42,475,000 nano
  assert.equal(priceUsage(usage, geminiFlashImage, ONE).costNano, 42_475_000n);
  // toolUsePromptTokenCount is input: without it the 400 tokens (× 300) go unbilled.
  const { toolUsePromptTokenCount: _, toolUsePromptTokensDetails: __, ...withoutToolUse } = geminiAnswer.usageMetadata;
  const less = readers.gemini({ ...geminiAnswer, usageMetadata: withoutToolUse })!;
  assert.equal(priceUsage(less, geminiFlashImage, ONE).costNano, 42_475_000n - 400n * 300n);
});

test("a part the price list does not name is priced at its base price and reported as a fallback", () => {
  const usage = readers.realtime(realtimeDone)!;
  const textOnly: Price = { inputPer1M: toNano(4), outputPer1M: toNano(16), cacheReadRatioPpm: toPpm(0.1) };
  const priced = priceUsage(usage, textOnly, ONE);
  assert.deepEqual(priced.fallbacks, ["audio_input", "audio_cache_read", "image_input", "audio_output"]);
  // input 350+600+50 = 1000 × 4000 = 4,000,000; cache 1000 × 400 = 400,000; output 500 × 16000 = 8,000,000
  assert.equal(priced.costNano, 12_400_000n);
});

// ---------------------------------------------------------------------------------------
// Every token field of each family's usage object reaches a priced component.

/** Every component at a price of its own, each a different power of two: a token moved
 * between any components, or added to one, changes the total (no ±1 sum of distinct powers
 * of two is zero). */
const distinct: Price = {
  inputPer1M: toNano(1), cacheReadPer1M: toNano(2), cacheWritePer1M: toNano(4), cacheWrite1hPer1M: toNano(8),
  audioInputPer1M: toNano(16), audioCacheReadPer1M: toNano(32), imageInputPer1M: toNano(64), outputPer1M: toNano(128),
  reasoningPer1M: toNano(256), audioOutputPer1M: toNano(512), imageOutputPer1M: toNano(1024),
  toolCallsPer1k: { web_search: toNano(2048), web_fetch: toNano(4096), file_search: toNano(8192), code_interpreter: toNano(16384) },
};

type Path = readonly (string | number)[];

/** Paths of every numeric leaf under `value`. */
function numericPaths(value: unknown, path: Path = []): Path[] {
  if (typeof value === "number") return [path];
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => numericPaths(v, [...path, Array.isArray(value) ? Number(k) : k]));
}

/** A copy of `value` with the number at `path` one higher. */
function bumped<T>(value: T, path: Path): T {
  const copy = structuredClone(value);
  let at = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  at[last] = (at[last] as number) + 1;
  return copy;
}

/** Each family: its fixture, where its usage object is, its reader, and the numeric fields
 * that are not counts of their own, each with why (the test checks the list is exact). */
const families: readonly { name: string; fixture: unknown; usageAt: Path; read: (x: unknown) => Usage | undefined; notCounts: Record<string, string> }[] = [
  {
    name: "chat-completions", fixture: chatAudio, usageAt: ["usage"], read: readers.chat,
    notCounts: {
      "usage.total_tokens": "the sum of the two totals",
      "usage.completion_tokens_details.accepted_prediction_tokens": "a part of completion_tokens, billed as its output",
      "usage.completion_tokens_details.rejected_prediction_tokens": "a part of completion_tokens, billed as its output",
    },
  },
  {
    name: "responses", fixture: responsesFlex, usageAt: ["usage"], read: readers.responses,
    notCounts: { "usage.total_tokens": "the sum of the two totals" },
  },
  {
    name: "realtime", fixture: realtimeDone, usageAt: ["response", "usage"], read: readers.realtime,
    notCounts: {
      "response.usage.total_tokens": "the sum of the two totals",
      "response.usage.input_token_details.text_tokens": "text: the rest of input_tokens",
      "response.usage.input_token_details.cached_tokens_details.text_tokens": "text: the rest of cached_tokens",
      "response.usage.output_token_details.text_tokens": "text: the rest of output_tokens",
    },
  },
  {
    name: "transcription", fixture: transcription, usageAt: ["usage"], read: readers.transcription,
    notCounts: {
      "usage.total_tokens": "the sum of the two totals",
      "usage.input_token_details.text_tokens": "text: the rest of input_tokens",
    },
  },
  {
    name: "speech", fixture: speechDone, usageAt: ["usage"], read: readers.speech,
    notCounts: { "usage.total_tokens": "the sum of the two totals" },
  },
  {
    name: "images", fixture: imageAnswerDetailed, usageAt: ["usage"], read: readers.images,
    notCounts: {
      "usage.total_tokens": "the sum of the two totals",
      "usage.input_tokens_details.text_tokens": "text: the rest of input_tokens",
      "usage.output_tokens_details.text_tokens": "text: the rest of output_tokens",
    },
  },
  {
    name: "anthropic", fixture: anthropicAnswer, usageAt: ["usage"], read: readers.anthropic,
    notCounts: {
      "usage.cache_creation.ephemeral_5m_input_tokens": "the rest of cache_creation_input_tokens (the total)",
    },
  },
  {
    name: "gemini", fixture: geminiAnswer, usageAt: ["usageMetadata"], read: readers.gemini,
    notCounts: {
      "usageMetadata.totalTokenCount": "the sum of the counts",
      "usageMetadata.promptTokensDetails.0.tokenCount": "TEXT: the rest of promptTokenCount",
      "usageMetadata.promptTokensDetails.1.tokenCount": "VIDEO: billed as text input, the rest of promptTokenCount",
      "usageMetadata.cacheTokensDetails.0.tokenCount": "TEXT: the rest of cachedContentTokenCount",
      "usageMetadata.candidatesTokensDetails.0.tokenCount": "TEXT: the rest of candidatesTokenCount",
      "usageMetadata.toolUsePromptTokensDetails.0.tokenCount": "TEXT: the rest of toolUsePromptTokenCount",
    },
  },
];

for (const family of families) {
  test(`${family.name}: every token count of its usage object moves the price`, () => {
    const base = priceUsage(family.read(family.fixture)!, distinct, ONE).costNano;
    let usageObject: unknown = family.fixture;
    for (const key of family.usageAt) usageObject = (usageObject as Record<string, unknown>)[key as string];
    const paths = numericPaths(usageObject, family.usageAt);
    const named = paths.map((p) => p.join("."));
    for (const listed of Object.keys(family.notCounts)) assert.ok(named.includes(listed), `${listed} is a field of the fixture`);
    const counted = paths.filter((p) => !(p.join(".") in family.notCounts));
    assert.ok(counted.length >= 2, "the fixture has counts to move");
    for (const path of counted) {
      const moved = priceUsage(family.read(bumped(family.fixture, path))!, distinct, ONE).costNano;
      assert.notEqual(moved, base, `one more in ${path.join(".")} changes the price`);
    }
  });
}

test("anthropic: without the total, the writes by lifetime add up to it", () => {
  const { cache_creation_input_tokens: _, ...usage } = anthropicAnswer.usage;
  const read = readers.anthropic({ ...anthropicAnswer, usage })!;
  assert.equal(read.cacheWrite, 30000);
  assert.equal(read.cacheWrite1h, 20000);
});

// ---------------------------------------------------------------------------------------
// The same parts from streams, through the pass-through taps and the converting decoders.

/** The usage a converting decoder ends a stream with (message_stop's). */
function decoded(decoder: { decode(e: { data: string; event?: string }): readonly { type: string; usage?: Usage }[]; end(): readonly { type: string; usage?: Usage }[] },
  events: readonly { event?: string; data: unknown }[]): Usage | undefined {
  const out = [...events.flatMap((e) => decoder.decode({ ...(e.event && { event: e.event }), data: typeof e.data === "string" ? e.data : JSON.stringify(e.data) })), ...decoder.end()];
  const stop = out.find((e) => e.type === "message_stop");
  return stop?.usage;
}

test("chat-completions stream with service_tier priority: the tap and the decoder read the same priced usage", () => {
  const head = { id: "chatcmpl-S1", object: "chat.completion.chunk", created: 1764000000, model: "gpt-5-2025-08-07", service_tier: "priority", system_fingerprint: null };
  const chunks = [
    { ...head, choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }], usage: null },
    { ...head, choices: [{ index: 0, delta: { content: "Hi." }, logprobs: null, finish_reason: null }], usage: null },
    { ...head, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }], usage: null },
    { ...head, choices: [], usage: {
      prompt_tokens: 3000, completion_tokens: 1200, total_tokens: 4200,
      prompt_tokens_details: { cached_tokens: 2000, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 1000, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } } },
  ];
  const text = sse(chunks) + "data: [DONE]\n\n";
  const fromTap = tapped(chatPassthrough.streamTap!(false), text)!;
  const fromDecoder = decoded(chatOutbound.streamDecoder(), [...chunks.map((data) => ({ data })), { data: "[DONE]" }])!;
  // input 1000 × 1250 = 1,250,000; cache read 2000 × 125 = 250,000; output 200 × 10000 = 2,000,000;
  // reasoning 1000 × 10000 = 10,000,000; = 13,500,000 × priority 2 = 27,000,000 nano
  for (const usage of [fromTap, fromDecoder]) {
    assert.equal(usage.serviceTier, "priority");
    assert.equal(priceUsage(usage, gpt5, ONE).costNano, 27_000_000n);
  }
});

test("chat-completions stream with audio: the parts survive the decoder", () => {
  const head = { id: "chatcmpl-A1", object: "chat.completion.chunk", created: 1764000000, model: "gpt-4o-audio-preview", service_tier: "default" };
  const chunks = [
    { ...head, choices: [{ index: 0, delta: { role: "assistant", content: "ok" }, finish_reason: "stop" }] },
    { ...head, choices: [], usage: chatAudio.usage },
  ];
  const fromTap = tapped(chatPassthrough.streamTap!(false), sse(chunks) + "data: [DONE]\n\n")!;
  const fromDecoder = decoded(chatOutbound.streamDecoder(), [...chunks.map((data) => ({ data })), { data: "[DONE]" }])!;
  for (const usage of [fromTap, fromDecoder]) assert.equal(priceUsage(usage, gpt4oAudio, ONE).costNano, 97_500_000n);
});

test("responses stream: response.completed's usage and service tier, through the tap and the decoder", () => {
  const events = [
    { type: "response.created", sequence_number: 0, response: { ...responsesFlex, status: "in_progress", output: [], usage: null } },
    { type: "response.output_text.delta", sequence_number: 1, item_id: "msg_01", output_index: 0, content_index: 0, delta: "Done." },
    { type: "response.completed", sequence_number: 2, response: responsesFlex },
  ];
  const text = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
  const fromTap = tapped(responsesPassthrough.streamTap!(false), text)!;
  const fromDecoder = decoded(responsesOutbound.streamDecoder(), events.map((e) => ({ event: e.type, data: e })))!;
  for (const usage of [fromTap, fromDecoder]) {
    assert.equal(usage.serviceTier, "flex");
    assert.equal(priceUsage(usage, gpt5, DEFAULT_GROUP).costNano, 11_725_000n, "the whole answer's total");
  }
});

test("anthropic stream: message_start's cache_creation and service_tier, message_delta's output", () => {
  const startUsage = { ...anthropicAnswer.usage, output_tokens: 1, output_tokens_details: null, server_tool_use: null };
  const events = [
    { event: "message_start", data: { type: "message_start", message: { ...anthropicAnswer, content: [], stop_reason: null, usage: startUsage } } },
    { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
    { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Here you go." } } },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: {
      input_tokens: 1500, cache_creation_input_tokens: 30000, cache_read_input_tokens: 100000, output_tokens: 2000,
      output_tokens_details: { thinking_tokens: 500 }, server_tool_use: { web_search_requests: 3 } } } },
    { event: "message_stop", data: { type: "message_stop" } },
  ];
  const text = events.map((e) => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`).join("");
  const fromTap = tapped(messagesPassthrough.streamTap!(false), text)!;
  const fromDecoder = decoded(messagesOutbound.streamDecoder(), events)!;
  for (const usage of [fromTap, fromDecoder]) {
    assert.equal(usage.cacheWrite1h, 20000);
    assert.equal(usage.serviceTier, "priority");
    assert.equal(priceUsage(usage, claudeSonnet, ONE).costNano, 378_000_000n, "the whole answer's total");
  }
});

test("gemini stream: the last chunk's usageMetadata with its modality details", () => {
  const first = { candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Here" }] } }], modelVersion: "gemini-2.5-flash-image",
    usageMetadata: { promptTokenCount: 5000, totalTokenCount: 5000 } };
  const chunks = [first, geminiAnswer];
  const fromTap = tapped(generatePassthrough.streamTap!(false), sse(chunks))!;
  const fromDecoder = decoded(generateOutbound.streamDecoder(), chunks.map((data) => ({ data })))!;
  for (const usage of [fromTap, fromDecoder]) assert.equal(priceUsage(usage, geminiFlashImage, ONE).costNano, 42_475_000n);
});

test("converted whole answers keep the parts the upstream reported", () => {
  assert.equal(priceUsage(chatOutbound.decodeResponse(chatAudio).usage, gpt4oAudio, ONE).costNano, 97_500_000n);
  assert.equal(priceUsage(responsesOutbound.decodeResponse(responsesFlex).usage, gpt5, DEFAULT_GROUP).costNano, 11_725_000n);
  assert.equal(priceUsage(messagesOutbound.decodeResponse(anthropicAnswer).usage, claudeSonnet, ONE).costNano, 378_000_000n);
  assert.equal(priceUsage(generateOutbound.decodeResponse(geminiAnswer).usage, geminiFlashImage, ONE).costNano, 42_475_000n);
});

test("a stream cut after message_start is estimated with the parts its input reported", () => {
  const startUsage = { ...anthropicAnswer.usage, output_tokens: 1, output_tokens_details: null, server_tool_use: null };
  const text = `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { ...anthropicAnswer, content: [], usage: startUsage } })}\n\n`;
  const reported = tapped(messagesPassthrough.streamTap!(false), text)!;
  const usage = cutAnswerUsage({ bodyBytes: 4000, outputChars: 400, reported, reservedOutput: 4096 });
  assert.equal(usage.cacheWrite1h, 20000, "the 1-hour writes stay 1-hour writes");
  assert.equal(usage.serviceTier, "priority");
  // The input as reported: 1500 × 3000 + 100000 × 300 + 10000 × 3750 + 20000 × 6000 = 192,000,000;
  // output guessed from 400 characters of text; all × priority 1.5.
  const inputCost = 192_000_000n;
  const outputCost = BigInt(usage.output) * 15_000n;
  assert.equal(priceUsage(usage, claudeSonnet, ONE).costNano, ((inputCost + outputCost) * 3n) / 2n);
});

test("a converted client sees the parts in its own wire, read back the same", async () => {
  const { wireUsage: chatWire } = await import("../../src/protocols/openai/chat-common.js");
  const { responsesWireUsage } = await import("../../src/protocols/openai/responses-common.js");
  const { wireUsage: anthropicWire } = await import("../../src/protocols/anthropic/response.js");
  const { usageMetadataOf } = await import("../../src/protocols/gemini/mapping.js");
  const { normalizeOpenAIUsage } = await import("../../src/protocols/openai/usage.js");
  const { normalizeResponsesUsage } = await import("../../src/protocols/openai/responses-usage.js");
  const { normalizeAnthropicUsage } = await import("../../src/protocols/anthropic/usage.js");
  const { normalizeGeminiUsage } = await import("../../src/protocols/gemini/usage.js");
  // Chat and responses have no cached-audio detail: their audio input is all uncached here.
  const openaiParts: Usage = { input: 900, cacheRead: 100, cacheWrite: 0, output: 600, reasoning: 50, audioInput: 300, imageInput: 200, audioOutput: 250, imageOutput: 100 };
  assert.deepEqual(normalizeOpenAIUsage(chatWire(openaiParts)), openaiParts);
  assert.deepEqual(normalizeResponsesUsage(responsesWireUsage(openaiParts)), openaiParts);
  const geminiParts: Usage = { ...openaiParts, audioCacheRead: 60 };
  assert.deepEqual(normalizeGeminiUsage(usageMetadataOf(geminiParts)), geminiParts);
  const claudeParts: Usage = { input: 1500, cacheRead: 100000, cacheWrite: 30000, cacheWrite1h: 20000, output: 2000, reasoning: 500 };
  assert.deepEqual(normalizeAnthropicUsage(anthropicWire(claudeParts)), claudeParts);
  // Without parts the wire is what it was.
  assert.equal("cache_creation" in (anthropicWire({ ...claudeParts, cacheWrite1h: undefined }) as object), false);
  assert.equal("promptTokensDetails" in usageMetadataOf({ input: 1, cacheRead: 0, cacheWrite: 0, output: 1, reasoning: 0 }), false);
});
