// Kind bedrock, Converse path: models that are not Claude (Nova, Llama, …) go through
// Bedrock's Converse and ConverseStream, while a Claude id on the same channel still goes
// through InvokeModel. The fake (fake-bedrock-converse.ts) checks SigV4 and refuses
// Anthropic-only fields as Bedrock does. Anthropic SDK clients pass through (plain and
// streamed), an OpenAI SDK chat client with a tool is converted; billing is exact from
// Converse's usage, which a stream reports only in its last event (metadata). A token count
// for a Converse model, which Bedrock's CountTokens refuses, is the gateway's estimate (or
// another channel's count) without asking Bedrock; Claude's is still CountTokens'.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { Message } from "@smithy/eventstream-codec";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { anthropicMessage } from "../../src/providers/bedrock/converse-answer.js";
import { converseRequest } from "../../src/providers/bedrock/converse-request.js";
import { ConverseStreamReader } from "../../src/providers/bedrock/converse-stream.js";
import { isAnthropicModel } from "../../src/providers/bedrock/model-api.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { CONVERSE_COUNT, CONVERSE_TEXT, CONVERSE_TOOL, CONVERSE_USAGE, INVOKE_TEXT, converseEventFrame, converseProblem, startFakeConverse, type ConverseReceived, type FakeConverse } from "../helpers/fake-bedrock-converse.js";
import { countedBody } from "../helpers/fake-bedrock.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { dataOf, sseEvents } from "../helpers/client-wire.js";
import { TOKEN, config } from "./support.js";

const REGION = "us-west-2";
const MAIN = { accessKeyId: "AKIACONVERSEKEY00001", secretAccessKey: "converse/secret+AbCdEfGhIjKlMnOpQrStUvWx01" };
const NOVA = "us.amazon.nova-pro-v1:0";
const LLAMA = "meta.llama3-3-70b-instruct-v1:0";
const CLAUDE = "global.anthropic.claude-haiku-4-5-20251001-v1:0";

/** $1 / $4 per million tokens, × group default's 0.7, in nano-units. */
function nanoFor(input: number, output: number): bigint {
  return 700n * BigInt(input) + 700n * 4n * BigInt(output);
}

const price = { price: { input: 1, output: 4 } };
const weatherTool = {
  name: "get_weather", description: "The weather in a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" }, unit: { type: "string" } }, required: ["city"] },
};

