// The responses protocol as an outbound spoke: a model priced `endpoint: responses` (a
// codex-like model its provider serves only on /v1/responses) on an `openai` channel
// (fake-responses), called by chat-completions (openai SDK), messages (@anthropic-ai/sdk)
// and generate-content (@google/genai) clients, streamed and not, through the hub; a
// multi-turn tool loop; reasoning carried back encrypted; usage and cost to the nano-unit as
// on the pass-through path; and /v1/responses of the same model still relayed byte for byte.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI, type GenerateContentResponse } from "@google/genai";
import OpenAI from "openai";
import { startFakeResponses, responsesFakeUsage, type FakeResponses, type Script } from "../helpers/fake-responses.js";
import { M, TEXT, last, openaiClient, startWorld, weatherArgs, weatherSchema, type World } from "../helpers/protocol-world.js";
import { CHANNEL_KEY, TOKEN, channel, rawRequest } from "./support.js";

/** responsesFakeUsage normalised: input 20 incl. 4 cached, output 8 incl. 3 reasoning. */
const canonical = { input: 16, cacheRead: 4, cacheWrite: 0, output: 8, reasoning: 3 };
/** (16 + 4) × 15 + 8 × 120 = 1260 per 1M, × 0.7 = 882 µ: what the pass-through path charges. */
const COST = 882_000n;
const UPSTREAM_MODEL = M.responses;
const BLOB = "gAAAAABpZmFrZS1lbmNyeXB0ZWQtcmVhc29uaW5n";

type Items = Record<string, any>[];

