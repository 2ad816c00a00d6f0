// The cost in a stream's tail: each wire's stamp sets (or removes) the field in the final
// usage event only, keeping every other byte; pass-through taps hold the final usage event
// (chat-completions' usage chunk, messages' message_delta) with the terminal one, and send it
// on before anything else that follows.

import assert from "node:assert/strict";
import { test } from "node:test";
import { anthropicStreamEnds, anthropicUsageReader } from "../../src/protocols/anthropic/stream-tap.js";
import { ChatStreamTap } from "../../src/protocols/openai/chat-stream-tap.js";
import { streamCost } from "../../src/protocols/stream-cost.js";
import { SseUsageTap } from "../../src/protocols/usage-tap.js";

const chatTap = () => new ChatStreamTap(false);
const messagesTap = () => new SseUsageTap(anthropicUsageReader(), anthropicStreamEnds);

const data = (o: object) => `data: ${JSON.stringify(o)}\n\n`;

test("chat-completions: the usage chunk gets usage.gateway_cost; [DONE] and the bytes before are untouched", () => {
  const before = data({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
  const tail = before + data({ id: "c", choices: [], usage: { prompt_tokens: 1 } }) + "data: [DONE]\n\n";
  const out = streamCost["chat-completions"](tail, "0.000123");
  assert.equal(out, before + data({ id: "c", choices: [], usage: { prompt_tokens: 1, gateway_cost: "0.000123" } }) + "data: [DONE]\n\n");
});

test("messages: message_delta's usage, its event line kept; message_start's usage is not the final one", () => {
  const delta = `event: message_delta\ndata: ${JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 5 } })}\n\n`;
  const stop = `event: message_stop\ndata: {"type":"message_stop"}\n\n`;
  const out = streamCost.messages(delta + stop, "1.5");
  assert.equal(out, `event: message_delta\ndata: ${JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 5, gateway_cost: "1.5" } })}\n\n` + stop);
  const start = `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { usage: { input_tokens: 3 } } })}\n\n`;
  assert.equal(streamCost.messages(start, "1.5"), start);
});

test("responses: response.completed's response.usage; generate-content: usageMetadata.gatewayCost (CRLF events too)", () => {
  const completed = `event: response.completed\r\ndata: ${JSON.stringify({ type: "response.completed", response: { usage: { input_tokens: 2 } } })}\r\n\r\n`;
  assert.match(streamCost.responses(completed, "2"), /"usage":\{"input_tokens":2,"gateway_cost":"2"\}/);
  assert.match(streamCost.responses(completed, "2"), /^event: response\.completed\n/);
  const last = `data: ${JSON.stringify({ candidates: [{ finishReason: "STOP" }], usageMetadata: { promptTokenCount: 4 } })}\r\n\r\n`;
  assert.match(streamCost["generate-content"](last, "0"), /"usageMetadata":\{"promptTokenCount":4,"gatewayCost":"0"\}/);
});

test("no cost to show: an upstream's field is taken out; a tail without one is returned as it is", () => {
  const tail = data({ choices: [], usage: { prompt_tokens: 1, gateway_cost: "9" } }) + "data: [DONE]\n\n";
  assert.equal(streamCost["chat-completions"](tail, undefined), data({ choices: [], usage: { prompt_tokens: 1 } }) + "data: [DONE]\n\n");
  const plain = data({ choices: [], usage: { prompt_tokens: 1 } }) + "data: [DONE]\n\n";
  assert.equal(streamCost["chat-completions"](plain, undefined), plain);
  const error = data({ error: { message: "cut" } });
  assert.equal(streamCost["chat-completions"](error, "1"), error, "no usage event: nothing to stamp");
});

test("a chat tap holds the usage chunk with [DONE]; a comment after it waits too", () => {
  const content = data({ choices: [{ index: 0, delta: { content: "hi" }, finish_reason: null }] });
  const usage = data({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
  const tap = chatTap();
  assert.equal(tap.push(Buffer.from(content + usage + ": keep-alive\n\n")), content);
  assert.equal(tap.push(Buffer.from("data: [DONE]\n\n")), "");
  assert.equal(tap.end(), usage + ": keep-alive\n\n" + "data: [DONE]\n\n");
  assert.equal(tap.unsent, "");
});

test("a messages tap holds message_delta with message_stop; anything else that follows sends it on first", () => {
  const delta = `event: message_delta\ndata: ${JSON.stringify({ type: "message_delta", delta: {}, usage: { output_tokens: 5 } })}\n\n`;
  const ping = `event: ping\ndata: {"type":"ping"}\n\n`;
  const stop = `event: message_stop\ndata: {"type":"message_stop"}\n\n`;
  const held = messagesTap();
  assert.equal(held.push(Buffer.from(delta)), "");
  assert.equal(held.push(Buffer.from(stop)), "");
  assert.equal(held.end(), delta + stop);
  const sentOn = messagesTap();
  assert.equal(sentOn.push(Buffer.from(delta + ping)), delta + ping);
});

test("a stream that ends without its terminal event hands back the held usage event as unsent", () => {
  const usage = data({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
  const tap = chatTap();
  assert.equal(tap.push(Buffer.from(usage)), "");
  assert.equal(tap.end(), "");
  assert.equal(tap.ending, undefined);
  assert.equal(tap.unsent, usage, "it goes out before the gateway's error event");
});