describe("kind bedrock: Converse for models that are not Claude", { concurrency: true }, () => {
  let fake: FakeConverse;
  let gw: TestGateway;
  let anthropic: Anthropic;
  let openai: OpenAI;

  before(async () => {
    fake = await startFakeConverse({
      region: REGION, accessKeys: [MAIN],
      script: (r) => {
        const prompt = JSON.stringify(r.body.messages ?? "");
        if (prompt.includes("no-metadata")) return { kind: "no-metadata" };
        if (prompt.includes("throttle-mid-stream")) return { kind: "exception", exceptionType: "throttlingException", message: "Too many requests, please wait." };
        if (prompt.includes("invalid-request")) return { kind: "error", status: 400, errorType: "ValidationException", message: "The model returned the following errors: max_tokens too high" };
        return undefined;
      },
    });
    gw = await startTestGateway(config({
      // "claude-lookalike" is Nova upstream: what counts is the model_map's id, not the name.
      models: { "nova-pro": price, "llama-3-3": price, "claude-haiku": price, "claude-lookalike": price },
      channels: [{
        name: "bedrock-mixed", kind: "bedrock", region: REGION, base_url: fake.url, groups: ["default"],
        models: ["nova-pro", "llama-3-3", "claude-haiku", "claude-lookalike"],
        credentials: { access_key_id: MAIN.accessKeyId, secret_access_key: MAIN.secretAccessKey },
        model_map: { "nova-pro": NOVA, "llama-3-3": LLAMA, "claude-haiku": CLAUDE, "claude-lookalike": NOVA },
      }],
    }));
    anthropic = new Anthropic({ apiKey: TOKEN, baseURL: gw.url, maxRetries: 0 });
    openai = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  function receivedFor(tag: string): ConverseReceived[] {
    return fake.received.filter((r) => JSON.stringify(r.body.messages ?? "").includes(tag));
  }

  test("an Anthropic SDK message to Nova goes to Converse: signed, Converse's body, the answer as a message, billed exactly", async () => {
    const tag = "plain-converse";
    // Sampling fields as clients still send them (this SDK's types no longer list them all).
    const params = {
      model: "nova-pro", max_tokens: 300, temperature: 0.2, top_p: 0.9, top_k: 40, stop_sequences: ["END"],
      system: "Answer briefly.", metadata: { user_id: "u-1" },
      messages: [{ role: "user", content: tag }],
    } as Anthropic.MessageCreateParamsNonStreaming;
    const { data, response } = await anthropic.messages.create(params).withResponse();
    assert.equal(data.content.length, 1);
    assert.equal(data.content[0].type === "text" && data.content[0].text, CONVERSE_TEXT);
    assert.equal(data.stop_reason, "end_turn");
    assert.equal(data.model, NOVA);
    assert.match(data.id, /^msg_bdrk_/);
    assert.equal(data.usage.input_tokens, CONVERSE_USAGE.input);
    assert.equal(data.usage.output_tokens, CONVERSE_USAGE.output);
    const [r] = receivedFor(tag);
    assert.equal(r.auth, "signature-ok");
    assert.equal(r.credential, MAIN.accessKeyId);
    assert.equal(r.path, `/model/${encodeURIComponent(NOVA)}/converse`);
    assert.equal(r.headers.accept, "application/json");
    // Exactly Converse's fields: top_k and metadata have no counterpart and are dropped.
    assert.deepEqual(r.body, {
      messages: [{ role: "user", content: [{ text: tag }] }],
      system: [{ text: "Answer briefly." }],
      inferenceConfig: { maxTokens: 300, temperature: 0.2, topP: 0.9, stopSequences: ["END"] },
    });
    const e = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    assert.equal(e.channel, "bedrock-mixed");
    assert.equal(e.estimated, false);
    assert.equal(e.usage.input, CONVERSE_USAGE.input);
    assert.equal(e.usage.output, CONVERSE_USAGE.output);
    assert.equal(e.costNano, nanoFor(CONVERSE_USAGE.input, CONVERSE_USAGE.output));
  });

  test("an Anthropic SDK stream to Llama: ConverseStream events become Anthropic SSE; the input tokens metadata reports last are billed", async () => {
    const tag = "streamed-converse";
    const { data: stream, response } = await anthropic.messages.create({
      model: "llama-3-3", max_tokens: 100, messages: [{ role: "user", content: tag }], stream: true,
    }).withResponse();
    assert.match(String(response.headers.get("content-type")), /^text\/event-stream/);
    const types: string[] = [];
    let text = "";
    let startInput = -1;
    let finalUsage: Anthropic.MessageDeltaUsage | undefined;
    let stop: string | null | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "message_start") startInput = event.message.usage.input_tokens;
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
      if (event.type === "message_delta") {
        finalUsage = event.usage;
        stop = event.delta.stop_reason;
      }
    }
    assert.equal(text, CONVERSE_TEXT);
    assert.deepEqual(types, ["message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    assert.equal(startInput, 0, "Converse tells no usage before its metadata event");
    assert.equal(stop, "end_turn");
    assert.equal(finalUsage?.input_tokens, CONVERSE_USAGE.input);
    assert.equal(finalUsage?.output_tokens, CONVERSE_USAGE.output);
    const [r] = receivedFor(tag);
    assert.equal(r.auth, "signature-ok");
    assert.equal(r.path, `/model/${encodeURIComponent(LLAMA)}/converse-stream`);
    assert.equal(r.headers.accept, "application/vnd.amazon.eventstream");
    const e = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    assert.equal(e.estimated, false);
    assert.equal(e.usage.input, CONVERSE_USAGE.input);
    assert.equal(e.usage.output, CONVERSE_USAGE.output);
    assert.equal(e.costNano, nanoFor(CONVERSE_USAGE.input, CONVERSE_USAGE.output));
  });

  test("an OpenAI SDK chat stream with a tool is converted: toolConfig out, the tool call back, billed exactly; the tool's result goes back as toolResult", async () => {
    const tag = "converted-tool-call";
    const tools: OpenAI.ChatCompletionTool[] = [{
      type: "function", function: { name: weatherTool.name, description: weatherTool.description, parameters: weatherTool.input_schema },
    }];
    const { data: stream, response } = await openai.chat.completions.create({
      model: "nova-pro", messages: [{ role: "user", content: `${tag}: weather in Paris?` }], tools, tool_choice: "required",
      stream: true, stream_options: { include_usage: true },
    }).withResponse();
    let text = "";
    let args = "";
    let name = "";
    let id = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      text += choice?.delta.content ?? "";
      for (const call of choice?.delta.tool_calls ?? []) {
        args += call.function?.arguments ?? "";
        name ||= call.function?.name ?? "";
        id ||= call.id ?? "";
      }
      finish = choice?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, CONVERSE_TOOL.preamble);
    assert.equal(name, weatherTool.name);
    assert.equal(id, CONVERSE_TOOL.id);
    assert.deepEqual(JSON.parse(args), CONVERSE_TOOL.input);
    assert.equal(finish, "tool_calls");
    assert.equal(usage?.prompt_tokens, CONVERSE_USAGE.input);
    assert.equal(usage?.completion_tokens, CONVERSE_USAGE.output);
    const [r] = receivedFor(tag);
    assert.equal(r.auth, "signature-ok");
    assert.equal(r.operation, "converse-stream");
    assert.deepEqual(r.body.toolConfig, {
      tools: [{ toolSpec: { name: weatherTool.name, description: weatherTool.description, inputSchema: { json: weatherTool.input_schema } } }],
      toolChoice: { any: {} },
    });
    const e = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    assert.equal(e.inboundProtocol, "chat-completions");
    assert.equal(e.estimated, false);
    assert.equal(e.costNano, nanoFor(CONVERSE_USAGE.input, CONVERSE_USAGE.output));

    // The next turn: the call and its result go back as toolUse and toolResult.
    const next = await openai.chat.completions.create({
      model: "nova-pro", tools,
      messages: [
        { role: "user", content: `${tag}: weather in Paris?` },
        { role: "assistant", content: CONVERSE_TOOL.preamble, tool_calls: [{ id, type: "function", function: { name, arguments: args } }] },
        { role: "tool", tool_call_id: id, content: "18 degrees, sunny" },
      ],
    });
    assert.equal(next.choices[0].message.content, CONVERSE_TEXT);
    assert.equal(next.choices[0].finish_reason, "stop");
    const second = receivedFor(tag)[1];
    assert.equal(second.operation, "converse");
    const turns = second.body.messages as { role: string; content: Record<string, unknown>[] }[];
    assert.deepEqual(turns.map((t) => t.role), ["user", "assistant", "user"]);
    assert.deepEqual(turns[1].content, [{ text: CONVERSE_TOOL.preamble }, { toolUse: { toolUseId: id, name, input: CONVERSE_TOOL.input } }]);
    assert.deepEqual(turns[2].content, [{ toolResult: { toolUseId: id, content: [{ text: "18 degrees, sunny" }] } }]);
  });

  test("an Anthropic tool call without streaming comes back as tool_use blocks", async () => {
    const tag = "plain-tool-call";
    const data = await anthropic.messages.create({
      model: "nova-pro", max_tokens: 200, tools: [weatherTool], tool_choice: { type: "tool", name: weatherTool.name },
      messages: [{ role: "user", content: tag }],
    });
    assert.equal(data.stop_reason, "tool_use");
    assert.deepEqual(data.content, [
      { type: "text", text: CONVERSE_TOOL.preamble },
      { type: "tool_use", id: CONVERSE_TOOL.id, name: weatherTool.name, input: CONVERSE_TOOL.input },
    ]);
    const [r] = receivedFor(tag);
    assert.deepEqual((r.body.toolConfig as { toolChoice: unknown }).toolChoice, { tool: { name: weatherTool.name } });
  });

  test("a Claude id on the same channel still goes to InvokeModel with Bedrock's Anthropic body", async () => {
    const tag = "claude-on-invoke";
    const data = await anthropic.messages.create({ model: "claude-haiku", max_tokens: 50, messages: [{ role: "user", content: tag }] });
    assert.equal(data.content[0].type === "text" && data.content[0].text, INVOKE_TEXT);
    const [r] = receivedFor(tag);
    assert.equal(r.auth, "signature-ok");
    assert.equal(r.path, `/model/${encodeURIComponent(CLAUDE)}/invoke`);
    assert.equal(r.body.anthropic_version, "bedrock-2023-05-31");
    assert.deepEqual(r.body.messages, [{ role: "user", content: tag }]);
  });

  for (const model of ["nova-pro", "llama-3-3", "claude-lookalike"]) {
    test(`a token count for ${model} (served through Converse) is the gateway's estimate: Bedrock, which cannot count it, is not asked`, async () => {
      const tag = `count-converse-${model}`;
      const { data: counted, response } = await anthropic.messages.countTokens({
        model, system: "Be brief.", messages: [{ role: "user", content: `${tag}: what is the weather in Paris today?` }], tools: [weatherTool],
      }).withResponse();
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("x-gateway-token-count"), "estimate");
      assert.ok(counted.input_tokens > 0, String(counted.input_tokens));
      assert.deepEqual(fake.received.filter((x) => JSON.stringify(x.body).includes(tag)), [], "no request to Bedrock for the count");
    });
  }

  test("a token count for Claude on the same channel is still CountTokens, with InvokeModel's body for the profile's foundation model", async () => {
    const tag = "count-claude";
    const { data: counted, response } = await anthropic.messages.countTokens({
      model: "claude-haiku", system: "Be brief.", messages: [{ role: "user", content: tag }],
    }).withResponse();
    assert.equal(counted.input_tokens, CONVERSE_COUNT);
    assert.equal(response.headers.get("x-gateway-token-count"), null, "not an estimate");
    const [r] = fake.received.filter((x) => x.operation === "count-tokens" && JSON.stringify(countedBody(x.body)).includes(tag));
    assert.equal(r.auth, "signature-ok");
    assert.equal(r.path, `/model/${encodeURIComponent(CLAUDE.slice("global.".length))}/count-tokens`);
    assert.deepEqual(countedBody(r.body).messages, [{ role: "user", content: tag }]);
  });

  test("a model one channel maps to Nova and another to Claude is counted by the Claude channel, whatever their priorities", async () => {
    const tag = "count-by-the-other-channel";
    const channel = (name: string, upstream: string, priority: number) => ({
      name, kind: "bedrock", region: REGION, base_url: fake.url, groups: ["default"], models: ["mixed"], priority,
      credentials: { access_key_id: MAIN.accessKeyId, secret_access_key: MAIN.secretAccessKey }, model_map: { mixed: upstream },
    });
    const two = await startTestGateway(config({ models: { mixed: price }, channels: [channel("nova-first", NOVA, 10), channel("claude-second", CLAUDE, 0)] }));
    try {
      const client = new Anthropic({ apiKey: TOKEN, baseURL: two.url, maxRetries: 0 });
      const { data: counted, response } = await client.messages.countTokens({ model: "mixed", messages: [{ role: "user", content: tag }] }).withResponse();
      assert.equal(counted.input_tokens, CONVERSE_COUNT);
      assert.equal(response.headers.get("x-gateway-token-count"), null, "counted, not estimated");
      const asked = fake.received.filter((x) => JSON.stringify(countedBody(x.body)).includes(tag) || JSON.stringify(x.body).includes(tag));
      assert.deepEqual(asked.map((x) => x.path), [`/model/${encodeURIComponent(CLAUDE.slice("global.".length))}/count-tokens`]);
      const e = await entryOf(two.store, response.headers.get("x-gateway-request-id")!);
      assert.equal(e.channel, "claude-second");
    } finally {
      await two.close();
    }
  });

  test("a stream that stops without its metadata event is cut: the client gets an error, billed as an estimate", async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST", headers: { "x-api-key": TOKEN, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "nova-pro", max_tokens: 100, stream: true, messages: [{ role: "user", content: "no-metadata" }] }),
    });
    assert.equal(res.status, 200);
    const events = sseEvents(await res.text());
    const names = events.map((e) => e.event);
    assert.ok(!names.includes("message_stop"), names.join(","));
    assert.ok(!names.includes("message_delta"), names.join(","));
    assert.equal(names.at(-1), "error");
    const e = await entryOf(gw.store, res.headers.get("x-gateway-request-id")!);
    assert.equal(e.estimated, true);
  });

  test("an exception frame mid-stream becomes Anthropic's error event", async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST", headers: { "x-api-key": TOKEN, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "llama-3-3", max_tokens: 100, stream: true, messages: [{ role: "user", content: "throttle-mid-stream" }] }),
    });
    const events = sseEvents(await res.text());
    assert.deepEqual(events.map((e) => e.event), ["message_start", "content_block_start", "content_block_delta", "error"]);
    assert.deepEqual(dataOf(events[3]).error, { type: "overloaded_error", message: "Too many requests, please wait." });
  });

  test("a Converse error reaches the client in Anthropic's shape, its status kept", async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST", headers: { "x-api-key": TOKEN, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "nova-pro", max_tokens: 100, messages: [{ role: "user", content: "invalid-request" }] }),
    });
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), { type: "error", error: { type: "invalid_request_error", message: "The model returned the following errors: max_tokens too high" } });
  });
});

