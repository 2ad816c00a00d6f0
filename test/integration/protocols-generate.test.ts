// Generate-content in (the @google/genai client with httpOptions.baseUrl = the gateway),
// every channel protocol out: `gemini` as a pass-through (safetySettings, SAFETY, inlineData,
// `?key=` auth never forwarded, alt=sse streams), `openai` and `anthropic` converted through
// the hub. Errors in the Gemini shape.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  ApiError, FinishReason, GoogleGenAI, HarmBlockThreshold, HarmCategory,
  type Content, type GenerateContentConfig, type GenerateContentResponse,
} from "@google/genai";
import { fakePngBase64 } from "../helpers/fake-gemini.js";
import {
  ANTHROPIC_UPSTREAM_MODEL, CANONICAL, M, TEXT, last, startWorld, weatherArgs, weatherSchema, type ChannelName, type World,
} from "../helpers/protocol-world.js";
import { CHANNEL_KEY, TOKEN, rawRequest } from "./support.js";


const tools: GenerateContentConfig["tools"] = [{
  functionDeclarations: [{ name: "get_weather", description: "Weather for a city", parametersJsonSchema: weatherSchema }],
}];

interface Target {
  readonly name: ChannelName;
  readonly model: string;
  readonly canonical: object;
  readonly clientUsage: Record<string, unknown>;
}

const targets: readonly Target[] = [
  {
    name: "openai", model: M.openai, canonical: CANONICAL.openai,
    clientUsage: { promptTokenCount: 12, candidatesTokenCount: 4, totalTokenCount: 17, cachedContentTokenCount: 2, thoughtsTokenCount: 1 },
  },
  {
    name: "anthropic", model: M.anthropic, canonical: CANONICAL.anthropic,
    clientUsage: { promptTokenCount: 12, candidatesTokenCount: 5, totalTokenCount: 17 },
  },
  {
    name: "gemini", model: M.gemini, canonical: CANONICAL.gemini,
    clientUsage: { promptTokenCount: 12, candidatesTokenCount: 5, totalTokenCount: 17 },
  },
];

function pick(o: object | undefined, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, (o as Record<string, unknown> | undefined)?.[k]]));
}

