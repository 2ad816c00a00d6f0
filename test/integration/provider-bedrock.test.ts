// Kind bedrock end to end: the gateway in front of a fake Bedrock Runtime that checks
// SigV4 signatures by computing them again (fake-bedrock.ts). Anthropic SDK clients pass
// through (plain and streamed), an OpenAI SDK chat client is converted; billing is exact
// from the usage Bedrock's Anthropic events carry; a stream frame whose checksum does not
// match ends the client's stream with an error and is billed as an estimate; API keys go
// as Bearer; a key Bedrock refuses (AccessDenied) leaves rotation and the next serves.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { compileSource } from "../../src/config/index.js";
import { Readable } from "node:stream";
import { compileBedrock } from "../../src/providers/bedrock/compile.js";
import { anthropicErrorBody, bedrockKeyFaults } from "../../src/providers/bedrock/errors.js";
import { sseOfEventStream } from "../../src/providers/bedrock/eventstream.js";
import { countedModelId } from "../../src/providers/bedrock/request.js";
import { judgeKeyFault } from "../../src/providers/provider.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { BEDROCK_COUNT, BEDROCK_TEXT, BEDROCK_USAGE, chunkFrame, countedBody, exceptionFrame, startFakeBedrock, type BedrockReceived, type FakeBedrock } from "../helpers/fake-bedrock.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { dataOf, sseEvents } from "../helpers/client-wire.js";
import { TOKEN, config, type Obj } from "./support.js";

const REGION = "us-east-1";
const MAIN = { accessKeyId: "AKIAMAINKEY000000001", secretAccessKey: "main/secret+AbCdEfGhIjKlMnOpQrStUvWxYz01" };
const TEMP = { accessKeyId: "ASIATEMPKEY000000002", secretAccessKey: "temp/secret+AbCdEfGhIjKlMnOpQrStUvWxYz02", sessionToken: "FwoGZXIvYXdzEJr//////////session+token=" };
const DENIED = { accessKeyId: "AKIADENIEDKEY0000003", secretAccessKey: "denied/secret+AbCdEfGhIjKlMnOpQrStUvWxYz03" };
const SPARE = { accessKeyId: "AKIASPAREKEY00000004", secretAccessKey: "spare/secret+AbCdEfGhIjKlMnOpQrStUvWxYz04" };
const API_KEY = "ABSKQmVkcm9ja0FQSUtleS1mYWtlLWtleS0wMDAwMDE=";
const PROFILE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const ARN = `arn:aws:bedrock:${REGION}:123456789012:inference-profile/${PROFILE}`;

/** claude-sonnet-4-5 at $3 / $15 per million tokens, × group default's 0.7, in nano-units. */
function nanoFor(input: number, output: number): bigint {
  return 700n * 3n * BigInt(input) + 700n * 15n * BigInt(output);
}

const price = { price: { input: 3, output: 15 } };

function bedrockChannel(name: string, model: string, extra: Obj): Obj {
  return { name, kind: "bedrock", region: REGION, groups: ["default"], models: [model], ...extra };
}

