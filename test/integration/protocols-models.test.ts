// GET /v1/models answered in the list shape of the SDK that asks: the openai SDK (Bearer),
// the Anthropic SDK (its own headers: anthropic-version, Bearer or x-api-key) and
// @google/genai (`GET /v1beta/models` with x-goog-api-key). Each sees the calling token's
// usable models: its group's models that have a channel, narrowed by its allowlist.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { M, openaiClient, startWorld, type World } from "../helpers/protocol-world.js";
import { TOKEN, rawRequest, token } from "./support.js";

/** A token allowed only the Claude-style models. */
const NARROW = "sk-gw-test-narrow-claude-0001";

/** Every model with a channel; gpt-5-pro is priced but has no channel here, so it is not usable. */
const usable = [M.openai, M.mixed, M.anthropic, M.gemini, M.geminiImage].sort();

describe("model lists in three shapes", () => {
  let w: World;
  before(async () => {
    w = await startWorld({ tokens: [token("narrow", NARROW, { models: ["claude-*"] })] });
  });
  after(async () => { await w?.close(); });

  test("openai SDK: models.list() with Bearer", async () => {
    const client = openaiClient(w);
    const list: OpenAI.Models.Model[] = [];
    for await (const m of client.models.list()) list.push(m);
    assert.deepEqual(list.map((m) => m.id).sort(), usable);
    for (const m of list) {
      assert.equal(m.object, "model");
      assert.equal(typeof m.created, "number");
    }
    const owner = Object.fromEntries(list.map((m) => [m.id, m.owned_by]));
    assert.equal(owner[M.openai], "openai");
    assert.equal(owner[M.anthropic], "anthropic");
    assert.equal(owner[M.gemini], "google");

    const narrow = new OpenAI({ apiKey: NARROW, baseURL: `${w.gw.url}/v1`, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of narrow.models.list()) ids.push(m.id);
    assert.deepEqual(ids, [M.anthropic]);
  });

  test("Anthropic SDK: models.list() with its own headers (Bearer + anthropic-version)", async () => {
    const client = new Anthropic({ apiKey: TOKEN, baseURL: w.gw.url, maxRetries: 0 });
    const list: Anthropic.ModelInfo[] = [];
    for await (const m of client.models.list()) list.push(m);
    assert.deepEqual(list.map((m) => m.id).sort(), usable);
    for (const m of list) {
      assert.equal(m.type, "model");
      assert.equal(m.display_name, m.id);
      assert.ok(!Number.isNaN(Date.parse(m.created_at)), m.created_at);
    }
    const page = await client.models.list();
    assert.equal(page.has_more, false);
    assert.equal(page.first_id, page.data[0].id);
    assert.equal(page.last_id, page.data.at(-1)!.id);

    const narrow = new Anthropic({ apiKey: NARROW, baseURL: w.gw.url, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of narrow.models.list()) ids.push(m.id);
    assert.deepEqual(ids, [M.anthropic]);
  });

  test("Anthropic shape with x-api-key (older SDKs and curl)", async () => {
    const res = await rawRequest(`${w.gw.url}/v1/models`, { headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01" } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.has_more, false);
    assert.deepEqual(res.json.data.map((m: { id: string }) => m.id).sort(), usable);
    assert.equal(res.json.object, undefined, "not the OpenAI shape");
  });

  test("@google/genai: models.list() (GET /v1beta/models, no query) with x-goog-api-key", async () => {
    const ai = new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: w.gw.url } });
    const pager = await ai.models.list();
    const list = [];
    for await (const m of pager) list.push(m);
    assert.deepEqual(list.map((m) => m.name).sort(), usable.map((id) => `models/${id}`).sort());
    for (const m of list) {
      assert.ok(m.displayName);
      assert.ok(m.supportedActions?.includes("generateContent"), JSON.stringify(m));
    }

    const narrow = new GoogleGenAI({ apiKey: NARROW, httpOptions: { baseUrl: w.gw.url } });
    const names = [];
    for await (const m of await narrow.models.list()) names.push(m.name);
    assert.deepEqual(names, [`models/${M.anthropic}`]);
  });

  test("Gemini shape with ?key= (REST callers)", async () => {
    const res = await rawRequest(`${w.gw.url}/v1beta/models?key=${TOKEN}&pageSize=50`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.models.map((m: { name: string }) => m.name).sort(), usable.map((id) => `models/${id}`).sort());
  });

  test("no token → 401 in each family's shape", async () => {
    const openai = await rawRequest(`${w.gw.url}/v1/models`);
    assert.equal(openai.status, 401);
    assert.equal(openai.json.error.code, "missing_token");
    const gemini = await rawRequest(`${w.gw.url}/v1beta/models`);
    assert.equal(gemini.status, 401);
    assert.equal(gemini.json.error.status, "UNAUTHENTICATED");
  });
});
