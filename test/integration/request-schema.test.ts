// A model's request_schema is checked on every request before anything is reserved or
// sent: a missing field is 400 missing_required_parameter, another mismatch 400
// invalid_parameter, both naming the field, in the caller's protocol shape.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileSource } from "../../src/config/index.js";
import { RuntimeBox } from "../../src/runtime/box.js";
import { startGateway, type GatewayServer } from "../../src/server/server.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { TOKEN, channel, config, postChat } from "./support.js";

describe("request_schema", () => {
  let dir: string;
  let fake: FakeOpenAI;
  let gw: GatewayServer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "gw-schema-"));
    mkdirSync(join(dir, "schemas", "requests"), { recursive: true });
    writeFileSync(join(dir, "schemas", "requests", "tagged-chat.json"), JSON.stringify({
      type: "object",
      required: ["model", "messages", "user"],
      properties: { user: { type: "string", pattern: "^team-", description: "user ids start with team-" } },
    }));
    fake = await startFakeOpenAI();
    const yaml = config({
      channels: [channel("main", fake.url, { models: ["gpt-4o-mini", "tagged"] })],
      models: {
        "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6 } },
        tagged: { endpoint: "chat", request_schema: "tagged-chat", price: { input: 1, output: 1 } },
      },
    });
    const { runtime } = compileSource(yaml, { path: join(dir, "gateway.yaml"), env: {} });
    gw = await startGateway({ box: new RuntimeBox(runtime) });
  });
  after(async () => {
    await gw?.drain(1000);
    await fake?.close();
    destroyAgents();
    rmSync(dir, { recursive: true, force: true });
  });

  const chat = (body: Record<string, unknown>) => postChat(gw.url, body, { authorization: `Bearer ${TOKEN}` });
  const messages = [{ role: "user", content: "hi" }];

  test("a missing field: 400 missing_required_parameter naming it; nothing sent upstream", async () => {
    const r = await chat({ model: "tagged", messages });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, "missing_required_parameter");
    assert.match(r.json.error.message, /'user'/);
    assert.equal(fake.received.length, 0);
  });

  test("a value that breaks the schema: 400 invalid_parameter with the schema's explanation", async () => {
    const r = await chat({ model: "tagged", messages, user: "alice" });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, "invalid_parameter");
    assert.match(r.json.error.message, /'user'.*user ids start with team-/);
  });

  test("a matching body is served; models without a schema are not checked", async () => {
    assert.equal((await chat({ model: "tagged", messages, user: "team-7" })).status, 200);
    assert.equal((await chat({ model: "gpt-4o-mini", messages })).status, 200);
  });

  /** A messages-protocol call (Anthropic's headers and error shape). */
  const messagesCall = (path: string, body: Record<string, unknown>) => fetch(`${gw.url}${path}`, {
    method: "POST", headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify(body),
  });

  test("/v1/messages is checked too, its error in the messages protocol's shape; token counting is not", async () => {
    const before = fake.received.length;
    const refused = await messagesCall("/v1/messages", { model: "tagged", max_tokens: 16, messages });
    assert.equal(refused.status, 400);
    const body = await refused.json() as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, "error");
    assert.equal(body.error.type, "invalid_request_error");
    assert.match(body.error.message, /'user'/);
    assert.equal(fake.received.length, before, "nothing sent upstream");
    // A count body is no generation request: the schema (which wants `user`) does not judge it.
    const counted = await messagesCall("/v1/messages/count_tokens", { model: "tagged", messages });
    assert.equal(counted.status, 200, await counted.clone().text());
  });

  test("a schema file that is not a JSON Schema is a config error naming the key", () => {
    writeFileSync(join(dir, "schemas", "requests", "broken.json"), "{ not json");
    const yaml = config({
      channels: [channel("main", fake.url, { models: ["b"] })],
      models: { b: { request_schema: "broken", price: { input: 1 } } },
    });
    assert.throws(() => compileSource(yaml, { path: join(dir, "gateway.yaml"), env: {} }), /models\.b\.request_schema/);
  });
});
