// OpenAI-compatible upstreams such as vLLM and Ollama stream a tool call whole: its id, name
// and complete arguments in one chunk. Replayed through every converted pair whose channel
// speaks chat-completions (messages, responses and generate-content clients), each client must
// get the arguments intact, the call's stop reason, and the upstream's usage billed.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { FinishReason, GoogleGenAI, type GenerateContentResponse } from "@google/genai";
import OpenAI from "openai";
import { CANONICAL, M, openaiClient, startWorld, weatherArgs, weatherSchema, type World } from "../helpers/protocol-world.js";
import { TOKEN, channel } from "./support.js";

/** A chat-channel model the responses route serves (converted). */
const RC = "wt-gpt-4.1";

describe("a tool call streamed whole in one chunk (vLLM, Ollama), every converted pair from a chat channel", () => {
  let w: World;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let google: GoogleGenAI;

  before(async () => {
    w = await startWorld({
      extraModels: { [RC]: { endpoint: ["chat", "responses"], price: { input: 2, output: 8 } } },
      extraChannels: (u) => [channel("oa-rc", u.openai, { protocol: "openai", models: [RC] })],
    });
    openai = openaiClient(w);
    anthropic = new Anthropic({ apiKey: TOKEN, baseURL: w.gw.url, maxRetries: 0 });
    google = new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: w.gw.url } });
  });
  after(async () => { await w?.close(); });
  beforeEach(() => {
    w.reset();
    w.scripts.openai = () => ({ kind: "tool_call", name: "get_weather", args: JSON.stringify(weatherArgs), whole: true });
  });

  test("messages client: the input_json_delta carries the whole arguments; stop_reason tool_use", async () => {
    const mark = w.mark();
    const s = anthropic.messages.stream({
      model: M.openai, max_tokens: 200, messages: [{ role: "user", content: "Weather?" }],
      tools: [{ name: "get_weather", description: "Weather for a city", input_schema: { ...weatherSchema } }],
    });
    const final = await s.finalMessage();
    const use = final.content.find((b) => b.type === "tool_use");
    assert.ok(use && use.type === "tool_use", "a tool_use block");
    assert.equal(use.name, "get_weather");
    assert.equal(use.id, "call_fake1");
    assert.deepEqual(use.input, weatherArgs);
    assert.equal(final.stop_reason, "tool_use");
    assert.deepEqual((await w.record(mark)).usage, CANONICAL.openai);
  });

  test("responses client: the function_call item and its arguments events carry the whole arguments", async () => {
    const mark = w.mark();
    const s = openai.responses.stream({
      model: RC, input: "Weather?",
      tools: [{ type: "function", name: "get_weather", description: "Weather for a city", parameters: { ...weatherSchema }, strict: false }],
    });
    const deltas: string[] = [];
    let done: string | undefined;
    for await (const e of s) {
      if (e.type === "response.function_call_arguments.delta") deltas.push(e.delta);
      if (e.type === "response.function_call_arguments.done") done = e.arguments;
    }
    const final = await s.finalResponse();
    const call = final.output.find((o) => o.type === "function_call");
    assert.ok(call && call.type === "function_call", "a function_call item");
    assert.equal(call.name, "get_weather");
    assert.equal(call.call_id, "call_fake1");
    assert.deepEqual(JSON.parse(call.arguments), weatherArgs);
    assert.deepEqual(JSON.parse(deltas.join("")), weatherArgs);
    assert.deepEqual(JSON.parse(done ?? "null"), weatherArgs);
    assert.deepEqual((await w.record(mark)).usage, CANONICAL.openai);
  });

  test("generate-content client: the functionCall has the whole args", async () => {
    const mark = w.mark();
    const s = await google.models.generateContentStream({
      model: M.openai, contents: "Weather?",
      config: { tools: [{ functionDeclarations: [{ name: "get_weather", parametersJsonSchema: weatherSchema }] }] },
    });
    const chunks: GenerateContentResponse[] = [];
    for await (const c of s) chunks.push(c);
    const calls = chunks.flatMap((c) => c.functionCalls ?? []);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, "get_weather");
    assert.deepEqual(calls[0].args, weatherArgs);
    assert.equal(chunks.map((c) => c.candidates?.[0]?.finishReason).filter(Boolean).at(-1), FinishReason.STOP);
    assert.deepEqual((await w.record(mark)).usage, CANONICAL.openai);
  });
});
