// The one OpenAI usage reader under each API's field names (chat-completions, responses,
// realtime): the cached / cache-write / reasoning split, missing or null details, and counts
// that are not token counts, read the same whichever names carry them.

import assert from "node:assert/strict";
import { test } from "node:test";
import { transcriptionUsage } from "../../src/protocols/openai/media-usage.js";
import { reportedUsage, realtimeUsageFields } from "../../src/protocols/openai/realtime-usage.js";
import { normalizeResponsesUsage, responsesUsageFields } from "../../src/protocols/openai/responses-usage.js";
import { chatUsageFields, normalizeOpenAIUsage, readOpenAIUsage, type UsageFields } from "../../src/protocols/openai/usage.js";
import type { Usage } from "../../src/protocols/usage.js";

/** Each API's names, and the reader its callers use. */
const apis: readonly { name: string; fields: UsageFields; read: (raw: unknown) => Usage | undefined }[] = [
  { name: "chat-completions", fields: chatUsageFields, read: normalizeOpenAIUsage },
  { name: "responses", fields: responsesUsageFields, read: normalizeResponsesUsage },
  {
    name: "realtime response.done", fields: realtimeUsageFields,
    read: (raw) => reportedUsage("response.done", { type: "response.done", response: { usage: raw } })?.usage,
  },
];

/** A wire usage object under `f`'s names. */
function wire(f: UsageFields, input: unknown, output: unknown, inputDetails?: unknown, outputDetails?: unknown): Record<string, unknown> {
  const u: Record<string, unknown> = { [f.input]: input, [f.output]: output };
  if (inputDetails !== undefined) u[f.inputDetails] = inputDetails;
  if (outputDetails !== undefined) u[f.outputDetails] = outputDetails;
  return u;
}

const usage = (input: number, cacheRead: number, cacheWrite: number, output: number, reasoning: number): Usage =>
  ({ input, cacheRead, cacheWrite, output, reasoning });

for (const { name, fields, read } of apis) {
  test(`${name}: cached and cache-written input come out of input, reasoning stays in output`, () => {
    const raw = wire(fields, 1000, 300, { cached_tokens: 600, cache_write_tokens: 150 }, { reasoning_tokens: 120 });
    assert.deepEqual(read(raw), usage(250, 600, 150, 300, 120));
    assert.deepEqual(readOpenAIUsage(raw, fields), usage(250, 600, 150, 300, 120), "the caller's reader is the one reader");
  });

  test(`${name}: details that are missing, null or empty split nothing`, () => {
    assert.deepEqual(read(wire(fields, 40, 9)), usage(40, 0, 0, 9, 0));
    assert.deepEqual(read(wire(fields, 40, 9, null, null)), usage(40, 0, 0, 9, 0));
    assert.deepEqual(read(wire(fields, 40, 9, {}, {})), usage(40, 0, 0, 9, 0));
    assert.deepEqual(read(wire(fields, 40, 9, "cached", 7)), usage(40, 0, 0, 9, 0), "details that are not objects");
    assert.deepEqual(read({}), usage(0, 0, 0, 0, 0), "an empty usage object is a usage of nothing");
  });

  test(`${name}: a split never exceeds what it splits`, () => {
    assert.deepEqual(read(wire(fields, 100, 10, { cached_tokens: 500 }, { reasoning_tokens: 50 })), usage(0, 100, 0, 10, 10));
    assert.deepEqual(read(wire(fields, 100, 10, { cached_tokens: 70, cache_write_tokens: 50 })), usage(0, 70, 30, 10, 0),
      "cache writes take what the cache reads left");
  });

  test(`${name}: negative, fractional and non-numeric counts`, () => {
    assert.deepEqual(read(wire(fields, -5, "12", { cached_tokens: -1, cache_write_tokens: "3" }, { reasoning_tokens: -2 })), usage(0, 0, 0, 0, 0));
    assert.deepEqual(read(wire(fields, 10.9, 4.5, { cached_tokens: 2.7 }, { reasoning_tokens: 1.2 })), usage(8, 2, 0, 4, 1), "floored");
    assert.deepEqual(read(wire(fields, null, true, { cached_tokens: null }, { reasoning_tokens: {} })), usage(0, 0, 0, 0, 0));
  });

  test(`${name}: no usage object is no usage`, () => {
    for (const raw of [undefined, null, 0, "usage", true]) assert.equal(read(raw), undefined, String(raw));
  });
}

test("a realtime transcription's tokens are read as the transcription route reads them", () => {
  const u = { type: "tokens", input_tokens: 40, output_tokens: 9, total_tokens: 49, input_token_details: { audio_tokens: 40, text_tokens: 0 } };
  const reported = reportedUsage("conversation.item.input_audio_transcription.completed", { usage: u });
  assert.deepEqual(reported, { usage: transcriptionUsage(u), seconds: 0 });
  // input_token_details.audio_tokens: the audio part of the input (issue 21).
  assert.deepEqual(reported?.usage, { ...usage(40, 0, 0, 9, 0), audioInput: 40 });
  assert.equal(reportedUsage("conversation.item.input_audio_transcription.completed", {}), undefined);
});
