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
  const out = prepareChatBody(raw, JSON.parse(raw.toString()), "m");
  assert.equal(out.body, raw);
  assert.equal(out.stripUsage, false);
});

test("model_map renames and stream usage is requested on the client's behalf", () => {
  const json = { model: "m", stream: true, messages: [], stream_options: { foo: 1 } };
  const out = prepareChatBody(Buffer.from(JSON.stringify(json)), json, "m-2024");
  assert.deepEqual(JSON.parse(out.body.toString()), { ...json, model: "m-2024", stream_options: { foo: 1, include_usage: true } });
  assert.equal(out.stripUsage, true);
  const asked = { model: "m", stream: true, stream_options: { include_usage: true } };
  assert.equal(prepareChatBody(Buffer.from(JSON.stringify(asked)), asked, "m").stripUsage, false);
});

test("upstream URLs join base and path without doubling /v1", () => {
  assert.equal(upstreamUrl(new URL("https://api.openai.com"), "/v1/chat/completions").href, "https://api.openai.com/v1/chat/completions");
  assert.equal(upstreamUrl(new URL("https://x.test/v1/"), "/v1/chat/completions").href, "https://x.test/v1/chat/completions");
  assert.equal(upstreamUrl(new URL("https://x.test/proxy"), "/v1/chat/completions").href, "https://x.test/proxy/v1/chat/completions");
});