describe("kind bedrock: which API a model takes", () => {
  test("Claude ids (and names holding claude) and ARNs naming Claude take InvokeModel; every other id, and an ARN that names no model, Converse", () => {
    for (const id of [
      "anthropic.claude-3-haiku-20240307-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "apac.anthropic.claude-3-5-sonnet-20240620-v1:0", "global.anthropic.claude-haiku-4-5-20251001-v1:0", "us-gov.anthropic.claude-3-haiku-20240307-v1:0",
      "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0",
      "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "fx-claude-bedrock",
    ]) assert.equal(isAnthropicModel(id), true, id);
    for (const id of [
      "amazon.nova-pro-v1:0", "us.amazon.nova-lite-v1:0", "meta.llama3-3-70b-instruct-v1:0", "us.meta.llama4-maverick-17b-instruct-v1:0",
      "mistral.mistral-large-2407-v1:0", "cohere.command-r-plus-v1:0", "us.deepseek.r1-v1:0", "openai.gpt-oss-120b-1:0",
      "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.amazon.nova-pro-v1:0",
      "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5",
      "arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc123xyz",
    ]) assert.equal(isAnthropicModel(id), false, id);
  });
});

describe("kind bedrock: an Anthropic body as Converse's", () => {
  const png = "iVBORw0KGgo=";

  test("blocks convert; what Converse has no place for is dropped; the result is a body Bedrock takes", () => {
    const body = {
      model: "m", stream: true, max_tokens: 64, top_k: 5, thinking: { type: "enabled", budget_tokens: 1024 }, service_tier: "auto",
      output_config: { format: { type: "json_schema", schema: {} } }, anthropic_version: "x", metadata: { user_id: "u" },
      system: [{ type: "text", text: "Be kind.", cache_control: { type: "ephemeral" } }],
      tools: [weatherTool, { type: "web_search_20250305", name: "web_search" }],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      messages: [
        {
          role: "user", content: [
            { type: "text", text: "Look:", cache_control: { type: "ephemeral" } },
            { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
            { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
            { type: "document", title: "Q3 report.pdf", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } },
            { type: "document", source: { type: "text", media_type: "text/plain", data: "plain notes" } },
          ],
        },
        {
          role: "assistant", content: [
            { type: "thinking", thinking: "hmm", signature: "sig" },
            { type: "text", text: " \n" },
            { type: "tool_use", id: "t1", name: "get_weather", input: { city: "Oslo" } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", is_error: true, content: [{ type: "text", text: "no data" }] }] },
        { role: "assistant", content: [{ type: "thinking", thinking: "only thinking", signature: "s" }] },
        { role: "user", content: "and now?" },
      ],
    };
    const converse = converseRequest(Buffer.from(JSON.stringify(body)));
    assert.deepEqual(converse, {
      messages: [
        {
          role: "user", content: [
            { text: "Look:" },
            { image: { format: "png", source: { bytes: png } } },
            { document: { format: "pdf", name: "Q3 report pdf 1", source: { bytes: "JVBERi0=" } } },
            { document: { format: "txt", name: "document 2", source: { bytes: Buffer.from("plain notes").toString("base64") } } },
          ],
        },
        { role: "assistant", content: [{ toolUse: { toolUseId: "t1", name: "get_weather", input: { city: "Oslo" } } }] },
        // The assistant turn of thinking alone is gone: the user turns around it are one.
        { role: "user", content: [{ toolResult: { toolUseId: "t1", content: [{ text: "no data" }], status: "error" } }, { text: "and now?" }] },
      ],
      system: [{ text: "Be kind." }],
      inferenceConfig: { maxTokens: 64 },
      toolConfig: { tools: [{ toolSpec: { name: "get_weather", description: weatherTool.description, inputSchema: { json: weatherTool.input_schema } } }], toolChoice: { auto: {} } },
    });
    assert.equal(converseProblem(converse), undefined);
  });

  test("tool_choice none offers no tools, unless earlier turns hold tool calls", () => {
    const ask = (messages: unknown[]) => converseRequest(Buffer.from(JSON.stringify({ max_tokens: 10, tools: [weatherTool], tool_choice: { type: "none" }, messages })));
    assert.equal(ask([{ role: "user", content: "hi" }]).toolConfig, undefined);
    const withCalls = ask([
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "tool_use", id: "t", name: "get_weather", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "ok" }] },
    ]);
    assert.deepEqual(withCalls.toolConfig, { tools: [{ toolSpec: { name: "get_weather", description: weatherTool.description, inputSchema: { json: weatherTool.input_schema } } }] });
    assert.equal(converseProblem(withCalls), undefined);
  });
});

describe("kind bedrock: Converse answers as Anthropic's", () => {
  test("reasoning, stop reasons and cache counts in a JSON answer", () => {
    const message = anthropicMessage({
      output: { message: { role: "assistant", content: [{ reasoningContent: { reasoningText: { text: "think", signature: "sg" } } }, { text: "done" }, { image: {} }] } },
      stopReason: "guardrail_intervened",
      usage: { inputTokens: 10, outputTokens: 3, cacheReadInputTokens: 100, cacheWriteInputTokens: 7, totalTokens: 120 },
    }, "us.deepseek.r1-v1:0", "msg_bdrk_x");
    assert.deepEqual(message, {
      id: "msg_bdrk_x", type: "message", role: "assistant", model: "us.deepseek.r1-v1:0",
      content: [{ type: "thinking", thinking: "think", signature: "sg" }, { type: "text", text: "done" }],
      stop_reason: "refusal", stop_sequence: null,
      usage: { input_tokens: 10, cache_creation_input_tokens: 7, cache_read_input_tokens: 100, output_tokens: 3 },
    });
  });

  test("a stream's reasoning deltas become a thinking block; usage with cache counts closes it", () => {
    const codec = new EventStreamCodec(toUtf8, fromUtf8);
    const reader = new ConverseStreamReader("us.deepseek.r1-v1:0", "msg_bdrk_y");
    const frame = (type: string, payload: Record<string, unknown>): Message => codec.decode(converseEventFrame(type, payload));
    const text = [
      frame("messageStart", { role: "assistant" }),
      frame("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "step" } } }),
      frame("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { signature: "sig" } } }),
      frame("contentBlockStop", { contentBlockIndex: 0 }),
      frame("contentBlockDelta", { contentBlockIndex: 1, delta: { text: "answer" } }),
      frame("messageStop", { stopReason: "max_tokens" }),
      frame("metadata", { usage: { inputTokens: 4, outputTokens: 2, cacheReadInputTokens: 50 }, metrics: { latencyMs: 1 } }),
    ].map(reader.read).join("");
    const events = sseEvents(text).map((e) => dataOf(e));
    assert.deepEqual(events.map((e) => e.type), [
      "message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
      "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop",
    ]);
    assert.deepEqual(events[1].content_block, { type: "thinking", thinking: "", signature: "" });
    assert.deepEqual(events[3].delta, { type: "signature_delta", signature: "sig" });
    assert.deepEqual(events[5], { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } });
    assert.deepEqual(events[8], {
      type: "message_delta", delta: { stop_reason: "max_tokens", stop_sequence: null },
      usage: { input_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 50, output_tokens: 2 },
    });
  });
});
