// Cost to the client: a billed non-stream answer carries X-Gateway-Cost, and a whole stream
// carries the same value beside the usage in its final usage event (usage.gateway_cost;
// usageMetadata.gatewayCost on generate-content), equal to the usage-log entry's cost to the
// nano, on every inbound protocol, passed through and converted. Unbilled answers show none;
// a group with show_cost: false shows neither, and a cost an upstream gateway put in its
// stream never reaches the client. Raw HTTP here; the SDKs in cost-to-client-sdk.test.ts.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { formatNano } from "../../src/billing/cost.js";
import { parseEvent, SseSplitter } from "../../src/protocols/sse.js";
import { startFakeResponses, type FakeResponses } from "../helpers/fake-responses.js";
import { M, startWorld, type World, type WorldOptions } from "../helpers/protocol-world.js";
import {
  CHANNEL_KEY, TOKEN, channel, completionAnswer, rawRequest, startRawUpstream, streamAnswer, type Obj, type RawResponse, type RawUpstream,
} from "./support.js";

type Inbound = "chat" | "responses" | "messages" | "generate";

/** A model the responses protocol reaches through the anthropic channel (converted). */
const RESPONSES_CONVERTED = "cost-rc-claude";
/** A free model on the openai channel. */
const FREE = "cost-free";
/** A model whose upstream is itself a gateway: its stream's usage already has a gateway_cost. */
const CHAINED = "cost-chained";
const UPSTREAM_COST = "123.456";
/** A speech model, billed per 1k characters of the request. */
const TTS = "cost-tts";

/** Each inbound protocol's routes: one model passed through, one converted. */
const routes: readonly { inbound: Inbound; passed: string; converted: string }[] = [
  { inbound: "chat", passed: M.openai, converted: M.anthropic },
  { inbound: "responses", passed: M.responses, converted: RESPONSES_CONVERTED },
  { inbound: "messages", passed: M.anthropic, converted: M.openai },
  { inbound: "generate", passed: M.gemini, converted: M.openai },
];

/** One request in `inbound`'s own shape, with the gateway token where its clients put it. */
function ask(w: World, inbound: Inbound, model: string, stream: boolean): Promise<RawResponse> {
  const json = { "content-type": "application/json" };
  const bearer = { ...json, authorization: `Bearer ${TOKEN}` };
  const post = (path: string, headers: Record<string, string>, body: Obj) =>
    rawRequest(`${w.gw.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  const messages = [{ role: "user", content: "hi" }];
  switch (inbound) {
    case "chat":
      return post("/v1/chat/completions", bearer, { model, messages, ...(stream ? { stream, stream_options: { include_usage: true } } : {}) });
    case "responses":
      return post("/v1/responses", bearer, { model, input: "hi", ...(stream ? { stream } : {}) });
    case "messages":
      return post("/v1/messages", { ...json, "x-api-key": TOKEN, "anthropic-version": "2023-06-01" }, { model, max_tokens: 100, messages, ...(stream ? { stream } : {}) });
    case "generate":
      return post(`/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse&" : "generateContent?"}key=${TOKEN}`, json,
        { contents: [{ role: "user", parts: [{ text: "hi" }] }] });
  }
}

/** The JSON data of every event of an SSE body ([DONE] and comments left out). */
function events(text: string): Obj[] {
  const splitter = new SseSplitter();
  return [...splitter.push(Buffer.from(text)), splitter.flush()].flatMap((raw) => {
    const data = parseEvent(raw)?.data;
    return data === undefined || data === "[DONE]" ? [] : [JSON.parse(data) as Obj];
  });
}

/** Where a protocol's stream event keeps its usage (undefined for an event without). */
function usageOf(inbound: Inbound, event: Obj): Obj | undefined {
  const at = inbound === "responses" ? (event.response as Obj | undefined)?.usage
    : inbound === "generate" ? event.usageMetadata
    : inbound === "messages" ? (event.type === "message_delta" ? event.usage : undefined)
    : event.usage;
  return at && typeof at === "object" ? (at as Obj) : undefined;
}

/** The stream's cost fields, with the index of the event each is in. */
function costFields(inbound: Inbound, text: string): { at: number; cost: unknown; last: number } {
  const all = events(text);
  const field = inbound === "generate" ? "gatewayCost" : "gateway_cost";
  const found = all.flatMap((e, i) => {
    const usage = usageOf(inbound, e);
    return usage && field in usage ? [{ at: i, cost: usage[field] }] : [];
  });
  assert.ok(found.length <= 1, `one event carries the cost, not ${found.length}`);
  const lastUsage = all.map((e) => usageOf(inbound, e) !== undefined).lastIndexOf(true);
  return { at: found[0]?.at ?? -1, cost: found[0]?.cost, last: lastUsage };
}

