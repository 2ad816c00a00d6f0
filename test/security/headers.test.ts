// Attacks on what reaches the provider: a client picking the operator's OpenAI organization
// or project, switching on Anthropic betas the gateway does not price, sending Google a
// user project, a field mask or a method override, or smuggling its own gateway token to
// the provider in a percent-encoded `?%6Bey=`. Fake upstreams record every header and
// query they receive; only the protocol's allow-listed headers may be among them.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fake-anthropic.js";
import { startFakeGemini, type FakeGemini } from "../helpers/fake-gemini.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { CHANNEL_KEY, TOKEN, channel, config, rawRequest } from "../integration/support.js";

/** What Claude Code 2.1.197 sends beside its body (test/fixtures/clients/claude). */
const claudeCodeHeaders = {
  "anthropic-version": "2023-06-01",
  "anthropic-dangerous-direct-browser-access": "true",
  "x-app": "cli",
  "x-claude-code-session-id": "5d1c0c7e-1111-4222-8333-944455556666",
  "x-stainless-os": "Linux",
  "x-stainless-retry-count": "0",
  "user-agent": "claude-cli/2.1.197 (external, cli)",
};

/** Headers that pick or steer the operator's upstream account. */
const accountHeaders = {
  "openai-organization": "org-victim", "openai-project": "proj_victim", "idempotency-key": "shared-key-1",
  "x-goog-user-project": "someone-elses-project", "x-goog-fieldmask": "candidates", "x-http-method-override": "DELETE",
  "x-unknown-header": "1",
};