describe("generate-content in, every channel protocol", () => {
  let w: World;
  let ai: GoogleGenAI;

  before(async () => {
    w = await startWorld();
    ai = new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: w.gw.url } });
  });
  after(async () => { await w?.close(); });
  beforeEach(() => w.reset());

  async function stream(model: string, contents: Content[] | string, config?: GenerateContentConfig): Promise<GenerateContentResponse[]> {
    const s = await ai.models.generateContentStream({ model, contents, config });
    const all: GenerateContentResponse[] = [];
    for await (const c of s) all.push(c);
    return all;
  }

  const finishOf = (chunks: GenerateContentResponse[]) => chunks.map((c) => c.candidates?.[0]?.finishReason).filter(Boolean).at(-1);

  for (const t of targets) {
    describe(`→ ${t.name} channel${t.name === "gemini" ? " (pass-through)" : ""}`, () => {
      test("non-stream: text intact, usage normalised and in usageMetadata, finishReason STOP", async () => {
        w.scriptText(t.name, TEXT);
        const mark = w.mark();
        const res = await ai.models.generateContent({ model: t.model, contents: "hi" });
        assert.equal(res.text, TEXT);
        assert.equal(res.candidates?.[0]?.finishReason, FinishReason.STOP);
        assert.deepEqual(pick(res.usageMetadata, Object.keys(t.clientUsage)), t.clientUsage);
        const rec = await w.record(mark);
        assert.equal(rec.status, 200);
        assert.deepEqual(rec.usage, t.canonical);
        if (t.name === "anthropic") assert.equal(w.sent("anthropic").model, ANTHROPIC_UPSTREAM_MODEL);
        if (t.name === "gemini") assert.equal(last(w.gemini.received).action, "generateContent");
      });

      test("stream (alt=sse): chunk texts concatenate; the last chunk has usage and STOP; usage normalised", async () => {
        w.scriptText(t.name, TEXT);
        const mark = w.mark();
        const chunks = await stream(t.model, "hi");
        assert.ok(chunks.length >= 2, `several chunks (got ${chunks.length})`);
        assert.equal(chunks.map((c) => c.text ?? "").join(""), TEXT);
        assert.equal(finishOf(chunks), FinishReason.STOP);
        assert.deepEqual(pick(chunks.at(-1)!.usageMetadata, Object.keys(t.clientUsage)), t.clientUsage);
        const rec = await w.record(mark);
        assert.deepEqual(rec.usage, t.canonical);
        if (t.name === "gemini") {
          const r = last(w.gemini.received);
          assert.equal(r.action, "streamGenerateContent");
          assert.deepEqual(r.query, { alt: "sse" });
        }
      });

      test("non-stream: functionCall round trip; the functionResponse follow-up reaches the upstream natively", async () => {
        w.scriptTool(t.name, "get_weather", weatherArgs);
        const ask: Content[] = [{ role: "user", parts: [{ text: "Weather in Zürich?" }] }];
        const res = await ai.models.generateContent({ model: t.model, contents: ask, config: { tools } });
        const calls = res.functionCalls ?? [];
        assert.equal(calls.length, 1);
        assert.equal(calls[0].name, "get_weather");
        assert.deepEqual(calls[0].args, weatherArgs);
        assert.equal(res.candidates?.[0]?.finishReason, FinishReason.STOP, "Gemini reports a function call with STOP");
        const decl = w.sent(t.name);
        if (t.name === "openai") {
          assert.deepEqual(decl.tools, [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: weatherSchema } }]);
        } else if (t.name === "anthropic") {
          assert.deepEqual(decl.tools, [{ name: "get_weather", description: "Weather for a city", input_schema: weatherSchema }]);
        }

        w.reset();
        w.scriptText(t.name, "It is 18 °C.");
        const follow = await ai.models.generateContent({
          model: t.model, config: { tools },
          contents: [...ask, res.candidates![0].content!,
            { role: "user", parts: [{ functionResponse: { ...(calls[0].id && { id: calls[0].id }), name: "get_weather", response: { output: "18 °C, rain ☔" } } }] }],
        });
        assert.equal(follow.text, "It is 18 °C.");
        const body = w.sent(t.name);
        if (t.name === "openai") {
          const msgs = body.messages as Record<string, any>[];
          assert.deepEqual(msgs.map((m) => m.role), ["user", "assistant", "tool"]);
          const id = msgs[1].tool_calls[0].id;
          assert.equal(msgs[1].tool_calls[0].function.name, "get_weather");
          assert.deepEqual(JSON.parse(msgs[1].tool_calls[0].function.arguments), weatherArgs);
          assert.deepEqual(msgs[2], { role: "tool", tool_call_id: id, content: "18 °C, rain ☔" });
        } else if (t.name === "anthropic") {
          const msgs = body.messages as { role: string; content: Record<string, any>[] }[];
          assert.deepEqual(msgs.map((m) => m.role), ["user", "assistant", "user"]);
          const use = msgs[1].content.find((b) => b.type === "tool_use")!;
          assert.equal(use.name, "get_weather");
          assert.deepEqual(use.input, weatherArgs);
          assert.deepEqual(msgs[2].content, [{ type: "tool_result", tool_use_id: use.id, content: [{ type: "text", text: "18 °C, rain ☔" }] }]);
        } else {
          assert.equal(body.contents[2].parts[0].functionResponse.name, "get_weather");
          assert.deepEqual(body.contents[2].parts[0].functionResponse.response, { output: "18 °C, rain ☔" });
        }
      });

      test("stream: the function call arrives whole with the same arguments", async () => {
        w.scriptTool(t.name, "get_weather", weatherArgs);
        const mark = w.mark();
        const chunks = await stream(t.model, "Weather?", { tools });
        const calls = chunks.flatMap((c) => c.functionCalls ?? []);
        assert.equal(calls.length, 1);
        assert.equal(calls[0].name, "get_weather");
        assert.deepEqual(calls[0].args, weatherArgs);
        assert.equal(finishOf(chunks), FinishReason.STOP);
        assert.deepEqual((await w.record(mark)).usage, t.canonical);
      });

      test("systemInstruction, maxOutputTokens, temperature, stopSequences, thinkingBudget reach the upstream natively", async () => {
        w.scriptText(t.name, "ok");
        await ai.models.generateContent({
          model: t.model, contents: "hello",
          config: {
            systemInstruction: "Be terse. 简洁。", maxOutputTokens: 77, temperature: 0.25, stopSequences: ["END"],
            thinkingConfig: { thinkingBudget: 8192 },
          },
        });
        const body = w.sent(t.name);
        if (t.name === "openai") {
          assert.deepEqual(body.messages[0], { role: "system", content: "Be terse. 简洁。" });
          assert.deepEqual(body.messages[1], { role: "user", content: "hello" });
          assert.equal(body.max_completion_tokens, 77);
          assert.equal(body.temperature, 0.25);
          assert.deepEqual(body.stop, ["END"]);
          assert.equal(body.reasoning_effort, "medium");
        } else if (t.name === "anthropic") {
          assert.deepEqual(body.system, [{ type: "text", text: "Be terse. 简洁。" }]);
          assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: 8192 });
          assert.ok(body.max_tokens > 8192, `max_tokens ${body.max_tokens} must exceed the budget`);
          // The messages API takes only temperature 1 beside thinking: dropped (and named).
          assert.equal(body.temperature, undefined);
          assert.deepEqual(body.stop_sequences, ["END"]);
        } else {
          assert.equal(body.systemInstruction.parts[0].text, "Be terse. 简洁。");
          assert.equal(body.generationConfig.maxOutputTokens, 77);
          assert.equal(body.generationConfig.temperature, 0.25);
          assert.deepEqual(body.generationConfig.stopSequences, ["END"]);
          assert.equal(body.generationConfig.thinkingConfig.thinkingBudget, 8192);
        }
      });
    });
  }

  describe("finish reasons", () => {
    test("anthropic max_tokens → MAX_TOKENS (non-stream and stream)", async () => {
      w.scripts.anthropic = () => ({ kind: "ok", text: "cut", stopReason: "max_tokens" });
      const res = await ai.models.generateContent({ model: M.anthropic, contents: "x" });
      assert.equal(res.candidates?.[0]?.finishReason, FinishReason.MAX_TOKENS);
      assert.equal(finishOf(await stream(M.anthropic, "x")), FinishReason.MAX_TOKENS);
    });
  });

  describe("pass-through to the gemini channel", () => {
    const safetySettings = [
      { category: HarmCategory.HARM_CATEGORY_HARASSMENT, threshold: HarmBlockThreshold.BLOCK_NONE },
      { category: HarmCategory.HARM_CATEGORY_DANGEROUS_CONTENT, threshold: HarmBlockThreshold.BLOCK_NONE },
    ];

    test("safetySettings are forwarded as sent", async () => {
      await ai.models.generateContent({ model: M.gemini, contents: "x", config: { safetySettings } });
      assert.deepEqual(last(w.gemini.received).safetySettings, safetySettings);
      await stream(M.gemini, "x", { safetySettings });
      assert.deepEqual(last(w.gemini.received).safetySettings, safetySettings);
    });

    test("a SAFETY finishReason reaches the client intact (non-stream and stream), and costs the prompt only", async () => {
      w.scripts.gemini = () => ({ kind: "safety" });
      const mark = w.mark();
      const res = await ai.models.generateContent({ model: M.gemini, contents: "x" });
      assert.equal(res.candidates?.[0]?.finishReason, FinishReason.SAFETY);
      assert.ok(res.candidates?.[0]?.safetyRatings?.some((r) => r.blocked), "the safety ratings pass through");
      assert.deepEqual((await w.record(mark)).usage, { input: 12, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
      assert.equal(finishOf(await stream(M.gemini, "x")), FinishReason.SAFETY);
    });

    test("an image model's inlineData passes through", async () => {
      w.scripts.gemini = () => ({ kind: "image", text: "Here it is:" });
      const res = await ai.models.generateContent({ model: M.geminiImage, contents: "draw a dot" });
      const parts = res.candidates?.[0]?.content?.parts ?? [];
      assert.equal(parts[0]?.text, "Here it is:");
      assert.deepEqual(parts[1]?.inlineData, { mimeType: "image/png", data: fakePngBase64 });
      assert.equal(res.data, fakePngBase64);
      assert.equal(last(w.gemini.received).model, M.geminiImage);
      const chunks = await stream(M.geminiImage, "draw a dot");
      assert.ok(chunks.some((c) => c.candidates?.[0]?.content?.parts?.some((p) => p.inlineData?.data === fakePngBase64)));
    });

    test("?key= authenticates; the key is never forwarded upstream (query nor header)", async () => {
      const body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });
      const res = await rawRequest(`${w.gw.url}/v1beta/models/${M.gemini}:generateContent?key=${TOKEN}`, {
        method: "POST", body, headers: { "content-type": "application/json" },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.candidates[0].content.parts[0].text, "gm says: hi");
      let r = last(w.gemini.received);
      assert.equal(r.key, CHANNEL_KEY);
      assert.deepEqual(r.query, {});
      assert.ok(!r.path.includes(TOKEN) && !JSON.stringify(r.headers).includes(TOKEN), "the client's key reached the upstream");

      const s = await rawRequest(`${w.gw.url}/v1beta/models/${M.gemini}:streamGenerateContent?alt=sse&key=${TOKEN}`, {
        method: "POST", body, headers: { "content-type": "application/json" },
      });
      assert.equal(s.status, 200, s.text);
      assert.match(String(s.headers["content-type"]), /text\/event-stream/);
      const events = s.text.split(/\r?\n\r?\n/).filter((b) => b.startsWith("data: ")).map((b) => JSON.parse(b.slice(6)));
      assert.equal(events.map((e) => e.candidates[0].content.parts[0].text).join(""), "gm says: hi");
      r = last(w.gemini.received);
      assert.deepEqual(r.query, { alt: "sse" });
      assert.equal(r.key, CHANNEL_KEY);
      assert.ok(!r.path.includes(TOKEN) && !JSON.stringify(r.headers).includes(TOKEN));
    });

    test("a wrong ?key= is a 401 in the Gemini error shape", async () => {
      const res = await rawRequest(`${w.gw.url}/v1beta/models/${M.gemini}:generateContent?key=sk-wrong-key-000000`, {
        method: "POST", body: JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }] }), headers: { "content-type": "application/json" },
      });
      assert.equal(res.status, 401);
      assert.equal(res.json?.error?.code, 401);
      assert.equal(res.json?.error?.status, "UNAUTHENTICATED");
    });
  });

  describe("errors in the Gemini shape (converted paths)", () => {
    const rejects = (p: Promise<unknown>, status: number, pattern: RegExp) => assert.rejects(p, (e: unknown) => {
      assert.ok(e instanceof ApiError, String(e));
      assert.equal(e.status, status);
      assert.match(e.message, pattern);
      return true;
    });

    test("upstream 400 from the anthropic channel → a Gemini error with the upstream's message", async () => {
      w.scripts.anthropic = () => ({ kind: "error", status: 400, message: "messages: roles must alternate" });
      await rejects(ai.models.generateContent({ model: M.anthropic, contents: "x" }), 400, /messages: roles must alternate/);
      await rejects(ai.models.generateContent({ model: M.anthropic, contents: "x" }), 400, /INVALID_ARGUMENT/);
    });

    test("a field the target cannot express → 400 naming it (candidateCount: 2 to anthropic)", async () => {
      const before = w.anthropic.received.length;
      await rejects(ai.models.generateContent({ model: M.anthropic, contents: "x", config: { candidateCount: 2 } }), 400, /candidateCount/);
      assert.equal(w.anthropic.received.length, before);
    });

    // Issue 19 changed this deliberately: an unknown field was a 400; it is dropped and named
    // now (conversion-lenient.test.ts). A field whose loss would change the answer still is.
    test("a field whose loss would change the answer → 400 naming it", async () => {
      const res = await rawRequest(`${w.gw.url}/v1beta/models/${M.openai}:generateContent`, {
        method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": TOKEN },
        body: JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }], generationConfig: { candidateCount: 2 } }),
      });
      assert.equal(res.status, 400);
      assert.equal(res.json?.error?.status, "INVALID_ARGUMENT");
      assert.match(res.json?.error?.message, /generationConfig\.candidateCount/);
    });
  });
});
