// A channel whose key the upstream refuses is the operator's problem, not the client's:
// Gemini refuses a bad key with 400 API_KEY_INVALID (not 401), and that must fail over
// like a 401, and never reach the client as "your API key is not valid".

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startFakeGemini, type FakeGemini } from "../helpers/fake-gemini.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { TOKEN, config } from "./support.js";

const GOOD = "gm-good-key-0123456789";

describe("upstream credential refusals", () => {
  let fake: FakeGemini;
  const open: TestGateway[] = [];

  before(async () => {
    fake = await startFakeGemini({ keys: [GOOD] });
  });
  after(async () => {
    for (const gw of open) await gw.close();
    await fake?.close();
    destroyAgents();
  });

  const gemini = (name: string, key: string, priority: number) => ({
    name, protocol: "gemini", base_url: fake.url, keys: [key], groups: ["default"], models: ["gemini-2.5-flash"], priority,
  });
  const generate = (gw: TestGateway) => fetch(`${gw.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": TOKEN },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
  });

  test("a 400 API_KEY_INVALID fails over to the next channel", async () => {
    const gw = await startTestGateway(config({ channels: [gemini("bad", "gm-wrong-key", 10), gemini("good", GOOD, 0)] }));
    open.push(gw);
    const before = fake.received.length;
    const r = await generate(gw);
    assert.equal(r.status, 200, await r.clone().text());
    assert.equal(fake.received.length - before, 2, "one refused attempt, one served");
  });

  test("with every key refused, the client gets 502 upstream_auth_failed, not the upstream's key message", async () => {
    const gw = await startTestGateway(config({ channels: [gemini("bad", "gm-wrong-key", 0)] }));
    open.push(gw);
    const r = await generate(gw);
    const text = await r.text();
    assert.equal(r.status, 502, text);
    const body = JSON.parse(text);
    assert.equal(body.error.code, 502);
    assert.equal(body.error.details[0].reason, "upstream_auth_failed");
    assert.doesNotMatch(text, /API key not valid|API_KEY_INVALID|gm-wrong-key/);
  });
});
