// Images in the model's own turns toward Gemini: an image model's picture, returned to a
// chat, messages or responses client and sent back with the next turn, reaches Gemini as an
// inlineData part of the model turn (the fake Gemini checks each part's shape and takes
// images there, as the API does), so multi-turn image editing works. Toward the other
// protocols, which take images from the user only, it is dropped and named.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { fakePngBase64 } from "../helpers/fake-gemini.js";
import { M, openaiClient, startWorld, type World } from "../helpers/protocol-world.js";
import { channel, rawRequest, TOKEN } from "./support.js";

/** A Gemini image model priced for chat and responses clients. */
const IMAGE_MODEL = "gemini-image-everywhere";
/** A Claude model priced for responses clients too. */
const CLAUDE_EVERYWHERE = "claude-everywhere";

const INLINE = { inlineData: { mimeType: "image/png", data: fakePngBase64 } };

/** The model turns of the body the fake Gemini received last. */
const modelTurns = (w: World): Record<string, any>[] => (w.sent("gemini").contents as Record<string, any>[]).filter((c) => c.role === "model");

describe("images in model turns toward Gemini", () => {
  let w: World;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    w = await startWorld({
      extraModels: {
        [IMAGE_MODEL]: { endpoint: ["chat", "responses"], price: { input: 0.3, output: 30 } },
        [CLAUDE_EVERYWHERE]: { endpoint: ["chat", "responses"], price: { input: 3, output: 15 } },
      },
      extraChannels: (u) => [
        channel("gm-img", u.gemini, { protocol: "gemini", models: [IMAGE_MODEL] }),
        channel("an-all", u.anthropic, { protocol: "anthropic", models: [CLAUDE_EVERYWHERE] }),
      ],
    });
    openai = openaiClient(w);
    anthropic = new Anthropic({ apiKey: TOKEN, baseURL: w.gw.url, maxRetries: 0 });
  });
  after(async () => { await w?.close(); });
  beforeEach(() => w.reset());

  test("chat: the image an answer carried (message.images), sent back, reaches Gemini in the model turn", async () => {
    w.scripts.gemini = () => ({ kind: "image", text: "A cat." });
    const first = await openai.chat.completions.create({ model: M.geminiImage, messages: [{ role: "user", content: "Draw a cat." }] });
    const answer = first.choices[0].message as OpenAI.Chat.Completions.ChatCompletionMessage & { images?: unknown[] };
    assert.equal(answer.images?.length, 1, "the image came back in message.images");
    w.reset();
    const { response } = await openai.chat.completions.create({
      model: M.geminiImage,
      messages: [{ role: "user", content: "Draw a cat." }, answer as OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam, { role: "user", content: "Make it blue." }],
    }).withResponse();
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("x-gateway-dropped-fields"), null, "nothing dropped");
    assert.deepEqual(modelTurns(w), [{ role: "model", parts: [{ text: "A cat." }, INLINE] }]);
  });

  test("messages: an assistant image block sent back reaches Gemini in the model turn", async () => {
    const res = await anthropic.messages.create({
      model: M.geminiImage, max_tokens: 100,
      messages: [
        { role: "user", content: "Draw a cat." },
        { role: "assistant", content: [{ type: "text", text: "A cat." }, { type: "image", source: { type: "base64", media_type: "image/png", data: fakePngBase64 } }] as unknown as Anthropic.TextBlockParam[] },
        { role: "user", content: "Make it blue." },
      ],
    });
    assert.equal(res.type, "message");
    assert.deepEqual(modelTurns(w), [{ role: "model", parts: [{ text: "A cat." }, INLINE] }]);
  });

  test("responses: the image_generation_call item an answer carried, sent back, reaches Gemini in the model turn", async () => {
    w.scripts.gemini = () => ({ kind: "image", text: "A cat." });
    const first = await openai.responses.create({ model: IMAGE_MODEL, input: "Draw a cat." });
    const items = first.output as unknown as Record<string, unknown>[];
    assert.ok(items.some((i) => i.type === "image_generation_call" && i.result === fakePngBase64), JSON.stringify(items));
    w.reset();
    const next = await openai.responses.create({
      model: IMAGE_MODEL,
      input: [{ role: "user", content: "Draw a cat." }, ...items, { role: "user", content: "Make it blue." }] as unknown as OpenAI.Responses.ResponseInput,
    });
    assert.equal(next.status, "completed");
    assert.deepEqual(modelTurns(w), [{ role: "model", parts: [{ text: "A cat." }, INLINE] }]);
  });

  test("responses → anthropic: the image_generation_call item is dropped and named; the answer is served", async () => {
    const { response } = await openai.responses.create({
      model: CLAUDE_EVERYWHERE,
      input: [
        { role: "user", content: "Draw a cat." },
        { type: "image_generation_call", id: "ig_1", status: "completed", result: fakePngBase64 },
        { role: "user", content: "Describe it." },
      ] as unknown as OpenAI.Responses.ResponseInput,
    }).withResponse();
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("x-gateway-dropped-fields"), "input[] (type image_generation_call)");
    assert.ok(!JSON.stringify(w.sent("anthropic")).includes(fakePngBase64));
  });

  test("the fake Gemini holds the API's part rules: a part with two kinds of data is refused", async () => {
    const res = await rawRequest(`${w.gw.url}/v1beta/models/${M.geminiImage}:generateContent`, {
      method: "POST", headers: { "x-goog-api-key": TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "x", ...INLINE }] }] }),
    });
    assert.equal(res.status, 400);
  });

  for (const [target, model] of [["anthropic", M.anthropic], ["openai", M.openai]] as const) {
    test(`chat → ${target}: as before, the earlier image is ${target === "anthropic" ? "dropped and named (messages[].images)" : "relayed as sent (pass-through)"}`, async () => {
      const image = { type: "image_url", image_url: { url: `data:image/png;base64,${fakePngBase64}` } };
      const body = { model, messages: [{ role: "user", content: "Draw a cat." }, { role: "assistant", content: "A cat.", images: [image] }, { role: "user", content: "Blue." }] };
      const res = await rawRequest(`${w.gw.url}/v1/chat/completions`, {
        method: "POST", body: JSON.stringify(body), headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      });
      assert.equal(res.status, 200);
      if (target === "anthropic") {
        assert.equal(res.headers["x-gateway-dropped-fields"], "messages[].images");
        assert.ok(!JSON.stringify(w.sent("anthropic")).includes(fakePngBase64), "no image in the assistant turn");
      } else {
        // Same protocol: a pass-through relays the body as sent.
        assert.ok(JSON.stringify(w.sent("openai")).includes(fakePngBase64));
      }
    });
  }

  test("messages → anthropic (pass-through): the fake refuses an assistant image, as the API does", async () => {
    const body = {
      model: M.anthropic, max_tokens: 100,
      messages: [
        { role: "user", content: "Draw a cat." },
        { role: "assistant", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: fakePngBase64 } }] },
        { role: "user", content: "Blue." },
      ],
    };
    const res = await rawRequest(`${w.gw.url}/v1/messages`, {
      method: "POST", body: JSON.stringify(body),
      headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    });
    assert.equal(res.status, 400);
    assert.match(JSON.stringify(res.json), /'image' blocks are not permitted within assistant turns/);
  });

  test("messages → openai: an assistant image is dropped and named rather than refused", async () => {
    const body = {
      model: M.openai, max_tokens: 100,
      messages: [
        { role: "user", content: "Draw a cat." },
        { role: "assistant", content: [{ type: "text", text: "A cat." }, { type: "image", source: { type: "base64", media_type: "image/png", data: fakePngBase64 } }] },
        { role: "user", content: "Blue." },
      ],
    };
    const res = await rawRequest(`${w.gw.url}/v1/messages`, {
      method: "POST", body: JSON.stringify(body),
      headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers["x-gateway-dropped-fields"], "messages[].content[] (image in an assistant turn)");
    assert.ok(!JSON.stringify(w.sent("openai")).includes(fakePngBase64));
  });
});