describe("kind bedrock", { concurrency: true }, () => {
  let fake: FakeBedrock;
  let gw: TestGateway;
  let anthropic: Anthropic;
  let openai: OpenAI;

  before(async () => {
    fake = await startFakeBedrock({
      region: REGION, accessKeys: [MAIN, TEMP, DENIED, SPARE], apiKeys: [API_KEY], accessDenied: [DENIED.accessKeyId],
      script: (r) => {
        const prompt = JSON.stringify(r.body.messages ?? "");
        if (prompt.includes("corrupt-frame")) return { kind: "corrupt", frame: 3 };
        if (prompt.includes("throttle-mid-stream")) return { kind: "exception", exceptionType: "throttlingException", message: "Too many tokens, please wait before trying again." };
        if (prompt.includes("invalid-request")) return { kind: "error", status: 400, errorType: "ValidationException", message: "max_tokens: must be at most 64000" };
        return { kind: "ok" };
      },
    });
    const base = fake.url;
    gw = await startTestGateway(config({
      models: {
        "claude-sonnet-4-5": price, "claude-temp": price, "claude-apikey": price, "claude-rotation": price, "claude-badsecret": price,
      },
      channels: [
        bedrockChannel("bedrock-main", "claude-sonnet-4-5", {
          base_url: base, credentials: { access_key_id: MAIN.accessKeyId, secret_access_key: MAIN.secretAccessKey },
          model_map: { "claude-sonnet-4-5": PROFILE },
        }),
        bedrockChannel("bedrock-temp", "claude-temp", {
          base_url: base,
          credentials: { access_key_id: TEMP.accessKeyId, secret_access_key: TEMP.secretAccessKey, session_token: TEMP.sessionToken },
          model_map: { "claude-temp": PROFILE },
        }),
        bedrockChannel("bedrock-apikey", "claude-apikey", { base_url: base, credentials: { api_key: API_KEY }, model_map: { "claude-apikey": ARN } }),
        bedrockChannel("bedrock-rotation", "claude-rotation", {
          base_url: base,
          keys: [`${DENIED.accessKeyId}:${DENIED.secretAccessKey}`, `${SPARE.accessKeyId}:${SPARE.secretAccessKey}`],
          model_map: { "claude-rotation": PROFILE },
        }),
        bedrockChannel("bedrock-badsecret", "claude-badsecret", {
          base_url: base, keys: [`${MAIN.accessKeyId}:not-the-secret`], model_map: { "claude-badsecret": PROFILE },
        }),
      ],
    }));
    anthropic = new Anthropic({ apiKey: TOKEN, baseURL: gw.url, maxRetries: 0 });
    openai = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  /** What the fake received for a prompt (each test's is its own). */
  function receivedFor(tag: string): BedrockReceived[] {
    return fake.received.filter((r) => JSON.stringify(r.body.messages ?? "").includes(tag));
  }

  test("an Anthropic SDK request passes through: signed, the model in the URL, Bedrock's body, billed exactly", async () => {
    const tag = "plain-passthrough";
    const { data, response } = await anthropic.beta.messages.create({
      model: "claude-sonnet-4-5", max_tokens: 100, messages: [{ role: "user", content: tag }], betas: ["interleaved-thinking-2025-05-14"],
    }).withResponse();
    assert.equal(data.content[0].type === "text" && data.content[0].text, BEDROCK_TEXT);
    assert.equal(data.usage.input_tokens, BEDROCK_USAGE.input);
    const [r] = receivedFor(tag);
    assert.equal(r.auth, "signature-ok");
    assert.equal(r.credential, MAIN.accessKeyId);
    assert.equal(r.path, `/model/${encodeURIComponent(PROFILE)}/invoke`);
    assert.equal(r.modelId, PROFILE);
    assert.equal(r.body.anthropic_version, "bedrock-2023-05-31");
    assert.deepEqual(r.body.anthropic_beta, ["interleaved-thinking-2025-05-14"]);
    assert.ok(!("model" in r.body) && !("stream" in r.body));
    for (const h of ["anthropic-version", "anthropic-beta", "x-api-key", "x-amz-security-token"]) assert.equal(r.headers[h], undefined, h);
    assert.equal(r.headers["content-length"], String(r.raw.length));
    const e = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    assert.equal(e.channel, "bedrock-main");
    assert.equal(e.estimated, false);
    assert.equal(e.costNano, nanoFor(BEDROCK_USAGE.input, BEDROCK_USAGE.output));
  });

  test("an Anthropic SDK stream passes through: event-stream frames become Anthropic SSE, billed exactly", async () => {
    const tag = "streamed-passthrough";
    const { data: stream, response } = await anthropic.messages.create({
      model: "claude-sonnet-4-5", max_tokens: 100, messages: [{ role: "user", content: tag }], stream: true,
    }).withResponse();
    assert.match(String(response.headers.get("content-type")), /^text\/event-stream/);
    const types: string[] = [];
    let text = "";
    let output = 0;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
      if (event.type === "message_delta") output = event.usage.output_tokens;
    }
    assert.equal(text, BEDROCK_TEXT);
    assert.equal(output, BEDROCK_USAGE.output);
    assert.deepEqual(types, ["message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    const [r] = receivedFor(tag);
    assert.equal(r.auth, "signature-ok");
    assert.equal(r.path, `/model/${encodeURIComponent(PROFILE)}/invoke-with-response-stream`);
    assert.equal(r.headers.accept, "application/vnd.amazon.eventstream");
    const e = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    assert.equal(e.estimated, false);
    assert.equal(e.usage.input, BEDROCK_USAGE.input);
    assert.equal(e.usage.output, BEDROCK_USAGE.output);
    assert.equal(e.costNano, nanoFor(BEDROCK_USAGE.input, BEDROCK_USAGE.output));
  });

  test("an OpenAI SDK chat stream converts to the bedrock channel, billed exactly", async () => {
    const tag = "converted-chat";
    const { data: stream, response } = await openai.chat.completions.create({
      model: "claude-sonnet-4-5", messages: [{ role: "user", content: tag }], stream: true, stream_options: { include_usage: true },
    }).withResponse();
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, BEDROCK_TEXT);
    assert.equal(usage?.prompt_tokens, BEDROCK_USAGE.input);
    assert.equal(usage?.completion_tokens, BEDROCK_USAGE.output);
    const [r] = receivedFor(tag);
    assert.equal(r.auth, "signature-ok");
    assert.equal(r.streamed, true);
    assert.equal(r.body.anthropic_version, "bedrock-2023-05-31");
    const e = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    assert.equal(e.inboundProtocol, "chat-completions");
    assert.equal(e.estimated, false);
    assert.equal(e.costNano, nanoFor(BEDROCK_USAGE.input, BEDROCK_USAGE.output));
  });

  test("a stream frame whose checksum does not match ends the stream with an error, billed as an estimate", async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST", headers: { "x-api-key": TOKEN, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 100, stream: true, messages: [{ role: "user", content: "corrupt-frame" }] }),
    });
    assert.equal(res.status, 200);
    const events = sseEvents(await res.text());
    // Frames 0–2 (message_start, content_block_start, the first delta) were whole; frame 3 is not.
    assert.deepEqual(events.map((e) => e.event), ["message_start", "content_block_start", "content_block_delta", "error"]);
    assert.equal(dataOf(events[2]).delta.text, BEDROCK_TEXT.slice(0, Math.ceil(BEDROCK_TEXT.length / 2)));
    assert.equal(dataOf(events[3]).error.type, "api_error");
    for (const e of events) assert.doesNotThrow(() => JSON.parse(e.data), e.raw);
    const e = await entryOf(gw.store, res.headers.get("x-gateway-request-id")!);
    assert.equal(e.estimated, true);
    assert.ok(e.costNano < nanoFor(BEDROCK_USAGE.input, BEDROCK_USAGE.output), `${e.costNano}`);
  });

  test("an exception frame mid-stream becomes Anthropic's error event", async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST", headers: { "x-api-key": TOKEN, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 100, stream: true, messages: [{ role: "user", content: "throttle-mid-stream" }] }),
    });
    const events = sseEvents(await res.text());
    assert.deepEqual(events.map((e) => e.event), ["message_start", "error"]);
    assert.deepEqual(dataOf(events[1]).error, { type: "overloaded_error", message: "Too many tokens, please wait before trying again." });
    const e = await entryOf(gw.store, res.headers.get("x-gateway-request-id")!);
    assert.equal(e.estimated, true);
  });

  test("a Bedrock error reaches the client in Anthropic's shape, its status kept", async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST", headers: { "x-api-key": TOKEN, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 100, messages: [{ role: "user", content: "invalid-request" }] }),
    });
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), { type: "error", error: { type: "invalid_request_error", message: "max_tokens: must be at most 64000" } });
  });

  test("a token count is Bedrock's CountTokens (never an invocation), answered as Anthropic's", async () => {
    const tag = "count-tokens";
    const counted = await anthropic.messages.countTokens({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: tag }] });
    assert.equal(counted.input_tokens, BEDROCK_COUNT);
    const [r] = fake.received.filter((x) => JSON.stringify(countedBody(x.body).messages ?? "").includes(tag));
    assert.equal(r.auth, "signature-ok");
    // CountTokens takes foundation-model ids: the profile's model is counted.
    assert.equal(r.path, `/model/${encodeURIComponent(PROFILE.slice("us.".length))}/count-tokens`);
    assert.equal(countedBody(r.body).anthropic_version, "bedrock-2023-05-31");
    assert.ok(!fake.received.some((x) => !x.counted && JSON.stringify(x.body.messages ?? "").includes(tag)), "no invocation for a count");
  });

  test("temporary credentials sign with their session token", async () => {
    const tag = "session-token";
    const data = await anthropic.messages.create({ model: "claude-temp", max_tokens: 100, messages: [{ role: "user", content: tag }] });
    assert.equal(data.content[0].type === "text" && data.content[0].text, BEDROCK_TEXT);
    const [r] = receivedFor(tag);
    assert.equal(r.auth, "signature-ok");
    assert.equal(r.credential, TEMP.accessKeyId);
    assert.equal(r.headers["x-amz-security-token"], TEMP.sessionToken);
  });

  test("a Bedrock API key is sent as Bearer, and an ARN model id is encoded whole", async () => {
    const tag = "api-key-bearer";
    const data = await anthropic.messages.create({ model: "claude-apikey", max_tokens: 100, messages: [{ role: "user", content: tag }] });
    assert.equal(data.content[0].type === "text" && data.content[0].text, BEDROCK_TEXT);
    const [r] = receivedFor(tag);
    assert.equal(r.auth, "bearer");
    assert.equal(r.headers.authorization, `Bearer ${API_KEY}`);
    assert.equal(r.headers["x-amz-date"], undefined);
    assert.equal(r.modelId, ARN);
    assert.equal(r.path, `/model/${encodeURIComponent(ARN)}/invoke`);
  });

  test("a key Bedrock refuses (AccessDenied) leaves rotation; the next key serves", async () => {
    for (let i = 0; i < 3; i++) {
      const tag = `rotation-${i}`;
      const data = await anthropic.messages.create({ model: "claude-rotation", max_tokens: 100, messages: [{ role: "user", content: tag }] });
      assert.equal(data.content[0].type === "text" && data.content[0].text, BEDROCK_TEXT, tag);
    }
    const tried = fake.received.filter((r) => JSON.stringify(r.body.messages ?? "").includes("rotation-")).map((r) => r.credential);
    // The first request met the refused key, then the spare; afterwards only the spare.
    assert.deepEqual(tried, [DENIED.accessKeyId, SPARE.accessKeyId, SPARE.accessKeyId, SPARE.accessKeyId]);
  });

  test("a wrong secret is caught by the fake's signature check, and the client is not served", async () => {
    const tag = "bad-secret";
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST", headers: { "x-api-key": TOKEN, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "claude-badsecret", max_tokens: 100, messages: [{ role: "user", content: tag }] }),
    });
    assert.notEqual(res.status, 200);
    await res.arrayBuffer();
    assert.deepEqual(receivedFor(tag).map((r) => r.auth), ["signature-mismatch"]);
  });
});

