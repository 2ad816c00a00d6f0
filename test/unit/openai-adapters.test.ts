import assert from "node:assert/strict";
import { test } from "node:test";
import { normalizeOpenAIUsage } from "../../src/protocols/openai/usage.js";
import { prepareChatBody } from "../../src/protocols/openai/chat-request.js";
import { upstreamUrl } from "../../src/providers/provider.js";

test("OpenAI usage: cached tokens come out of input, reasoning stays in output", () => {
  assert.deepEqual(
    normalizeOpenAIUsage({ prompt_tokens: 100, completion_tokens: 50,
      prompt_tokens_details: { cached_tokens: 40 }, completion_tokens_details: { reasoning_tokens: 30 } }),
    { input: 60, cacheRead: 40, cacheWrite: 0, output: 50, reasoning: 30 });
  assert.deepEqual(normalizeOpenAIUsage({ prompt_tokens: 5, completion_tokens: 1 }),
    { input: 5, cacheRead: 0, cacheWrite: 0, output: 1, reasoning: 0 });
  assert.equal(normalizeOpenAIUsage(null), undefined);
});

test("the body passes byte for byte when nothing must change", () => {
  const raw = Buffer.from('{"model":"m",  "messages":[]}');
  const out = prepareChatBody({ raw, json: JSON.parse(raw.toString()), query: "" }, "m");
  assert.equal(out.body, raw);
  assert.equal(out.stripUsage, false);
  const limited = Buffer.from('{"model":"m", "max_tokens": 9, "messages":[]}');
  assert.equal(prepareChatBody({ raw: limited, json: JSON.parse(limited.toString()), query: "", outputLimit: 500 }, "m").body, limited,
    "the client's own limit is kept, bytes untouched");
});

test("the reserved output limit is spliced in when the client set none, the rest byte for byte", () => {
  const raw = Buffer.from(' {  "model":"m",  "messages":[], "n": 2}');
  const out = prepareChatBody({ raw, json: JSON.parse(raw.toString()), query: "", outputLimit: 500 }, "m");
  assert.equal(out.body.toString(), ' {"max_completion_tokens":500,  "model":"m",  "messages":[], "n": 2}');
  // A null (or other non-count) limit holds nothing upstream: replaced.
  const nulled = { model: "m", max_tokens: null, max_completion_tokens: "0", messages: [] };
  const fixed = prepareChatBody({ raw: Buffer.from(JSON.stringify(nulled)), json: nulled, query: "", outputLimit: 64 }, "m");
  assert.deepEqual(JSON.parse(fixed.body.toString()), { model: "m", messages: [], max_completion_tokens: 64 });
});

test("model_map renames and stream usage is requested on the client's behalf", () => {
  const json = { model: "m", stream: true, messages: [], stream_options: { foo: 1 } };
  const out = prepareChatBody({ raw: Buffer.from(JSON.stringify(json)), json, query: "" }, "m-2024");
  assert.deepEqual(JSON.parse(out.body.toString()), { ...json, model: "m-2024", stream_options: { foo: 1, include_usage: true } });
  assert.equal(out.stripUsage, true);
  const asked = { model: "m", stream: true, stream_options: { include_usage: true } };
  assert.equal(prepareChatBody({ raw: Buffer.from(JSON.stringify(asked)), json: asked, query: "" }, "m").stripUsage, false);
  const limited = prepareChatBody({ raw: Buffer.from(JSON.stringify(json)), json, query: "", outputLimit: 7 }, "m");
  assert.equal(JSON.parse(limited.body.toString()).max_completion_tokens, 7, "the limit rides along a re-serialised body");
});

test("upstream URLs join base and path without doubling /v1", () => {
  assert.equal(upstreamUrl(new URL("https://api.openai.com"), "/v1/chat/completions").href, "https://api.openai.com/v1/chat/completions");
  assert.equal(upstreamUrl(new URL("https://x.test/v1/"), "/v1/chat/completions").href, "https://x.test/v1/chat/completions");
  assert.equal(upstreamUrl(new URL("https://x.test/proxy"), "/v1/chat/completions").href, "https://x.test/proxy/v1/chat/completions");
});