/** Speech audio the raw upstream sends in three pieces, the last once `audioGate` opens. */
const AUDIO = [Buffer.alloc(300, 1), Buffer.alloc(300, 2), Buffer.alloc(300, 3)];
let audioGate: Promise<void> = Promise.resolve();

/** A hand-written upstream: chat-completions as a gateway would answer (its stream's usage
 * has a cost), and speech audio relayed in pieces (its head leaves before its end). */
function chainedUpstream(): Promise<RawUpstream> {
  const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, gateway_cost: UPSTREAM_COST };
  return startRawUpstream((body, res) => {
    if (body.voice !== undefined) {
      res.writeHead(200, { "content-type": "audio/mpeg" });
      res.write(AUDIO[0]);
      // Apart from the first: the gateway holds one piece back and sends the one before.
      setImmediate(() => res.write(AUDIO[1]));
      void audioGate.then(() => res.end(AUDIO[2]));
    } else if (body.stream) streamAnswer(res, body.model, ["a", "b"], usage);
    else completionAnswer(res, body.model, "ab", usage);
  });
}

/** Asks for speech; resolves with the head once the first audio arrived (the answer not
 * ended yet: the upstream waits for `audioGate`), then with the whole body. */
function speech(w: World, model: string): { head: Promise<http.IncomingHttpHeaders>; body: Promise<Buffer> } {
  let head!: (h: http.IncomingHttpHeaders) => void;
  const headP = new Promise<http.IncomingHttpHeaders>((r) => { head = r; });
  const body = new Promise<Buffer>((resolve, reject) => {
    const req = http.request(`${w.gw.url}/v1/audio/speech`, {
      method: "POST", agent: false, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => { if (chunks.push(c) === 1) head(res.headers); });
      res.on("end", () => resolve(Buffer.concat(chunks)));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(JSON.stringify({ model, input: "Hello, world! ".repeat(10), voice: "alloy" }));
  });
  return { head: headP, body };
}

function worldOptions(fake: FakeResponses, chained: RawUpstream, groups?: Obj): WorldOptions {
  return {
    groups,
    extraModels: {
      [RESPONSES_CONVERTED]: { endpoint: ["chat", "responses"], price: { input: 2, output: 8 } },
      [FREE]: { endpoint: "chat", price: { input: 0, output: 0 } },
      [CHAINED]: { endpoint: "chat", price: { input: 1, output: 1 } },
      [TTS]: { endpoint: "speech", price: { per_1k_chars: 0.015 } },
    },
    extraChannels: (u) => [
      channel("resp", fake.url, { protocol: "openai", models: [M.responses] }),
      channel("an-rc", u.anthropic, { protocol: "anthropic", models: [RESPONSES_CONVERTED] }),
      channel("oa-free", u.openai, { protocol: "openai", models: [FREE] }),
      channel("chained", chained.url, { protocol: "openai", models: [CHAINED, TTS] }),
    ],
  };
}

/** The suite's world (its fakes started before, everything closed after, reset per test),
 * with `groups` as given; read `.w` inside tests. */
function suiteWorld(groups?: Parameters<typeof worldOptions>[2]): { w: World } {
  const holder = {} as { w: World };
  let fake: FakeResponses | undefined;
  let chained: RawUpstream | undefined;
  before(async () => {
    fake = await startFakeResponses({ keys: [CHANNEL_KEY] });
    chained = await chainedUpstream();
    holder.w = await startWorld(worldOptions(fake, chained, groups));
  });
  after(async () => {
    await holder.w?.close();
    await fake?.close();
    await chained?.close();
  });
  beforeEach(() => holder.w.reset());
  return holder;
}

describe("cost to the client", () => {
  const world = suiteWorld();

  for (const r of routes) {
    for (const [how, model] of [["passed through", r.passed], ["converted", r.converted]] as const) {
      describe(`${r.inbound} in, ${how}`, () => {
        test("non-stream: X-Gateway-Cost is the usage-log entry's cost, exactly; the body is untouched", async () => {
          const res = await ask(world.w, r.inbound, model, false);
          assert.equal(res.status, 200, res.text);
          const entry = await world.w.entry(String(res.headers["x-gateway-request-id"]));
          assert.ok(entry.costNano > 0n, "a priced answer");
          assert.equal(res.headers["x-gateway-cost"], formatNano(entry.costNano));
          assert.match(String(res.headers["x-gateway-cost"]), /^\d+\.\d+$/, "an exact decimal, no exponent");
          assert.ok(!/gateway_?cost/i.test(res.text), "no cost field in a non-stream body");
        });

        test("stream: the final usage event carries the same cost, and no other event does", async () => {
          const res = await ask(world.w, r.inbound, model, true);
          assert.equal(res.status, 200, res.text);
          assert.equal(res.headers["x-gateway-cost"], undefined, "a stream's head goes before its cost is known");
          const entry = await world.w.entry(String(res.headers["x-gateway-request-id"]));
          assert.ok(entry.costNano > 0n, "a priced answer");
          const found = costFields(r.inbound, res.text);
          assert.equal(found.cost, formatNano(entry.costNano));
          assert.equal(found.at, found.last, "beside the final usage");
        });
      });
    }
  }

  test("a free model's answer shows a cost of 0", async () => {
    const res = await ask(world.w, "chat", FREE, false);
    assert.equal(res.status, 200);
    assert.equal(res.headers["x-gateway-cost"], "0");
    const streamed = await ask(world.w, "chat", FREE, true);
    assert.equal(costFields("chat", streamed.text).cost, "0");
  });

  test("unbilled answers show no cost: an upstream refusal, an unknown model, a bad token", async () => {
    world.w.scripts.openai = () => ({ kind: "error", status: 400, message: "bad request" });
    const refused = await ask(world.w, "chat", M.openai, false);
    assert.equal(refused.status, 400);
    assert.equal(refused.headers["x-gateway-cost"], undefined);
    const refusedStream = await ask(world.w, "chat", M.openai, true);
    assert.equal(refusedStream.status, 400);
    assert.ok(!refusedStream.text.includes("gateway_cost"));
    const unknown = await ask(world.w, "messages", "no-such-model", false);
    assert.ok(unknown.status >= 400 && unknown.status < 500, String(unknown.status));
    assert.equal(unknown.headers["x-gateway-cost"], undefined);
    const badToken = await rawRequest(`${world.w.gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: "Bearer sk-wrong-000000000000", "content-type": "application/json" },
      body: JSON.stringify({ model: M.openai, messages: [{ role: "user", content: "hi" }] }),
    });
    assert.equal(badToken.status, 401);
    assert.equal(badToken.headers["x-gateway-cost"], undefined);
  });

  test("a stream cut short shows no cost (it ends with an error event, billed by estimate)", async () => {
    world.w.scripts.anthropic = () => ({ kind: "destroy" });
    const res = await ask(world.w, "messages", M.anthropic, true);
    assert.ok(!res.text.includes("gateway_cost"), res.text);
  });

  test("speech relayed as it arrives: X-Gateway-Cost is quoted with the head, and equals the charge", async () => {
    let open!: () => void;
    audioGate = new Promise<void>((r) => { open = r; });
    const asked = speech(world.w, TTS);
    const head = await asked.head;
    open();
    assert.deepEqual(await asked.body, Buffer.concat(AUDIO));
    const entry = await world.w.entry(String(head["x-gateway-request-id"]));
    assert.ok(entry.costNano > 0n);
    assert.equal(head["x-gateway-cost"], formatNano(entry.costNano));
  });

  test("an upstream gateway's cost in its stream is replaced by ours", async () => {
    const res = await ask(world.w, "chat", CHAINED, true);
    assert.equal(res.status, 200, res.text);
    const entry = await world.w.entry(String(res.headers["x-gateway-request-id"]));
    assert.equal(costFields("chat", res.text).cost, formatNano(entry.costNano));
    assert.ok(!res.text.includes(UPSTREAM_COST));
  });
});

describe("a group with show_cost: false", () => {
  const world = suiteWorld({ default: { multiplier: 0.7, show_cost: false }, video: { multiplier: 1 } });

  for (const r of routes) {
    for (const [how, model] of [["passed through", r.passed], ["converted", r.converted]] as const) {
      test(`${r.inbound} in, ${how}: no header, no field; still billed`, async () => {
        for (const stream of [false, true]) {
          const res = await ask(world.w, r.inbound, model, stream);
          assert.equal(res.status, 200, res.text);
          assert.equal(res.headers["x-gateway-cost"], undefined);
          assert.ok(!/gateway_?cost/i.test(res.text), `no cost field (${stream ? "stream" : "non-stream"})`);
          const entry = await world.w.entry(String(res.headers["x-gateway-request-id"]));
          assert.ok(entry.costNano > 0n, "the answer is billed all the same");
        }
      });
    }
  }

  test("speech relayed as it arrives: no X-Gateway-Cost", async () => {
    let open!: () => void;
    audioGate = new Promise<void>((r) => { open = r; });
    const asked = speech(world.w, TTS);
    const head = await asked.head;
    open();
    await asked.body;
    assert.equal(head["x-gateway-cost"], undefined);
  });

  test("an upstream gateway's cost in its stream is taken out", async () => {
    const res = await ask(world.w, "chat", CHAINED, true);
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes("gateway_cost"), res.text);
    assert.ok(events(res.text).some((e) => usageOf("chat", e)?.prompt_tokens === 12), "the usage itself stays");
  });
});