describe("kind bedrock settings", () => {
  test("region is required, other kinds' settings are refused, malformed keys are named", () => {
    const problems = compileBedrock({ name: "b", project: "p", keys: ["AKIA:x:y:z", ""] }).problems;
    assert.deepEqual(problems, [
      "project is not a setting of kind bedrock",
      "region is required for kind bedrock (e.g. us-east-1)",
      "keys[0] is neither ACCESS_KEY_ID:SECRET[:SESSION_TOKEN] nor a Bedrock API key",
    ]);
    const both = compileBedrock({ name: "b", region: REGION, credentials: { api_key: "k", access_key_id: "a", secret_access_key: "s" } });
    assert.deepEqual(both.problems, ["credentials: either api_key or access_key_id and secret_access_key, not both"]);
    const half = compileBedrock({ name: "b", region: REGION, credentials: { access_key_id: "a" } });
    assert.deepEqual(half.problems, ["credentials: access_key_id and secret_access_key go together (one is missing or empty)"]);
    const azure = compileBedrock({ name: "b", region: REGION, credentials: { tenant_id: "t", client_id: "c", client_secret: "s" } });
    assert.deepEqual(azure.problems, ["tenant_id", "client_id", "client_secret"].map((f) => `credentials.${f} is not a credential of kind bedrock (it takes access_key_id, secret_access_key, session_token or api_key)`));
    assert.deepEqual(azure.keys, []);
  });

  test("CountTokens counts an inference profile by its foundation model", () => {
    assert.equal(countedModelId(PROFILE), "anthropic.claude-sonnet-4-5-20250929-v1:0");
    assert.equal(countedModelId(ARN), "anthropic.claude-sonnet-4-5-20250929-v1:0");
    assert.equal(countedModelId("global.anthropic.claude-haiku-4-5-20251001-v1:0"), "anthropic.claude-haiku-4-5-20251001-v1:0");
    assert.equal(countedModelId("anthropic.claude-3-haiku-20240307-v1:0"), "anthropic.claude-3-haiku-20240307-v1:0");
    const app = `arn:aws:bedrock:${REGION}:123456789012:application-inference-profile/a1b2c3`;
    assert.equal(countedModelId(app), app);
  });

  test("the regional host by default; credentials then keys", () => {
    const c = compileBedrock({
      name: "b", region: "eu-west-3", credentials: { access_key_id: "AKIA1", secret_access_key: "s1", session_token: "t1" }, keys: ["AKIA2:s2", "apikey"],
    });
    assert.deepEqual(c.problems, []);
    assert.equal(c.baseUrl, "https://bedrock-runtime.eu-west-3.amazonaws.com");
    assert.deepEqual(c.keys, ["AKIA1:s1:t1", "AKIA2:s2", "apikey"]);
    assert.deepEqual(c.settings, { region: "eu-west-3" });
  });

  test("the config refuses a bedrock channel without region, naming the channel's key", () => {
    const yaml = config({ channels: [{ name: "b", kind: "bedrock", keys: ["AKIA1:s1"], groups: ["default"], models: ["claude-sonnet-4-5"] }] });
    assert.throws(() => compileSource(yaml, { path: "gateway.yaml", env: {} }), /channels\[0\]\.kind.*region is required/s);
  });
});

