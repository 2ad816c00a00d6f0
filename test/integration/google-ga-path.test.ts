// Google's GA path: @google/genai 3.x calls `/v1/models/{model}:generateContent` (and
// `:streamGenerateContent`, `:countTokens`) by default; here the 2.x SDK is told so with
// httpOptions.apiVersion "v1". Served as the /v1beta twins are: pass-through keeps the
// client's version toward Gemini channels, converted routes work, errors come in Google's
// shape, and `GET /v1/models` answers in Google's list shape for a Google key while a
// Bearer caller still gets OpenAI's list.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { ApiError, FinishReason, GoogleGenAI, type GenerateContentResponse } from "@google/genai";
import OpenAI from "openai";
import { GEMINI_FAKE_COUNT } from "../helpers/fake-gemini.js";
import { CANONICAL, M, TEXT, last, openaiClient, startWorld, type World } from "../helpers/protocol-world.js";
import { CHANNEL_KEY, TOKEN, rawRequest } from "./support.js";

const usable = [M.openai, M.mixed, M.anthropic, M.gemini, M.geminiImage].sort();
const json = { "content-type": "application/json" };
const hi = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });

describe("Google's GA path (/v1/models/{model}:{action})", () => {
  let w: World;
  let ai: GoogleGenAI;

  before(async () => {
    w = await startWorld();
    ai = new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: w.gw.url, apiVersion: "v1" } });
  });
  after(async () => { await w?.close(); });
  beforeEach(() => w.reset());

  async function stream(model: string): Promise<GenerateContentResponse[]> {
    const all: GenerateContentResponse[] = [];
    for await (const c of await ai.models.generateContentStream({ model, contents: "hi" })) all.push(c);
    return all;
  }

  describe("pass-through to a gemini channel keeps the client's version", () => {
    test("generateContent: the upstream is called on /v1/, usage billed", async () => {
      w.scriptText("gemini", TEXT);
      const mark = w.mark();
      const res = await ai.models.generateContent({ model: M.gemini, contents: "hi" });
      assert.equal(res.text, TEXT);
      assert.equal(res.candidates?.[0]?.finishReason, FinishReason.STOP);
      const r = last(w.gemini.received);
      assert.equal(r.apiVersion, "v1");
      assert.equal(r.action, "generateContent");
      assert.equal(r.key, CHANNEL_KEY);
      const rec = await w.record(mark);
      assert.equal(rec.status, 200);
      assert.deepEqual(rec.usage, CANONICAL.gemini);
      assert.equal(rec.modelName, M.gemini);
    });

    test("streamGenerateContent (alt=sse): chunks concatenate, upstream on /v1/, usage billed", async () => {
      w.scriptText("gemini", TEXT);
      const mark = w.mark();
      const chunks = await stream(M.gemini);
      assert.ok(chunks.length >= 2, `several chunks (got ${chunks.length})`);
      assert.equal(chunks.map((c) => c.text ?? "").join(""), TEXT);
      const r = last(w.gemini.received);
      assert.equal(r.apiVersion, "v1");
      assert.equal(r.action, "streamGenerateContent");
      assert.deepEqual(r.query, { alt: "sse" });
      assert.deepEqual((await w.record(mark)).usage, CANONICAL.gemini);
    });

    test("streamGenerateContent without alt=sse: a JSON array, ?key= auth never forwarded", async () => {
      w.scriptText("gemini", "one two three");
      const res = await rawRequest(`${w.gw.url}/v1/models/${M.gemini}:streamGenerateContent?key=${TOKEN}`, { method: "POST", body: hi, headers: json });
      assert.equal(res.status, 200, res.text);
      assert.match(String(res.headers["content-type"]), /application\/json/);
      assert.ok(Array.isArray(res.json), res.text);
      assert.equal(res.json.map((c: any) => c.candidates?.[0]?.content?.parts?.[0]?.text ?? "").join(""), "one two three");
      const r = last(w.gemini.received);
      assert.equal(r.apiVersion, "v1");
      assert.equal(r.key, CHANNEL_KEY);
      assert.ok(!r.path.includes(TOKEN) && !JSON.stringify(r.headers).includes(TOKEN), "the client's key reached the upstream");
    });

    test("countTokens: passed through on /v1/, free", async () => {
      const mark = w.mark();
      const res = await ai.models.countTokens({ model: M.gemini, contents: "hi" });
      assert.equal(res.totalTokens, GEMINI_FAKE_COUNT);
      const r = last(w.gemini.received);
      assert.equal(r.apiVersion, "v1");
      assert.equal(r.action, "countTokens");
      const rec = await w.record(mark);
      assert.equal(rec.status, 200);
    });
  });

  test("a /v1beta caller still reaches the upstream's /v1beta", async () => {
    const beta = new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: w.gw.url } });
    await beta.models.generateContent({ model: M.gemini, contents: "hi" });
    assert.equal(last(w.gemini.received).apiVersion, "v1beta");
    await beta.models.countTokens({ model: M.gemini, contents: "hi" });
    assert.equal(last(w.gemini.received).apiVersion, "v1beta");
  });

  describe("converted: a Gemini client on an OpenAI channel", () => {
    test("generateContent and stream answer in Gemini's shape, billed from OpenAI's usage", async () => {
      w.scriptText("openai", TEXT);
      let mark = w.mark();
      const res = await ai.models.generateContent({ model: M.openai, contents: "hi" });
      assert.equal(res.text, TEXT);
      assert.deepEqual(w.sent("openai").messages, [{ role: "user", content: "hi" }]);
      assert.deepEqual((await w.record(mark)).usage, CANONICAL.openai);

      mark = w.mark();
      const chunks = await stream(M.openai);
      assert.equal(chunks.map((c) => c.text ?? "").join(""), TEXT);
      assert.equal(chunks.map((c) => c.candidates?.[0]?.finishReason).filter(Boolean).at(-1), FinishReason.STOP);
      assert.deepEqual((await w.record(mark)).usage, CANONICAL.openai);
    });

    test("countTokens on a model without gemini channels: a local estimate in Gemini's shape", async () => {
      const res = await ai.models.countTokens({ model: M.openai, contents: "hello there" });
      assert.ok((res.totalTokens ?? 0) > 0, JSON.stringify(res));
    });
  });

  describe("errors in Google's shape on /v1", () => {
    const googleError = (status: number, rpc: string) => (e: unknown) => {
      assert.ok(e instanceof ApiError, String(e));
      assert.equal(e.status, status);
      assert.match(e.message, new RegExp(rpc));
      return true;
    };

    test("unknown model → 404 NOT_FOUND", async () => {
      await assert.rejects(ai.models.generateContent({ model: "no-such-model", contents: "x" }), googleError(404, "NOT_FOUND"));
      const res = await rawRequest(`${w.gw.url}/v1/models/no-such-model:streamGenerateContent?alt=sse`, {
        method: "POST", body: hi, headers: { ...json, "x-goog-api-key": TOKEN },
      });
      assert.equal(res.status, 404);
      assert.equal(res.json?.error?.status, "NOT_FOUND");
    });

    test("no key or a wrong key → 401 UNAUTHENTICATED", async () => {
      const none = await rawRequest(`${w.gw.url}/v1/models/${M.gemini}:generateContent`, { method: "POST", body: hi, headers: json });
      assert.equal(none.status, 401);
      assert.equal(none.json?.error?.status, "UNAUTHENTICATED");
      const wrong = new GoogleGenAI({ apiKey: "sk-wrong-key-000000", httpOptions: { baseUrl: w.gw.url, apiVersion: "v1" } });
      await assert.rejects(wrong.models.countTokens({ model: M.gemini, contents: "x" }), googleError(401, "UNAUTHENTICATED"));
    });

    test("an upstream 429 on a converted route → RESOURCE_EXHAUSTED", async () => {
      w.scripts.openai = () => ({ kind: "error", status: 429, message: "Rate limit reached" });
      await assert.rejects(ai.models.generateContent({ model: M.openai, contents: "x" }), googleError(429, "RESOURCE_EXHAUSTED"));
    });

    test("an unknown action under /v1/models for a Google caller → Google's shape", async () => {
      const res = await rawRequest(`${w.gw.url}/v1/models/${M.gemini}:embedContent`, {
        method: "POST", body: hi, headers: { ...json, "x-goog-api-key": TOKEN },
      });
      assert.ok(res.status === 404 || res.status === 405, res.text);
      assert.equal(typeof res.json?.error?.status, "string", res.text);
    });
  });

  describe("model lists", () => {
    const names = usable.map((id) => `models/${id}`).sort();

    test("@google/genai models.list() on /v1: Google's list shape", async () => {
      const list = [];
      for await (const m of await ai.models.list()) list.push(m);
      assert.deepEqual(list.map((m) => m.name).sort(), names);
      for (const m of list) assert.ok(m.supportedActions?.includes("generateContent"), JSON.stringify(m));
    });

    test("GET /v1/models with x-goog-api-key or ?key=: Google's shape", async () => {
      for (const res of [
        await rawRequest(`${w.gw.url}/v1/models`, { headers: { "x-goog-api-key": TOKEN } }),
        await rawRequest(`${w.gw.url}/v1/models?key=${TOKEN}&pageSize=50`),
      ]) {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.object, undefined, "not OpenAI's shape");
        assert.deepEqual(res.json.models.map((m: { name: string }) => m.name).sort(), names);
        for (const m of res.json.models) {
          assert.equal(typeof m.displayName, "string");
          assert.ok(m.supportedGenerationMethods.includes("generateContent"));
        }
      }
      const none = await rawRequest(`${w.gw.url}/v1/models?key=sk-wrong-key-000000`);
      assert.equal(none.status, 401);
      assert.equal(none.json?.error?.status, "UNAUTHENTICATED");
    });

    test("GET /v1/models with a Bearer token: still OpenAI's list", async () => {
      const client = openaiClient(w);
      const ids: string[] = [];
      for await (const m of client.models.list()) ids.push(m.id);
      assert.deepEqual(ids.sort(), usable);
      const raw = await rawRequest(`${w.gw.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(raw.json.object, "list");
    });

    test("one model: @google/genai models.get() on /v1 and /v1beta; unknown → 404 in Google's shape", async () => {
      const m = await ai.models.get({ model: M.gemini });
      assert.equal(m.name, `models/${M.gemini}`);
      assert.ok(m.supportedActions?.includes("streamGenerateContent"));
      const beta = new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: w.gw.url } });
      assert.equal((await beta.models.get({ model: M.anthropic })).name, `models/${M.anthropic}`);
      await assert.rejects(ai.models.get({ model: "no-such-model" }), (e: unknown) => e instanceof ApiError && e.status === 404);
      const raw = await rawRequest(`${w.gw.url}/v1/models/no-such-model?key=${TOKEN}`);
      assert.equal(raw.status, 404);
      assert.equal(raw.json?.error?.status, "NOT_FOUND");
    });

    test("one model with a Bearer token: OpenAI's retrieve shape; with Anthropic's headers, Anthropic's", async () => {
      const client = openaiClient(w);
      const m = await client.models.retrieve(M.gemini);
      assert.equal(m.id, M.gemini);
      assert.equal(m.object, "model");
      assert.equal(m.owned_by, "google");
      await assert.rejects(client.models.retrieve("no-such-model"), (e: unknown) => e instanceof OpenAI.NotFoundError);
      const anthropic = await rawRequest(`${w.gw.url}/v1/models/${M.anthropic}`, { headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01" } });
      assert.equal(anthropic.status, 200, anthropic.text);
      assert.equal(anthropic.json.type, "model");
      assert.equal(anthropic.json.id, M.anthropic);
    });
  });
});
