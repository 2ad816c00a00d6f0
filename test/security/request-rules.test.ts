// Issue 18, item 7: every route that reads a body runs the model's request rules. A model
// whose request_schema caps max_tokens at 100 was enforced on chat-completions but not on
// /v1/messages, so a client could ask the messages route for what the operator forbids.
// Token counting is free and generates nothing: its bodies are not held to a generation
// request's schema (one requiring max_tokens would refuse every count).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { compileSource } from "../../src/config/index.js";
import { RuntimeBox } from "../../src/runtime/box.js";
import { startGateway, type GatewayServer } from "../../src/server/server.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fake-anthropic.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { CHANNEL_KEY, TOKEN, channel, config, rawRequest } from "../integration/support.js";

describe("request rules on every body route (issue 18)", () => {
  let dir: string;
  let anthropicFake: FakeAnthropic;
  let openaiFake: FakeOpenAI;
  let gw: GatewayServer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "gw-rules-"));
    mkdirSync(join(dir, "schemas", "requests"), { recursive: true });
    writeFileSync(join(dir, "schemas", "requests", "short-answers.json"), JSON.stringify({
      type: "object",
      properties: { max_tokens: { type: "integer", maximum: 100, description: "answers are capped at 100 tokens" } },
    }));
    anthropicFake = await startFakeAnthropic();
    openaiFake = await startFakeOpenAI();
    const yaml = config({
      channels: [
        { name: "an", protocol: "anthropic", base_url: anthropicFake.url, keys: [CHANNEL_KEY], groups: ["default"], models: ["claude-capped"] },
        // The same cap on a model that messages clients reach through a converted channel.
        channel("oa", openaiFake.url, { models: ["gpt-capped"] }),
      ],
      models: {
        "claude-capped": { endpoint: "chat", request_schema: "short-answers", price: { input: 3, output: 15 } },
        "gpt-capped": { endpoint: "chat", request_schema: "short-answers", price: { input: 0.15, output: 0.6 } },
      },
    });
    const { runtime } = compileSource(yaml, { path: join(dir, "gateway.yaml"), env: {} });
    gw = await startGateway({ box: new RuntimeBox(runtime) });
  });
  after(async () => {
    await gw?.drain(1000);
    await anthropicFake?.close();
    await openaiFake?.close();
    destroyAgents();
    rmSync(dir, { recursive: true, force: true });
  });

  const anthropic = () => new Anthropic({ apiKey: TOKEN, baseURL: gw.url, maxRetries: 0 });
  const ask = (model: string, maxTokens: number) => ({ model, max_tokens: maxTokens, messages: [{ role: "user" as const, content: "hi" }] });

  test("a messages request over the schema's cap is refused 400 in the messages error shape, and nothing goes upstream", async () => {
    for (const model of ["claude-capped", "gpt-capped"]) {
      const before = anthropicFake.received.length + openaiFake.received.length;
      const err = await anthropic().messages.create(ask(model, 1000)).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof Anthropic.APIError, `${model}: ${String(err)}`);
      assert.equal(err.status, 400, model);
      const body = err.error as { type: string; error: { type: string; message: string } };
      assert.equal(body.type, "error");
      assert.equal(body.error.type, "invalid_request_error");
      assert.match(body.error.message, /'max_tokens'.*capped at 100/);
      assert.equal(anthropicFake.received.length + openaiFake.received.length, before, `${model}: nothing reached an upstream`);
    }
  });

  test("within the cap the messages request is served; chat-completions keeps its refusal", async () => {
    const ok = await anthropic().messages.create(ask("claude-capped", 50));
    assert.equal(ok.type, "message");
    const openai = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const err = await openai.chat.completions.create(ask("gpt-capped", 1000)).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.code, "invalid_parameter");
  });

  test("token counting is not held to the generation schema", async () => {
    const r = await rawRequest(`${gw.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-capped", max_tokens: 1000, messages: [{ role: "user", content: "hi" }] }),
    });
    assert.equal(r.status, 200, r.text);
  });
});
