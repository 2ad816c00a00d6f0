// The azure-openai and openai-compatible kinds' rules that need no server: Azure's URL for
// each OpenAI operation (deployment URLs under an api-version, v1 for the rest), which error
// answers take a key out (by status and structured fields only), DeepSeek's cache hits read
// where the details say nothing, the chat encoder sending reasoning back only when asked,
// and each openai-compatible preset's URLs and auth.

import assert from "node:assert/strict";
import { test } from "node:test";
import type { CanonicalRequest } from "../../src/protocols/canonical.js";
import { encodeChatRequest } from "../../src/protocols/openai/chat-encode-request.js";
import { normalizeOpenAIUsage } from "../../src/protocols/openai/usage.js";
import { azureKeyFaults } from "../../src/providers/azure-openai/key-faults.js";
import { azureUrl } from "../../src/providers/azure-openai/urls.js";
import type { WireRequest } from "../../src/providers/kind.js";
import { compatibleKeyFaults } from "../../src/providers/openai-compatible/key-faults.js";
import { openaiCompatibleProvider } from "../../src/providers/openai-compatible/manifest.js";
import { channelUrl, judgeKeyFault } from "../../src/providers/provider.js";
import type { Channel } from "../../src/runtime/types.js";

test("azure: deployment operations under an api-version, everything else (and all without one) on v1", () => {
  const base = new URL("https://res.openai.azure.com");
  const at = (path: string, version?: string) => azureUrl(base, path, "dep 1", version).href;
  for (const op of ["/chat/completions", "/completions", "/embeddings", "/images/generations", "/images/edits", "/audio/transcriptions", "/audio/translations", "/audio/speech"]) {
    assert.equal(at(`/v1${op}`, "2024-10-21"), `https://res.openai.azure.com/openai/deployments/dep%201${op}?api-version=2024-10-21`);
    assert.equal(at(`/v1${op}`), `https://res.openai.azure.com/openai/v1${op}`);
  }
  assert.equal(at("/v1/responses", "2024-10-21"), "https://res.openai.azure.com/openai/v1/responses");
  assert.equal(at("/v1/videos/vid_1/content?variant=thumbnail", "2024-10-21"), "https://res.openai.azure.com/openai/v1/videos/vid_1/content?variant=thumbnail");
  assert.equal(at("/v1/videos/vid_1"), "https://res.openai.azure.com/openai/v1/videos/vid_1");
  // Realtime GA lives on v1 whatever the api-version, its model (the deployment) in the query.
  for (const version of [undefined, "2024-10-21"]) {
    assert.equal(at("/v1/realtime?model=my-rt", version), "https://res.openai.azure.com/openai/v1/realtime?model=my-rt");
  }
  // A query the request carries is kept beside api-version.
  assert.equal(at("/v1/chat/completions?x=1", "2024-10-21"), "https://res.openai.azure.com/openai/deployments/dep%201/chat/completions?x=1&api-version=2024-10-21");
  // An APIM prefix stays; /openai or /openai/v1 copied into base_url is not doubled.
  for (const b of ["https://apim.azure-api.net/team", "https://apim.azure-api.net/team/openai", "https://apim.azure-api.net/team/openai/v1/"]) {
    assert.equal(azureUrl(new URL(b), "/v1/embeddings", "e", undefined).href, "https://apim.azure-api.net/team/openai/v1/embeddings");
  }
});

test("azure key faults: 401 and 403 are the key's; a 429 rate limit is not, unless it says insufficient_quota", () => {
  const judge = (status: number, error: unknown) => judgeKeyFault(azureKeyFaults, status, JSON.stringify({ error }))?.fault;
  assert.equal(judge(401, { code: "401", message: "Access denied due to invalid subscription key" }), "auth");
  assert.equal(judge(401, { code: "PermissionDenied", message: "The principal lacks the required data action" }), "auth");
  assert.equal(judge(403, { code: "AuthenticationTypeDisabled", message: "Key based authentication is disabled" }), "auth");
  assert.equal(judge(429, { code: "429", message: "exceeded token rate limit ... insufficient_quota" }), undefined);
  assert.equal(judge(429, { code: "insufficient_quota", message: "x" }), "quota");
  assert.equal(judge(400, { code: "content_filter", message: "x" }), undefined);
  assert.equal(judge(404, { code: "DeploymentNotFound", message: "x" }), undefined);
});