/** The SSE text a decoder makes of `pieces`, read as the gateway's relay reads (flowing
 * 'data'), or the error it ends with and what came before. */
function decode(pieces: readonly Buffer[]): Promise<{ text: string; error?: Error }> {
  return new Promise((resolve) => {
    let text = "";
    const sse = sseOfEventStream(Readable.from(pieces, { objectMode: false }));
    sse.on("data", (out: Buffer) => { text += String(out); });
    sse.on("end", () => resolve({ text }));
    sse.on("error", (error) => resolve({ text, error }));
  });
}

describe("kind bedrock event-stream decoding", () => {
  const frames = [
    chunkFrame({ type: "message_start", message: { id: "m", usage: { input_tokens: 3, output_tokens: 1 } } }),
    chunkFrame({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "line one\nline two" } }),
    chunkFrame({ type: "message_stop" }),
  ];
  const whole = Buffer.concat(frames);
  const expected = [
    `event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":3,"output_tokens":1}}}\n\n`,
    `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"line one\\nline two"}}\n\n`,
    `event: message_stop\ndata: {"type":"message_stop"}\n\n`,
  ].join("");

  test("frames split anywhere, or many to a chunk, give the same events", async () => {
    assert.deepEqual(await decode([whole]), { text: expected });
    assert.deepEqual(await decode([...whole].map((b) => Buffer.from([b]))), { text: expected });
  });

  test("a corrupt prelude, an impossible length or an answer cut inside a frame errors the stream; nothing of that frame passes", async () => {
    const prelude = Buffer.from(whole);
    prelude[frames[0].length + 5] ^= 0x01; // the second frame's headers length: its prelude CRC no longer matches
    const first = expected.slice(0, expected.indexOf("event: content_block_delta"));
    const a = await decode([prelude]);
    assert.equal(a.text, first);
    assert.match(String(a.error?.message), /prelude checksum/);
    const huge = Buffer.from(whole);
    huge.writeUInt32BE(0x7fffffff, frames[0].length);
    const b = await decode([huge]);
    assert.equal(b.text, first);
    assert.match(String(b.error?.message), /frame of 2147483647 bytes/);
    const c = await decode([whole.subarray(0, whole.length - 3)]);
    assert.match(String(c.error?.message), /ended inside an event-stream frame/);
    assert.ok(!c.text.includes("message_stop"));
  });

  test("exception frames become Anthropic error events", async () => {
    const { text } = await decode([exceptionFrame("modelStreamErrorException", "The model stopped."), exceptionFrame("internalServerException", "oops")]);
    assert.equal(text, [
      `event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The model stopped."}}\n\n`,
      `event: error\ndata: {"type":"error","error":{"type":"api_error","message":"oops"}}\n\n`,
    ].join(""));
  });
});