describe("responses protocol out: chat, messages and generate-content clients on a responses-only model", () => {
  let w: World;
  let fake: FakeResponses;
  let script: Script = { kind: "ok" };
  let openai: OpenAI;
  let anthropic: Anthropic;
  let gemini: GoogleGenAI;

  before(async () => {
    fake = await startFakeResponses({ keys: [CHANNEL_KEY], script: () => script });
    w = await startWorld({
      extraChannels: () => [channel("resp", fake.url, { protocol: "openai", models: [M.responses] })],
    });
    openai = openaiClient(w);
    anthropic = new Anthropic({ apiKey: TOKEN, baseURL: w.gw.url, maxRetries: 0 });
    gemini = new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: w.gw.url } });
  });
  after(async () => {
    await w?.close();
    await fake?.close();
  });
  beforeEach(() => { script = { kind: "ok" }; w.reset(); });

  /** The body the responses fake received last. */
  const sent = () => last(fake.received).body as Record<string, any>;

  /** The usage record and log entry of the request made after `mark`, checked. */
  async function billed(mark: number): Promise<void> {
    const rec = await w.record(mark);
    assert.equal(rec.status, 200);
    assert.equal(rec.channel, "resp");
    assert.equal(rec.upstreamModel, UPSTREAM_MODEL);
    assert.deepEqual(rec.usage, canonical);
    const entry = await w.entry(rec.id);
    assert.equal(entry.costNano, COST);
    assert.deepEqual(entry.usage, canonical);
  }

  test("chat-completions, not streamed: converted to /v1/responses, answer and usage back in chat shape", async () => {
    script = { kind: "ok", text: TEXT };
    const mark = w.mark();
    const { data, response } = await openai.chat.completions.create({
      model: M.responses, max_completion_tokens: 300, temperature: 0.5, reasoning_effort: "high",
      messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hi" }],
    }).withResponse();
    assert.equal(data.object, "chat.completion");
    assert.equal(data.model, M.responses);
    assert.equal(data.choices[0].message.content, TEXT);
    assert.equal(data.choices[0].finish_reason, "stop");
    assert.deepEqual(data.usage, {
      prompt_tokens: 20, completion_tokens: 8, total_tokens: 28,
      prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 3 },
    });
    const r = last(fake.received);
    assert.equal(r.path, "/v1/responses");
    assert.equal(r.headers.authorization, `Bearer ${CHANNEL_KEY}`);
    assert.deepEqual(r.body, {
      model: UPSTREAM_MODEL, instructions: "Be brief.",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Say hi" }] }],
      max_output_tokens: 300, temperature: 0.5, reasoning: { effort: "high" }, include: ["reasoning.encrypted_content"], store: false,
    });
    assert.equal(w.openai.received.length, 0, "nothing went to /v1/chat/completions");
    assert.ok(response.headers.get("x-gateway-request-id"));
    await billed(mark);
  });

  test("chat-completions, streamed with include_usage: deltas, finish, usage chunk; billed the same", async () => {
    script = { kind: "ok", text: TEXT, chunks: 6 };
    const mark = w.mark();
    const stream = await openai.chat.completions.create({
      model: M.responses, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "go" }],
    });
    let text = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, TEXT);
    assert.equal(finish, "stop");
    assert.equal(usage?.prompt_tokens, 20);
    assert.deepEqual(usage?.completion_tokens_details, { reasoning_tokens: 3 });
    assert.equal(sent().stream, true);
    await billed(mark);
  });

  test("a multi-turn tool loop from a chat-completions client, streamed and not", async () => {
    const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "get_weather", description: "Weather", parameters: weatherSchema } }];
    for (const streamed of [false, true]) {
      script = { kind: "ok", calls: [{ name: "get_weather", args: JSON.stringify(weatherArgs), callId: "call_w1" }] };
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Zürich?" }];
      let call: OpenAI.ChatCompletionMessageToolCall | undefined;
      if (streamed) {
        const s = openai.chat.completions.stream({ model: M.responses, messages, tools, tool_choice: "required", parallel_tool_calls: false });
        const final = await s.finalChatCompletion();
        call = final.choices[0].message.tool_calls?.[0];
        assert.equal(final.choices[0].finish_reason, "tool_calls");
      } else {
        const c = await openai.chat.completions.create({ model: M.responses, messages, tools, tool_choice: "required", parallel_tool_calls: false });
        call = c.choices[0].message.tool_calls?.[0];
        assert.equal(c.choices[0].finish_reason, "tool_calls");
      }
      assert.ok(call && call.type === "function");
      assert.equal(call.id, "call_w1");
      assert.deepEqual(JSON.parse(call.function.arguments), weatherArgs);
      const first = sent();
      assert.deepEqual(first.tools, [{ type: "function", name: "get_weather", description: "Weather", parameters: weatherSchema, strict: false }]);
      assert.equal(first.tool_choice, "required");
      assert.equal(first.parallel_tool_calls, false);

      script = { kind: "ok", text: "It rains in Zürich." };
      messages.push({ role: "assistant", content: null, tool_calls: [call] }, { role: "tool", tool_call_id: call.id, content: "12°C, rain" });
      const answer = await openai.chat.completions.create({ model: M.responses, messages, tools });
      assert.equal(answer.choices[0].message.content, "It rains in Zürich.");
      assert.deepEqual((sent().input as Items).slice(1), [
        { type: "function_call", call_id: "call_w1", name: "get_weather", arguments: JSON.stringify(weatherArgs) },
        { type: "function_call_output", call_id: "call_w1", output: "12°C, rain" },
      ]);
    }
  });

  test("messages, not streamed: thinking with its encrypted reasoning as signature, text, usage in Anthropic shape", async () => {
    script = { kind: "ok", text: "Bonjour", reasoning: { summary: ["Greeting in French."], encrypted: BLOB } };
    const mark = w.mark();
    const msg = await anthropic.messages.create({
      model: M.responses, max_tokens: 2000, system: "Answer in French.",
      thinking: { type: "enabled", budget_tokens: 1024 }, messages: [{ role: "user", content: "Say hello" }],
    });
    assert.equal(msg.model, M.responses);
    assert.deepEqual(msg.content.map((b) => b.type), ["thinking", "text"]);
    // Sealed with its issuer (src/protocols/reasoning.ts): it goes back only to OpenAI.
    assert.deepEqual(msg.content[0], { type: "thinking", thinking: "Greeting in French.", signature: `gw:openai:${BLOB}` });
    assert.equal((msg.content[1] as Anthropic.TextBlock).text, "Bonjour");
    assert.equal(msg.stop_reason, "end_turn");
    assert.equal(msg.usage.input_tokens, 16);
    assert.equal(msg.usage.cache_read_input_tokens, 4);
    assert.equal(msg.usage.output_tokens, 8);
    const body = sent();
    assert.equal(body.instructions, "Answer in French.");
    assert.equal(body.max_output_tokens, 2000);
    assert.deepEqual(body.reasoning, { effort: "minimal" });
    await billed(mark);
  });

  test("messages, streamed: the SDK's message stream accumulates thinking, text and a tool call", async () => {
    script = {
      kind: "ok", text: "Let me check.", reasoning: { summary: ["Need the weather."], encrypted: BLOB },
      calls: [{ name: "get_weather", args: JSON.stringify(weatherArgs), callId: "call_m1" }],
    };
    const mark = w.mark();
    const s = anthropic.messages.stream({
      model: M.responses, max_tokens: 1000, thinking: { type: "enabled", budget_tokens: 4000 },
      tools: [{ name: "get_weather", description: "Weather", input_schema: weatherSchema }],
      messages: [{ role: "user", content: "Weather in Zürich?" }],
    });
    let text = "";
    s.on("text", (t) => { text += t; });
    const final = await s.finalMessage();
    assert.equal(text, "Let me check.");
    assert.deepEqual(final.content.map((b) => b.type), ["thinking", "text", "tool_use"]);
    assert.deepEqual(final.content[0], { type: "thinking", thinking: "Need the weather.", signature: `gw:openai:${BLOB}` });
    assert.deepEqual(final.content[2], { type: "tool_use", id: "call_m1", name: "get_weather", input: weatherArgs });
    assert.equal(final.stop_reason, "tool_use");
    assert.equal(final.usage.output_tokens, 8);
    await billed(mark);
  });

  test("a Claude-Code-style tool loop: the thinking goes back as an encrypted reasoning item, the result as function_call_output", async () => {
    script = { kind: "ok", reasoning: { summary: ["Call the tool."], encrypted: BLOB }, calls: [{ name: "get_weather", args: '{"city":"Bern"}', callId: "call_c1" }] };
    const tools: Anthropic.Tool[] = [{ name: "get_weather", description: "Weather", input_schema: weatherSchema }];
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Weather in Bern?" }];
    const first = await anthropic.messages.create({ model: M.responses, max_tokens: 3000, thinking: { type: "enabled", budget_tokens: 2048 }, tools, messages });
    assert.equal(first.stop_reason, "tool_use");
    script = { kind: "ok", text: "Sunny in Bern." };
    messages.push({ role: "assistant", content: first.content as Anthropic.ContentBlockParam[] }, {
      role: "user", content: [{ type: "tool_result", tool_use_id: "call_c1", content: "sunny, 21°C" }],
    });
    const second = await anthropic.messages.create({ model: M.responses, max_tokens: 3000, thinking: { type: "enabled", budget_tokens: 2048 }, tools, messages });
    assert.equal((second.content.find((b) => b.type === "text") as Anthropic.TextBlock).text, "Sunny in Bern.");
    const body = sent();
    assert.deepEqual(body.input, [
      { type: "message", role: "user", content: [{ type: "input_text", text: "Weather in Bern?" }] },
      { type: "reasoning", summary: [{ type: "summary_text", text: "Call the tool." }], encrypted_content: BLOB },
      { type: "function_call", call_id: "call_c1", name: "get_weather", arguments: '{"city":"Bern"}' },
      { type: "function_call_output", call_id: "call_c1", output: "sunny, 21°C" },
    ]);
    assert.deepEqual(body.include, ["reasoning.encrypted_content"]);
    assert.equal(body.store, false);
  });

  test("generate-content, not streamed and streamed (with reasoning as thoughts): text, usage metadata, billed the same", async () => {
    script = { kind: "ok", text: TEXT, chunks: 5 };
    let mark = w.mark();
    const whole = await gemini.models.generateContent({
      model: M.responses, contents: "Say hi", config: { systemInstruction: "Be brief.", maxOutputTokens: 100 },
    });
    assert.equal(whole.text, TEXT);
    assert.equal(whole.usageMetadata?.promptTokenCount, 20);
    assert.equal(whole.usageMetadata?.cachedContentTokenCount, 4);
    assert.equal(sent().instructions, "Be brief.");
    assert.equal(sent().max_output_tokens, 100);
    await billed(mark);

    script = { kind: "ok", text: TEXT, chunks: 5, reasoning: { summary: ["Plan the greeting."], encrypted: BLOB } };
    mark = w.mark();
    const chunks: GenerateContentResponse[] = [];
    for await (const c of await gemini.models.generateContentStream({ model: M.responses, contents: "Say hi" })) chunks.push(c);
    assert.equal(chunks.map((c) => c.text ?? "").join(""), TEXT);
    assert.ok(chunks.length >= 2);
    assert.equal(chunks.at(-1)?.candidates?.[0]?.finishReason, "STOP");
    const thoughts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []).filter((p) => p.thought);
    assert.equal(thoughts.map((p) => p.text ?? "").join(""), "Plan the greeting.", "the reasoning summary arrives as thought parts");
    assert.equal(sent().stream, true);
    await billed(mark);
  });

  test("generate-content tool loop: functionCall out, functionResponse back as function_call_output", async () => {
    script = { kind: "ok", calls: [{ name: "get_weather", args: '{"city":"Oslo"}', callId: "call_g1" }] };
    const tools = [{ functionDeclarations: [{ name: "get_weather", description: "Weather", parametersJsonSchema: weatherSchema }] }];
    const first = await gemini.models.generateContent({ model: M.responses, contents: "Weather in Oslo?", config: { tools } });
    const call = first.functionCalls?.[0];
    assert.equal(call?.name, "get_weather");
    assert.deepEqual(call?.args, { city: "Oslo" });
    script = { kind: "ok", text: "Cold." };
    const second = await gemini.models.generateContent({
      model: M.responses, config: { tools },
      contents: [
        { role: "user", parts: [{ text: "Weather in Oslo?" }] },
        { role: "model", parts: [{ functionCall: { id: call?.id, name: "get_weather", args: { city: "Oslo" } } }] },
        { role: "user", parts: [{ functionResponse: { id: call?.id, name: "get_weather", response: { temp: -3 } } }] },
      ],
    });
    assert.equal(second.text, "Cold.");
    const input = sent().input as Items;
    assert.equal(input[1].type, "function_call");
    assert.equal(input[2].type, "function_call_output");
    assert.equal(input[2].call_id, input[1].call_id);
    assert.match(input[2].output, /-3/);
  });

  test("an answer cut at max_output_tokens stops as `length`; a stream cut before response.completed ends in an error", async () => {
    script = { kind: "ok", text: "Once upon", incomplete: "max_output_tokens" };
    const cut = await openai.chat.completions.create({ model: M.responses, messages: [{ role: "user", content: "story" }] });
    assert.equal(cut.choices[0].finish_reason, "length");

    script = { kind: "ok", text: "Once upon a time", chunks: 4, cutAfter: 6 };
    const mark = w.mark();
    const s = await openai.chat.completions.create({ model: M.responses, stream: true, messages: [{ role: "user", content: "story" }] });
    await assert.rejects(async () => { for await (const _ of s) { /* drain */ } }, (e: unknown) => {
      assert.match(String(e), /ended before the response completed/);
      return true;
    });
    const rec = await w.record(mark);
    assert.equal(rec.usage, undefined, "an unfinished answer is billed as an estimate, never as reported usage");
  });

  test("a stream whose upstream lingers after response.completed still ends, settled, for the client", async () => {
    script = { kind: "ok", text: "done already", linger: true };
    const mark = w.mark();
    const s = anthropic.messages.stream({ model: M.responses, max_tokens: 100, messages: [{ role: "user", content: "x" }] });
    const final = await s.finalMessage();
    assert.equal((final.content[0] as Anthropic.TextBlock).text, "done already");
    assert.equal(final.stop_reason, "end_turn");
    await billed(mark);
  });

  test("fields the responses protocol drops are not sent, and are named in x-gateway-dropped-fields", async () => {
    script = { kind: "ok", text: "ok" };
    const { data, response } = await openai.chat.completions.create({
      model: M.responses, seed: 7, frequency_penalty: 0.5, presence_penalty: 0, messages: [{ role: "user", content: "x" }],
    }).withResponse();
    assert.equal(data.choices[0].message.content, "ok");
    const body = sent();
    for (const k of ["seed", "frequency_penalty", "presence_penalty"]) assert.equal(k in body, false, k);
    const named = (response.headers.get("x-gateway-dropped-fields") ?? "").split(/,\s*/).sort();
    assert.deepEqual(named, ["frequency_penalty", "seed"]);
  });

  test("a stop sequence is refused with a 400 naming the client's field; nothing reaches the upstream", async () => {
    const before = fake.received.length;
    await assert.rejects(openai.chat.completions.create({ model: M.responses, stop: ["END"], messages: [{ role: "user", content: "x" }] }),
      (e: unknown) => {
        assert.ok(e instanceof OpenAI.BadRequestError, String(e));
        assert.match(e.message, /stop/);
        return true;
      });
    assert.equal(fake.received.length, before);
  });

  test("an upstream 4xx reaches the client with the upstream's message", async () => {
    script = { kind: "error", status: 400, message: "Unsupported parameter: 'temperature' is not supported with this model." };
    await assert.rejects(openai.chat.completions.create({ model: M.responses, temperature: 0.3, messages: [{ role: "user", content: "x" }] }),
      (e: unknown) => {
        assert.ok(e instanceof OpenAI.BadRequestError, String(e));
        assert.match(e.message, /Unsupported parameter: 'temperature'/);
        return true;
      });
  });

  test("/v1/responses of the same model is still passed through byte for byte (but for the output limit), usage billed the same", async () => {
    script = { kind: "ok", text: "pass" };
    const mark = w.mark();
    // store: false (true is refused unless the model allows storing): sent as is.
    const raw = `{"model":"${M.responses}",  "input":"x" , "store":false}`;
    const res = await rawRequest(`${w.gw.url}/v1/responses`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: raw,
    });
    assert.equal(res.status, 200);
    assert.equal(res.json.output_text ?? res.json.output[0].content[0].text, "pass");
    assert.deepEqual(res.json.usage, responsesFakeUsage);
    // The client set no output limit: the one reserved for is spliced in, the rest untouched.
    assert.equal(last(fake.received).raw.toString("utf8"), `{"max_output_tokens":4096,${raw.slice(1)}`, "the client's bytes, untouched but for the limit");
    const rec = await w.record(mark);
    assert.deepEqual(rec.usage, canonical);
    assert.equal((await w.entry(rec.id)).costNano, COST);
  });
});