test("openai-compatible key faults: 402 is out of credit; OpenRouter's moderation 403 is the request's; OpenAI's rules else", () => {
  const judge = (status: number, body: unknown) => judgeKeyFault(compatibleKeyFaults, status, JSON.stringify(body))?.fault;
  assert.equal(judge(402, { error: { message: "Insufficient Balance", type: "unknown_error", param: null, code: "invalid_request_error" } }), "quota");
  assert.equal(judge(402, { error: { code: 402, message: "This request requires more credits" } }), "quota");
  assert.equal(judge(403, { error: { code: 403, message: "Input flagged", metadata: { reasons: ["violence"], flagged_input: "…", provider_name: "x", model_slug: "y" } } }), undefined);
  assert.equal(judge(403, { error: { code: 403, message: "Forbidden" } }), "auth");
  assert.equal(judge(401, { message: "Unauthorized", request_id: "abc" }), "auth");
  assert.equal(judge(401, { error: { code: "mismatched_organization", message: "x" } }), undefined);
  assert.equal(judge(429, { error: { code: "rate_limit_exceeded", message: "insufficient_quota" } }), undefined);
  assert.equal(judge(429, { error: { code: "insufficient_quota", message: "x" } }), "quota");
});

test("usage: DeepSeek's prompt_cache_hit_tokens are cache reads where the details say nothing; the details win when present", () => {
  const deepseek = normalizeOpenAIUsage({ prompt_tokens: 1000, completion_tokens: 20, prompt_cache_hit_tokens: 640, prompt_cache_miss_tokens: 360 });
  assert.deepEqual([deepseek?.input, deepseek?.cacheRead], [360, 640]);
  const both = normalizeOpenAIUsage({ prompt_tokens: 1000, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 512 }, prompt_cache_hit_tokens: 640 });
  assert.deepEqual([both?.input, both?.cacheRead], [488, 512]);
  const over = normalizeOpenAIUsage({ prompt_tokens: 10, completion_tokens: 1, prompt_cache_hit_tokens: 640 });
  assert.deepEqual([over?.input, over?.cacheRead], [0, 10], "never more cache reads than input");
});

test("chat encoder: thinking goes back as reasoning_content on tool-call turns only when the channel asks", () => {
  const req = {
    system: [], stream: false,
    messages: [
      { role: "user", content: [{ type: "text", text: "q" }] },
      { role: "assistant", content: [{ type: "thinking", text: "think 1" }, { type: "thinking", text: " more", signature: "s" }, { type: "tool_use", id: "c1", name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "r" }] }] },
      { role: "assistant", content: [{ type: "thinking", text: "final thought" }, { type: "text", text: "done" }] },
      { role: "user", content: [{ type: "text", text: "again" }] },
    ],
  } as unknown as CanonicalRequest;
  const assistants = (options?: Parameters<typeof encodeChatRequest>[2]) =>
    (encodeChatRequest(req, "m", options).messages as Record<string, unknown>[]).filter((m) => m.role === "assistant");
  assert.deepEqual(assistants().map((m) => m.reasoning_content), [undefined, undefined]);
  assert.deepEqual(assistants({ chatReasoningField: "reasoning_content" }).map((m) => m.reasoning_content), ["think 1 more", undefined]);
});

test("openai-compatible: each preset's URL for chat and responses, from its default host", async () => {
  const expected: Record<string, readonly [string, string]> = {
    deepseek: ["https://api.deepseek.com/chat/completions", "https://api.deepseek.com/v1/responses"],
    openrouter: ["https://openrouter.ai/api/v1/chat/completions", "https://openrouter.ai/api/v1/responses"],
    mistral: ["https://api.mistral.ai/v1/chat/completions", "https://api.mistral.ai/v1/responses"],
    xai: ["https://api.x.ai/v1/chat/completions", "https://api.x.ai/v1/responses"],
    groq: ["https://api.groq.com/openai/v1/chat/completions", "https://api.groq.com/openai/v1/responses"],
    ollama: ["http://127.0.0.1:11434/v1/chat/completions", "http://127.0.0.1:11434/v1/responses"],
  };
  const kind = openaiCompatibleProvider;
  for (const [preset, urls] of Object.entries(expected)) {
    const compiled = kind.compile!({ name: "c", preset, keys: ["k"] });
    assert.deepEqual(compiled.problems, [], preset);
    const channel = { kind: "openai-compatible", protocol: "openai", settings: compiled.settings, baseUrl: new URL(compiled.baseUrl) } as unknown as Channel;
    const asked = await Promise.all(["/v1/chat/completions", "/v1/responses"].map(async (path) => {
      const request: WireRequest = { url: channelUrl(channel.baseUrl, path), path, headers: {}, body: Buffer.alloc(0), upstreamModel: "m", stream: false };
      return (await kind.prepare!(channel, "k", request)).url.href;
    }));
    assert.deepEqual(asked, urls, preset);
  }
  // The key goes as a bearer token; a keyless preset's placeholder sends nothing.
  assert.deepEqual(kind.authHeaders("sk-1"), { authorization: "Bearer sk-1" });
  const keyless = kind.compile!({ name: "c", preset: "ollama" });
  assert.equal(keyless.keys.length, 1);
  assert.deepEqual(kind.authHeaders(keyless.keys[0]), {});
});