const message = { model: "claude-sonnet-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };

describe("headers toward the provider are allow-listed per protocol", () => {
  let openai: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let gemini: FakeGemini;
  let gw: TestGateway;

  before(async () => {
    [openai, anthropic, gemini] = await Promise.all([
      startFakeOpenAI({ keys: [CHANNEL_KEY] }), startFakeAnthropic({ keys: [CHANNEL_KEY] }), startFakeGemini({ keys: [CHANNEL_KEY] }),
    ]);
    gw = await startTestGateway(config({
      channels: [
        channel("oa", openai.url),
        channel("an", anthropic.url, { protocol: "anthropic", models: ["claude-sonnet-4-5"] }),
        channel("an-custom", anthropic.url, { protocol: "anthropic", models: ["claude-custom"], betas: ["custom-beta-2099-01-01"] }),
        channel("gm", gemini.url, { protocol: "gemini", models: ["gemini-2.5-flash"] }),
      ],
      models: {
        "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6 } },
        "claude-sonnet-4-5": { price: { input: 3, output: 15 } },
        "claude-custom": { price: { input: 3, output: 15 } },
        "gemini-2.5-flash": { price: { input: 0.3, output: 2.5 } },
      },
    }));
  });
  after(async () => {
    await gw?.close();
    await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
    destroyAgents();
  });

  const post = (path: string, body: object, headers: Record<string, string>) => rawRequest(`${gw.url}${path}`, {
    method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body),
  });

  test("chat completions: OpenAI-Organization, OpenAI-Project, Idempotency-Key and unknown headers stay here", async () => {
    const r = await post("/v1/chat/completions", { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
      { authorization: `Bearer ${TOKEN}`, "user-agent": "OpenAI/JS 6.0", "x-stainless-os": "Linux", ...accountHeaders });
    assert.equal(r.status, 200, r.text);
    const seen = openai.received.at(-1)!.headers;
    for (const name of [...Object.keys(accountHeaders), "x-stainless-os"]) assert.equal(seen[name], undefined, `${name} forwarded`);
    assert.equal(seen.authorization, `Bearer ${CHANNEL_KEY}`);
    assert.equal(seen["user-agent"], "OpenAI/JS 6.0");
  });

  test("messages: an unknown anthropic-beta is dropped from the list, a known one kept; SDK telemetry stays here", async () => {
    const r = await post("/v1/messages", message, {
      "x-api-key": TOKEN, ...claudeCodeHeaders, ...accountHeaders,
      "anthropic-beta": "files-api-2025-04-14,context-1m-2025-08-07, extended-cache-ttl-2025-04-11,made-up-2099-01-01",
    });
    assert.equal(r.status, 200, r.text);
    const seen = anthropic.received.at(-1)!;
    assert.deepEqual(seen.betas, ["context-1m-2025-08-07"]);
    assert.equal(seen.headers["anthropic-version"], "2023-06-01", "the client's version passes");
    for (const name of [...Object.keys(accountHeaders), "x-stainless-os", "x-stainless-retry-count", "x-app",
      "x-claude-code-session-id", "anthropic-dangerous-direct-browser-access"]) {
      assert.equal(seen.headers[name], undefined, `${name} forwarded`);
    }
    assert.equal(seen.headers["x-api-key"], CHANNEL_KEY);

    const onlyUnknown = await post("/v1/messages", message, { "x-api-key": TOKEN, ...claudeCodeHeaders, "anthropic-beta": "files-api-2025-04-14" });
    assert.equal(onlyUnknown.status, 200, onlyUnknown.text);
    assert.equal(anthropic.received.at(-1)!.headers["anthropic-beta"], undefined, "no beta left: no header");
  });

  test("every beta Claude Code sends still reaches the provider", async () => {
    const betas = "claude-code-20250219,context-1m-2025-08-07,interleaved-thinking-2025-05-14,thinking-token-count-2026-05-13,"
      + "context-management-2025-06-27,prompt-caching-scope-2026-01-05,mid-conversation-system-2026-04-07,advanced-tool-use-2025-11-20,effort-2025-11-24";
    const r = await post("/v1/messages", message, { "x-api-key": TOKEN, ...claudeCodeHeaders, "anthropic-beta": betas });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(anthropic.received.at(-1)!.betas, betas.split(","));
  });

  test("a channel's betas key replaces the default list", async () => {
    const r = await post("/v1/messages", { ...message, model: "claude-custom" },
      { "x-api-key": TOKEN, ...claudeCodeHeaders, "anthropic-beta": "context-1m-2025-08-07,custom-beta-2099-01-01" });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(anthropic.received.at(-1)!.betas, ["custom-beta-2099-01-01"]);
  });

  test("converted to messages (a chat client): only allowed betas, the gateway's own version", async () => {
    const r = await post("/v1/chat/completions", { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] }, {
      authorization: `Bearer ${TOKEN}`, "anthropic-version": "2099-01-01", ...accountHeaders,
      "anthropic-beta": "made-up-2099-01-01,context-1m-2025-08-07",
    });
    assert.equal(r.status, 200, r.text);
    const seen = anthropic.received.at(-1)!;
    assert.deepEqual(seen.betas, ["context-1m-2025-08-07"]);
    assert.equal(seen.headers["anthropic-version"], "2023-06-01");
    for (const name of Object.keys(accountHeaders)) assert.equal(seen.headers[name], undefined, `${name} forwarded`);
  });

  test("generate-content: the token in ?%6Bey= (any encoding) never reaches the provider; only alt=sse does", async () => {
    const spellings = ["%6Bey", "%6B%65%79", "k%65y"];
    for (const key of spellings) {
      const r = await rawRequest(`${gw.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?${key}=${TOKEN}&alt=sse&fields=candidates&%24fields=x`, {
        method: "POST", headers: { "content-type": "application/json", ...accountHeaders },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
      });
      assert.equal(r.status, 200, `${key}: ${r.text}`);
      const seen = gemini.received.at(-1)!;
      assert.ok(!decodeURIComponent(seen.path).includes(TOKEN), `${key}: the gateway token reached the provider: ${seen.path}`);
      assert.deepEqual(seen.query, { alt: "sse" });
      assert.equal(seen.key, CHANNEL_KEY);
      for (const name of Object.keys(accountHeaders)) assert.equal(seen.headers[name], undefined, `${name} forwarded`);
    }
    // With header auth, a `KEY=` (Google's key parameter is case-sensitive) or any other name goes nowhere either.
    const r = await rawRequest(`${gw.url}/v1beta/models/gemini-2.5-flash:generateContent?KEY=${TOKEN}&alt=json&callback=f`, {
      method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": TOKEN },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(gemini.received.at(-1)!.path, "/v1beta/models/gemini-2.5-flash:generateContent");
  });
});