describe("kind bedrock errors", () => {
  const named = (status: number, type: string, message = "m") =>
    JSON.parse(anthropicErrorBody(status, { "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` }, Buffer.from(JSON.stringify({ message })))).error;

  test("the error type header picks the Anthropic type; credentials refused are key faults, the rest are not", () => {
    const cases: [number, string, string, boolean][] = [
      [403, "AccessDeniedException", "permission_error", true],
      [403, "UnrecognizedClientException", "authentication_error", true],
      [403, "ExpiredTokenException", "authentication_error", true],
      [400, "ExpiredTokenException", "authentication_error", true],
      [403, "InvalidSignatureException", "authentication_error", true],
      [429, "ThrottlingException", "rate_limit_error", false],
      [400, "ServiceQuotaExceededException", "rate_limit_error", false],
      [400, "ValidationException", "invalid_request_error", false],
      [429, "ModelNotReadyException", "overloaded_error", false],
      [500, "InternalServerException", "api_error", false],
      [404, "ResourceNotFoundException", "not_found_error", false],
    ];
    for (const [status, type, anthropicType, fault] of cases) {
      const error = named(status, type);
      assert.deepEqual(error, { type: anthropicType, message: "m" }, type);
      const body = JSON.stringify({ type: "error", error });
      assert.equal(judgeKeyFault(bedrockKeyFaults, status, body)?.fault, fault ? "auth" : undefined, `${status} ${type}`);
    }
  });

  test("a message that names a fault decides nothing; a body's __type names the error when the header does not", () => {
    assert.equal(named(400, "ValidationException", "AccessDeniedException: the security token is expired").type, "invalid_request_error");
    const typed = JSON.parse(anthropicErrorBody(403, {}, Buffer.from(JSON.stringify({ __type: "com.amazon.coral.service#UnrecognizedClientException", message: "bad" }))));
    assert.deepEqual(typed, { type: "error", error: { type: "authentication_error", message: "bad" } });
    const html = JSON.parse(anthropicErrorBody(502, {}, Buffer.from("<html>bad gateway</html>")));
    assert.deepEqual(html, { type: "error", error: { type: "api_error", message: "Bedrock answered 502." } });
  });
});
