// The cost fields as the official SDKs meet them (openai, @anthropic-ai/sdk, @google/genai):
// their stream helpers and accumulators take a stream with the cost beside its usage without
// error, and the value is readable where the SDK keeps it: openai's finalChatCompletion() and
// finalResponse() usage, Anthropic's message_delta event (MessageStream's finalMessage()
// keeps only the usage fields it knows), genai's last chunk's usageMetadata; X-Gateway-Cost
// from each SDK's raw response of a non-stream call. Pass-through and converted routes.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { startFakeResponses, type FakeResponses } from "../helpers/fake-responses.js";
import { M, openaiClient, startWorld, type World } from "../helpers/protocol-world.js";
import { CHANNEL_KEY, TOKEN, channel } from "./support.js";

/** A model the responses protocol reaches through the anthropic channel (converted). */
const RESPONSES_CONVERTED = "cost-sdk-claude";

/** The cost field of a usage object an SDK handed back (untyped: the SDKs do not declare it). */
const costIn = (usage: unknown, field = "gateway_cost"): unknown => (usage as Record<string, unknown> | null | undefined)?.[field];

describe("the official SDKs read the cost", () => {
  let fake: FakeResponses;
  let w: World;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let genai: GoogleGenAI;

  before(async () => {
    fake = await startFakeResponses({ keys: [CHANNEL_KEY] });
    w = await startWorld({
      extraModels: { [RESPONSES_CONVERTED]: { endpoint: ["chat", "responses"], price: { input: 2, output: 8 } } },
      extraChannels: (u) => [
        channel("resp", fake.url, { protocol: "openai", models: [M.responses] }),
        channel("an-rc", u.anthropic, { protocol: "anthropic", models: [RESPONSES_CONVERTED] }),
      ],
    });
    openai = openaiClient(w);
    anthropic = new Anthropic({ apiKey: TOKEN, baseURL: w.gw.url, maxRetries: 0 });
    genai = new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: w.gw.url, retryOptions: { attempts: 1 } } });
  });
  after(async () => {
    await w?.close();
    await fake?.close();
  });
  beforeEach(() => w.reset());

  /** The cost the gateway charged for the request made by `work`, as shown (exact decimal). */
  async function charged<T>(work: () => Promise<T>): Promise<{ out: T; cost: string }> {
    const mark = w.mark();
    const out = await work();
    const cost = await w.shownCost((await w.record(mark)).id);
    assert.notEqual(cost, "0", "a priced answer");
    return { out, cost };
  }

  for (const [how, model] of [["passed through", M.openai], ["converted", M.anthropic]] as const) {
    test(`openai chat, ${how}: ChatCompletionStream's finalChatCompletion() usage and the non-stream header`, async () => {
      const messages = [{ role: "user" as const, content: "hi" }];
      const streamed = await charged(async () => {
        const s = openai.chat.completions.stream({ model, messages, stream_options: { include_usage: true } });
        for await (const _ of s) { /* drain */ }
        return s.finalChatCompletion();
      });
      assert.equal(streamed.out.usage?.prompt_tokens, 12);
      assert.equal(costIn(streamed.out.usage), streamed.cost);
      const whole = await charged(() => openai.chat.completions.create({ model, messages }).withResponse());
      assert.equal(whole.out.response.headers.get("x-gateway-cost"), whole.cost);
    });
  }

  for (const [how, model] of [["passed through", M.responses], ["converted", RESPONSES_CONVERTED]] as const) {
    test(`openai responses, ${how}: ResponseStream's finalResponse() usage and the non-stream header`, async () => {
      const streamed = await charged(async () => {
        const s = openai.responses.stream({ model, input: "hi" });
        for await (const _ of s) { /* drain */ }
        return s.finalResponse();
      });
      assert.equal(streamed.out.status, "completed");
      assert.equal(costIn(streamed.out.usage), streamed.cost);
      const whole = await charged(() => openai.responses.create({ model, input: "hi" }).withResponse());
      assert.equal(whole.out.response.headers.get("x-gateway-cost"), whole.cost);
    });
  }

  for (const [how, model] of [["passed through", M.anthropic], ["converted", M.openai]] as const) {
    test(`anthropic messages, ${how}: the message_delta event through MessageStream, finalMessage() whole; the non-stream header`, async () => {
      const params = { model, max_tokens: 100, messages: [{ role: "user" as const, content: "hi" }] };
      const streamed = await charged(async () => {
        const s = anthropic.messages.stream(params);
        let delta: unknown;
        for await (const e of s) if (e.type === "message_delta") delta = e.usage;
        const final = await s.finalMessage();
        return { delta, final };
      });
      assert.equal(costIn(streamed.out.delta), streamed.cost);
      assert.equal(streamed.out.final.stop_reason, "end_turn");
      assert.equal(streamed.out.final.usage.output_tokens, 5, "the accumulated usage is intact");
      const whole = await charged(() => anthropic.messages.create(params).withResponse());
      assert.equal(whole.out.response.headers.get("x-gateway-cost"), whole.cost);
    });
  }

  for (const [how, model] of [["passed through", M.gemini], ["converted", M.openai]] as const) {
    test(`genai, ${how}: generateContentStream's last chunk usageMetadata.gatewayCost; the non-stream header`, async () => {
      const streamed = await charged(async () => {
        let last: unknown;
        let text = "";
        for await (const chunk of await genai.models.generateContentStream({ model, contents: "hi" })) {
          text += chunk.text ?? "";
          if (chunk.usageMetadata) last = chunk.usageMetadata;
        }
        return { last, text };
      });
      assert.ok(streamed.out.text.length > 0);
      assert.equal(costIn(streamed.out.last, "gatewayCost"), streamed.cost);
      const whole = await charged(() => genai.models.generateContent({ model, contents: "hi" }));
      assert.equal(whole.out.sdkHttpResponse?.headers?.["x-gateway-cost"], whole.cost);
    });
  }
});
