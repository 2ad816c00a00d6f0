// A realtime session's audio priced as audio: the usage response.done and input
// transcription report (their audio parts), the meter's estimate for a response that never
// reported (the audio it measured is audio, not text), and duration-billed transcription
// on a token-priced model (its seconds are audio input tokens), which keeps every part.

import assert from "node:assert/strict";
import { test } from "node:test";
import { priceUsage } from "../../src/billing/cost.js";
import { toNano, toPpm } from "../../src/config/money.js";
import { RealtimeMeter, billable } from "../../src/pipeline/realtime-meter.js";
import type { Usage } from "../../src/protocols/usage.js";
import type { Price } from "../../src/runtime/types.js";

const ONE = 1_000_000n;
const frame = (event: object) => Buffer.from(JSON.stringify(event));

/** gpt-realtime's list price. */
const gptRealtime: Price = {
  inputPer1M: toNano(4), outputPer1M: toNano(16), cacheReadRatioPpm: toPpm(0.1),
  audioInputPer1M: toNano(32), audioCacheReadPer1M: toNano(0.4), audioOutputPer1M: toNano(64),
};

test("response.done's audio parts reach the bill through the meter", () => {
  const meter = new RealtimeMeter();
  meter.upstream("response.created", frame({ type: "response.created" }));
  const done = meter.upstream("response.done", frame({ type: "response.done", response: { status: "completed", usage: {
    total_tokens: 1300, input_tokens: 1000, output_tokens: 300,
    input_token_details: { text_tokens: 200, audio_tokens: 800, cached_tokens: 500, cached_tokens_details: { text_tokens: 100, audio_tokens: 400 } },
    output_token_details: { text_tokens: 50, audio_tokens: 250 },
  } } }));
  assert.ok(done?.kind === "done" && !done.used.estimated);
  const usage = done.used.usage;
  assert.deepEqual(usage, {
    input: 500, cacheRead: 500, cacheWrite: 0, output: 300, reasoning: 0, audioInput: 400, audioCacheRead: 400, audioOutput: 250,
  });
  // text in 100 × 4000 = 400,000; audio in 400 × 32000 = 12,800,000; cached text 100 × 400 = 40,000;
  // cached audio 400 × 400 = 160,000; text out 50 × 16000 = 800,000; audio out 250 × 64000 = 16,000,000
  // = 30,200,000 nano
  assert.equal(priceUsage(usage, gptRealtime, ONE).costNano, 30_200_000n);
});

test("an input transcription's audio tokens are audio input", () => {
  const meter = new RealtimeMeter();
  const tr = meter.upstream("conversation.item.input_audio_transcription.completed", frame({
    type: "conversation.item.input_audio_transcription.completed", item_id: "item_1", content_index: 0, transcript: "hi",
    usage: { type: "tokens", input_tokens: 60, input_token_details: { text_tokens: 10, audio_tokens: 50 }, output_tokens: 4, total_tokens: 64 },
  }));
  assert.ok(tr?.kind === "transcribed");
  assert.deepEqual(tr.used.usage, { input: 60, cacheRead: 0, cacheWrite: 0, output: 4, reasoning: 0, audioInput: 50 });
});

test("the estimate of a response that never reported prices the audio it measured as audio", () => {
  const meter = new RealtimeMeter();
  // Two seconds of the client's pcm16 audio (128,000 base64 characters: 20 tokens) and a text item.
  meter.client("input_audio_buffer.append", Buffer.alloc(128_000));
  meter.client("conversation.item.create", Buffer.alloc(400));
  meter.upstream("response.created", frame({ type: "response.created" }));
  // One second of assistant audio (64,000 characters: 20 tokens) and 40 characters of text (10 tokens).
  meter.upstream("response.output_audio.delta", Buffer.alloc(64_000));
  meter.upstream("response.output_text.delta", frame({ type: "response.output_text.delta", delta: "x".repeat(40) }));
  const cut = meter.unreported()!;
  assert.equal(cut.estimated, true);
  // input: 20 audio + 400/4 = 100 text; output: 20 audio + 10 text
  assert.deepEqual(cut.usage, { input: 120, cacheRead: 0, cacheWrite: 0, output: 30, reasoning: 0, audioInput: 20, audioOutput: 20 });
  // 100 × 4000 + 20 × 32000 + 10 × 16000 + 20 × 64000 = 400,000 + 640,000 + 160,000 + 1,280,000 = 2,480,000 nano
  assert.equal(priceUsage(cut.usage, gptRealtime, ONE).costNano, 2_480_000n);
});

test("the conversation's audio stays audio in the next response's estimate", () => {
  const meter = new RealtimeMeter();
  meter.upstream("response.created", frame({ type: "response.created" }));
  meter.upstream("response.done", frame({ type: "response.done", response: { usage: {
    input_tokens: 100, output_tokens: 50, input_token_details: { audio_tokens: 60 }, output_token_details: { audio_tokens: 30 },
  } } }));
  meter.upstream("response.created", frame({ type: "response.created" }));
  const next = meter.unreported()!;
  // The conversation so far (150 tokens, 90 of them audio) is read again as input.
  assert.equal(next.usage.input, 150);
  assert.equal(next.usage.audioInput, 90);
});

test("duration-billed transcription on a token-priced model: its seconds are audio input, the parts kept", () => {
  const usage: Usage = { input: 30, cacheRead: 10, cacheWrite: 0, output: 5, reasoning: 0, audioInput: 20, audioCacheRead: 10, audioOutput: 5, serviceTier: "default" };
  const tokens = billable(usage, 2, gptRealtime);
  assert.equal(tokens.estimated, true);
  // 2 s at 10 audio tokens a second: 20 more input tokens, all audio.
  assert.deepEqual(tokens.usage, { ...usage, input: 50, audioInput: 40 });
  assert.deepEqual(usage.input, 30, "the reported usage is not changed");
  const perSecond = billable(usage, 2, { perSecond: toNano(0.001) });
  assert.equal(perSecond.usage, usage);
});
