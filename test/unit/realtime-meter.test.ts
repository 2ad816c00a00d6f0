// The realtime meter without sockets: an event's type read from its head (and from the
// decoded frame when it is not the first key), the usage each usage-bearing event
// reports, one at a time, and the marked estimate for a response that never reported.

import { test } from "node:test";
import assert from "node:assert/strict";
import { eventType } from "../../src/protocols/openai/realtime-events.js";
import { reportedUsage } from "../../src/protocols/openai/realtime-usage.js";
import { RealtimeMeter, billable } from "../../src/pipeline/realtime-meter.js";

const frame = (event: object | string) => Buffer.from(typeof event === "string" ? event : JSON.stringify(event));

test("an event's type comes from its head; a frame that does not start with it is decoded", () => {
  assert.equal(eventType(frame('{"type":"response.create"}')), "response.create");
  assert.equal(eventType(frame('{ "type" : "response.create", "response": {} }')), "response.create");
  // A nested `type` first must not hide the event's own.
  assert.equal(eventType(frame({ response: { type: "x" }, type: "response.create" })), "response.create");
  assert.equal(eventType(frame('{"type":"resp\\u006fnse.create"}')), "response.create");
  assert.equal(eventType(frame("not json")), undefined);
  assert.equal(eventType(frame({ type: 7 })), undefined);
});

test("response.done and transcription events report their usage; duration usage in seconds", () => {
  const done = reportedUsage("response.done", { response: { usage: { input_tokens: 40, output_tokens: 20, input_token_details: { cached_tokens: 10 } } } });
  assert.deepEqual(done?.usage, { input: 30, cacheRead: 10, cacheWrite: 0, output: 20, reasoning: 0 });
  const tokens = reportedUsage("conversation.item.input_audio_transcription.completed", { usage: { type: "tokens", input_tokens: 120, output_tokens: 30 } });
  assert.deepEqual([tokens?.usage.input, tokens?.usage.output], [120, 30]);
  const seconds = reportedUsage("conversation.item.input_audio_transcription.completed", { usage: { type: "duration", seconds: 4.5 } });
  assert.equal(seconds?.seconds, 4.5);
  assert.equal(reportedUsage("response.done", { response: { status: "failed" } }), undefined);
});

test("each response reports its own usage; one cut before its usage is estimated from its deltas (marked)", () => {
  const meter = new RealtimeMeter();
  assert.deepEqual(meter.upstream("response.created", frame({ type: "response.created" })), { kind: "started" });
  const done = meter.upstream("response.done", frame({ type: "response.done", response: { usage: { input_tokens: 100, output_tokens: 50 } } }));
  assert.deepEqual(done, { kind: "done", used: { usage: { input: 100, cacheRead: 0, cacheWrite: 0, output: 50, reasoning: 0 }, seconds: 0, estimated: false } });
  assert.equal(meter.unreported(), undefined, "nothing is left to estimate");
  meter.upstream("response.created", frame({ type: "response.created" }));
  // One second of pcm16 24 kHz assistant audio: 64,000 base64 characters, 20 tokens.
  meter.upstream("response.output_audio.delta", Buffer.alloc(64_000));
  const cut = meter.unreported();
  assert.equal(cut?.estimated, true);
  assert.equal(cut?.usage.output, 20, "only this response's output");
  assert.ok(cut!.usage.input >= 150, "the next response reads the conversation so far again");
});

test("a response.done without usage is that response's estimate, marked and never zero", () => {
  const meter = new RealtimeMeter();
  meter.upstream("response.created", frame({ type: "response.created" }));
  const done = meter.upstream("response.done", frame({ type: "response.done", response: { status: "failed" } }));
  assert.equal(done?.kind, "done");
  assert.ok(done?.kind === "done" && done.used.estimated && done.used.usage.output >= 1);
  assert.equal(meter.unreported(), undefined);
  const tr = meter.upstream("conversation.item.input_audio_transcription.completed",
    frame({ type: "conversation.item.input_audio_transcription.completed", usage: { type: "tokens", input_tokens: 12, output_tokens: 3 } }));
  assert.ok(tr?.kind === "transcribed" && tr.used.usage.input === 12 && !tr.used.estimated);
});

test("duration-billed transcription: billed seconds with a per-second price, else audio tokens (marked)", () => {
  const usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
  assert.deepEqual(billable(usage, 2, { perSecond: 1n }), { usage, units: { milliseconds: 2000 }, estimated: false });
  const tokens = billable(usage, 2, { inputPer1M: 1n });
  assert.equal(tokens.usage.input, 20);
  assert.equal(tokens.estimated, true);
});
