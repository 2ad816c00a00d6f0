// Kind vertex: Claude (protocol anthropic) and Gemini (protocol gemini) on Vertex AI behind
// a service account. The fake Vertex (test/helpers/fake-vertex.ts) verifies the signed JWT
// at its token endpoint and checks every model request's token, URL and body; the real-
// format fakes answer. Clients are the official SDKs: Anthropic's (pass-through, plain
// and streamed), OpenAI's (converted to Claude) and @google/genai (Gemini, streamed).

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { GoogleGenAI } from "@google/genai";
import { ANTHROPIC_FAKE_COUNT, startFakeAnthropic, type FakeAnthropic } from "../helpers/fake-anthropic.js";
import { GEMINI_FAKE_COUNT, startFakeGemini, type FakeGemini } from "../helpers/fake-gemini.js";
import {
  CLOUD_PLATFORM_SCOPE, VERTEX_ANTHROPIC_VERSION, startFakeVertex, type FakeVertex, type VertexReceived,
} from "../helpers/fake-vertex.js";
import { entryOf, eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { CHANNEL_KEY, TOKEN, capturingSink, closedPort, config, type Obj } from "./support.js";

const PROJECT = "gw-vertex-proj";
const CLAUDE = "claude-sonnet-4-6";
const CLAUDE_ON_VERTEX = "claude-sonnet-4-6@20260217";
const GEMINI = "gemini-2.5-flash";
/** Served by a channel whose tokens live 4 s (refresh), one whose token endpoint refuses
 * (with a backup), the refusing one alone, and one whose token endpoint is down (with a backup). */
const REFRESHED = "claude-refreshed";
const REFUSED = "claude-refused";
const REFUSED_ONLY = "claude-refused-only";
const UNREACHABLE = "claude-unreachable";

const claudePrice = { price: { input: 3, output: 15 } };
// The fakes' usage: 12 in, 5 out. Group default's multiplier is 0.7.
// Claude: (12×3 + 5×15) per 1M × 0.7 = 77.7 µ; Gemini: (12×0.3 + 5×2.5) per 1M × 0.7 = 11.27 µ.
const CLAUDE_COST = 77_700n;
const GEMINI_COST = 11_270n;

function vertexChannel(name: string, fake: FakeVertex, extra: Obj): Obj {
  return { name, kind: "vertex", base_url: fake.url, credentials_file: fake.keyFile, groups: ["default"], ...extra };
}

describe("kind vertex", () => {
  let anthropic: FakeAnthropic;
  let gemini: FakeGemini;
  /** Claude on us-east5 (and a backup channel on global), Gemini on global. */
  let vertex: FakeVertex;
  let shortLived: FakeVertex;
  let refusing: FakeVertex;
  let gw: TestGateway;
  const sink = capturingSink();
  let claude: Anthropic;
  let openai: OpenAI;
  let genai: GoogleGenAI;

  before(async () => {
    anthropic = await startFakeAnthropic({ keys: [CHANNEL_KEY] });
    gemini = await startFakeGemini({ keys: [CHANNEL_KEY] });
    const backing = { anthropicUrl: anthropic.url, anthropicKey: CHANNEL_KEY, geminiUrl: gemini.url, geminiKey: CHANNEL_KEY };
    vertex = await startFakeVertex({ project: PROJECT, locations: ["us-east5", "global"], ...backing });
    shortLived = await startFakeVertex({ project: PROJECT, locations: ["us-east5"], tokenLifetimeS: 4, ...backing });
    refusing = await startFakeVertex({ project: PROJECT, locations: ["us-east5"], ...backing });
    refusing.refuseTokens = true;
    // The main key file, but exchanged at a port nothing listens on.
    const down = JSON.parse(readFileSync(vertex.keyFile, "utf8")) as Obj;
    const downFile = `${vertex.keyFile}.down.json`;
    writeFileSync(downFile, JSON.stringify({ ...down, token_uri: `http://127.0.0.1:${await closedPort()}/token` }));
    gw = await startTestGateway(config({
      server: { upstream_attempts: 3 },
      channels: [
        // project from the key file's project_id
        vertexChannel("vx-claude", vertex, {
          region: "us-east5", models: [CLAUDE, REFUSED, UNREACHABLE], model_map: { [CLAUDE]: CLAUDE_ON_VERTEX }, priority: 10,
        }),
        vertexChannel("vx-claude-global", vertex, {
          region: "global", project: PROJECT, models: [CLAUDE, REFUSED, UNREACHABLE], model_map: { [CLAUDE]: CLAUDE_ON_VERTEX }, priority: 0,
        }),
        vertexChannel("vx-gemini", vertex, { protocol: "gemini", region: "global", project: PROJECT, models: [GEMINI] }),
        vertexChannel("vx-short", shortLived, { region: "us-east5", models: [REFRESHED] }),
        vertexChannel("vx-refusing", refusing, { region: "us-east5", models: [REFUSED, REFUSED_ONLY], priority: 20 }),
        { ...vertexChannel("vx-down", vertex, { region: "us-east5", models: [UNREACHABLE], priority: 20 }), credentials_file: downFile },
      ],
      models: {
        [CLAUDE]: claudePrice, [REFRESHED]: claudePrice, [REFUSED]: claudePrice, [REFUSED_ONLY]: claudePrice, [UNREACHABLE]: claudePrice,
        [GEMINI]: { price: { input: 0.3, output: 2.5 } },
      },
    }), { usage: sink });
    claude = new Anthropic({ apiKey: TOKEN, baseURL: gw.url, maxRetries: 0 });
    openai = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    genai = new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: gw.url } });
  });

  after(async () => {
    await gw?.close();
    await Promise.all([anthropic?.close(), gemini?.close(), vertex?.close(), shortLived?.close(), refusing?.close()]);
    destroyAgents();
  });

  beforeEach(async () => {
    vertex.script = undefined;
    await gw.forgetHealth();
  });

  /** The usage record of a request, once the sink has it. */
  async function recordOf(requestId: string) {
    await eventually(() => sink.records.some((r) => r.id === requestId), 3000, `the record of ${requestId}`);
    return sink.records.find((r) => r.id === requestId)!;
  }

  /** The last model request the fake received. */
  function lastOf(fake: FakeVertex): VertexReceived {
    const all = fake.received;
    assert.ok(all.length > 0, "the fake Vertex received no model request");
    return all[all.length - 1];
  }

  /** The token came from the fake's token endpoint, for an assertion signed as Google wants. */
  function assertMinted(fake: FakeVertex, token: string): void {
    const mint = fake.mints.find((m) => m.token === token);
    assert.ok(mint, "the Bearer token is one the token endpoint issued");
    assert.equal(mint.claims.iss, fake.clientEmail);
    assert.equal(mint.claims.aud, fake.tokenUri);
    assert.equal(mint.claims.scope, CLOUD_PLATFORM_SCOPE);
  }

  function assertClaudeRequest(r: VertexReceived, method: "rawPredict" | "streamRawPredict"): void {
    assert.equal(r.path, `/v1/projects/${PROJECT}/locations/us-east5/publishers/anthropic/models/${CLAUDE_ON_VERTEX}:${method}`);
    assert.equal(r.body.anthropic_version, VERTEX_ANTHROPIC_VERSION);
    assert.equal("model" in r.body, false);
    assert.equal(r.headers["anthropic-version"], undefined);
    assert.equal(r.headers["x-api-key"], undefined);
    assertMinted(vertex, r.token);
  }

  test("Anthropic SDK → vertex Claude, plain: rawPredict on the project's model, billed exactly", async () => {
    const { data, response } = await claude.messages.create({
      model: CLAUDE, max_tokens: 20, system: "be brief", messages: [{ role: "user", content: "hello" }],
    }).withResponse();
    assert.equal(data.type, "message");
    assert.ok(data.content.some((b) => b.type === "text" && b.text.length > 0));
    assert.equal(data.usage.input_tokens, 12);
    assert.equal(data.usage.output_tokens, 5);
    const r = lastOf(vertex);
    assertClaudeRequest(r, "rawPredict");
    assert.equal(r.body.system, "be brief");
    assert.deepEqual(r.body.messages, [{ role: "user", content: "hello" }]);
    assert.equal(r.body.max_tokens, 20);
    const entry = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    assert.equal(entry.channel, "vx-claude");
    assert.equal(entry.costNano, CLAUDE_COST);
  });

  test("Anthropic SDK → vertex Claude, streamed: streamRawPredict, events relayed, billed exactly", async () => {
    const s = claude.messages.stream({ model: CLAUDE, max_tokens: 20, messages: [{ role: "user", content: "hello" }] });
    const types: string[] = [];
    s.on("streamEvent", (e) => types.push(e.type));
    const final = await s.finalMessage();
    const requestId = (await s.withResponse()).response.headers.get("x-gateway-request-id")!;
    assert.equal(types[0], "message_start");
    assert.equal(types.at(-1), "message_stop");
    assert.ok(types.includes("content_block_delta"));
    assert.equal(final.usage.output_tokens, 5);
    const r = lastOf(vertex);
    assertClaudeRequest(r, "streamRawPredict");
    assert.equal(r.body.stream, true);
    const entry = await entryOf(gw.store, requestId);
    assert.equal(entry.costNano, CLAUDE_COST);
  });

  test("OpenAI SDK chat → vertex Claude, converted: rawPredict with a Messages body", async () => {
    const { data, response } = await openai.chat.completions.create({
      model: CLAUDE, max_tokens: 20, messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hello" }],
    }).withResponse();
    assert.equal(data.object, "chat.completion");
    assert.ok((data.choices[0].message.content ?? "").length > 0);
    assert.equal(data.usage?.prompt_tokens, 12);
    assert.equal(data.usage?.completion_tokens, 5);
    const r = lastOf(vertex);
    assertClaudeRequest(r, "rawPredict");
    assert.equal(r.body.max_tokens, 20);
    assert.ok(Array.isArray(r.body.messages));
    const entry = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    assert.equal(entry.costNano, CLAUDE_COST);
  });

  test("@google/genai → vertex Gemini, streamed: streamGenerateContent?alt=sse on the google publisher", async () => {
    const before = vertex.received.length;
    const mark = sink.records.length;
    const stream = await genai.models.generateContentStream({ model: GEMINI, contents: "hello" });
    let text = "";
    let usage: { promptTokenCount?: number; candidatesTokenCount?: number } | undefined;
    for await (const chunk of stream) {
      text += chunk.text ?? "";
      usage = chunk.usageMetadata ?? usage;
    }
    assert.ok(text.length > 0);
    assert.equal(usage?.promptTokenCount, 12);
    assert.equal(usage?.candidatesTokenCount, 5);
    assert.equal(vertex.received.length, before + 1);
    const r = lastOf(vertex);
    assert.equal(r.path, `/v1/projects/${PROJECT}/locations/global/publishers/google/models/${GEMINI}:streamGenerateContent?alt=sse`);
    assert.equal(r.headers["x-goog-api-key"], undefined);
    assert.equal("anthropic_version" in r.body, false);
    assert.ok(Array.isArray(r.body.contents));
    assertMinted(vertex, r.token);
    await eventually(() => sink.records.length > mark, 3000, "the usage record");
    const record = sink.records[mark];
    assert.equal(record.channel, "vx-gemini");
    const entry = await entryOf(gw.store, record.id);
    assert.equal(entry.costNano, GEMINI_COST);
  });

  test("token counting: Claude's count-tokens model and Gemini's countTokens", async () => {
    const counted = await claude.messages.countTokens({ model: CLAUDE, messages: [{ role: "user", content: "hello" }] });
    assert.equal(counted.input_tokens, ANTHROPIC_FAKE_COUNT);
    const c = lastOf(vertex);
    assert.equal(c.path, `/v1/projects/${PROJECT}/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict`);
    assert.equal(c.body.model, CLAUDE_ON_VERTEX);
    const g = await genai.models.countTokens({ model: GEMINI, contents: "hello" });
    assert.equal(g.totalTokens, GEMINI_FAKE_COUNT);
    assert.equal(lastOf(vertex).path, `/v1/projects/${PROJECT}/locations/global/publishers/google/models/${GEMINI}:countTokens`);
  });

  test("one token per key file, reused; minted again once it expires, one mint at a time", async () => {
    const ask = () => claude.messages.create({ model: REFRESHED, max_tokens: 5, messages: [{ role: "user", content: "hi" }] });
    await Promise.all([ask(), ask(), ask(), ask()]);
    assert.equal(shortLived.mints.length, 1, "four concurrent first requests share one mint");
    await ask();
    assert.equal(shortLived.mints.length, 1, "a fresh token is reused");
    const first = shortLived.mints[0];
    await eventually(() => Date.now() > first.expiresAt, 10_000, "the first token to expire");
    await ask();
    assert.equal(shortLived.mints.length, 2, "a request after expiry mints a new token");
    assert.equal(lastOf(shortLived).token, shortLived.mints[1].token);
    assertMinted(shortLived, shortLived.mints[1].token);
  });

  test("a token endpoint that refuses takes the credential out: the next channel serves, alone the client gets the key error", async () => {
    const refusalsBefore = refusing.refusals.length;
    const served = await claude.messages.create({ model: REFUSED, max_tokens: 5, messages: [{ role: "user", content: "hi" }] }).withResponse();
    assert.equal(served.data.type, "message");
    assert.ok(refusing.refusals.length > refusalsBefore, "the refusing token endpoint was asked");
    assert.equal(refusing.received.length, 0, "no model request went out without a token");
    const record = await recordOf(served.response.headers.get("x-gateway-request-id")!);
    assert.equal(record.channel, "vx-claude");
    assert.equal(record.attempts, 2, "the refusing channel was tried first");
    await assert.rejects(
      claude.messages.create({ model: REFUSED_ONLY, max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
      (err: unknown) => {
        assert.ok(err instanceof Anthropic.APIError);
        assert.equal(err.status, 502);
        assert.match(JSON.stringify(err.error), /upstream_auth_failed/);
        return true;
      },
    );
  });

  test("a token endpoint that does not answer fails the channel over", async () => {
    const { response } = await claude.messages.create({ model: UNREACHABLE, max_tokens: 5, messages: [{ role: "user", content: "hi" }] }).withResponse();
    const record = await recordOf(response.headers.get("x-gateway-request-id")!);
    assert.equal(record.channel, "vx-claude");
    assert.equal(record.attempts, 2, "the channel whose token endpoint is down was tried first");
  });

  test("Google's errors reach a Claude client in Anthropic's shape", async () => {
    vertex.script = () => ({ status: 400, googleStatus: "INVALID_ARGUMENT", message: "Request contains an invalid argument." });
    await assert.rejects(
      claude.messages.create({ model: CLAUDE, max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
      (err: unknown) => {
        assert.ok(err instanceof Anthropic.BadRequestError);
        const body = err.error as { type?: string; error?: { type?: string; message?: string } };
        assert.equal(body.type, "error");
        assert.equal(body.error?.type, "invalid_request_error");
        assert.equal(body.error?.message, "Request contains an invalid argument.");
        return true;
      },
    );
  });

  test("PERMISSION_DENIED takes the credential out: the next channel serves", async () => {
    vertex.script = (r) => r.location === "us-east5"
      ? { status: 403, googleStatus: "PERMISSION_DENIED", message: "Permission 'aiplatform.endpoints.predict' denied.", reason: "IAM_PERMISSION_DENIED" }
      : undefined;
    const { data, response } = await claude.messages.create({ model: CLAUDE, max_tokens: 5, messages: [{ role: "user", content: "hi" }] }).withResponse();
    assert.equal(data.type, "message");
    const record = await recordOf(response.headers.get("x-gateway-request-id")!);
    assert.equal(record.channel, "vx-claude-global");
    assert.equal(record.attempts, 2);
    assert.equal(lastOf(vertex).location, "global");
  });

  test("Gemini channels keep Google's error shape", async () => {
    vertex.script = (r) => r.publisher === "google" ? { status: 400, googleStatus: "INVALID_ARGUMENT", message: "bad contents" } : undefined;
    await assert.rejects(genai.models.generateContent({ model: GEMINI, contents: "hello" }), (err: unknown) => {
      assert.match(String((err as Error).message), /bad contents/);
      assert.match(String((err as Error).message), /INVALID_ARGUMENT/);
      return true;
    });
  });
});
