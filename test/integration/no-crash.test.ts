// No request can kill the gateway: a spawned gateway (so a crash is seen as one) in front of
// a tolerant fake upstream gets random and mutated bodies, headers, multipart forms and
// framing on every route. Every answer is a whole 2xx/4xx with a request id; clients that
// vanish mid-request and upstreams that misbehave end their own request only; nothing hangs.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { startFakeRealtime, type FakeRealtime } from "../helpers/fake-realtime.js";
import { misbehaviours, startFakeTolerant, type FakeTolerant } from "../helpers/fake-tolerant.js";
import { fuzzCase, fuzzRoutes, type FuzzCase, type RouteModels } from "../helpers/fuzz-requests.js";
import { eventually } from "../helpers/gateway.js";
import { rawSend, type RawOutcome } from "../helpers/raw-http.js";
import { alive, exited, serveGateway, type Child } from "../helpers/spawn-gateway.js";
import { CHANNEL_KEY, TOKEN, channel, config, rawRequest, token } from "./support.js";

const SEED = 20261124;

const good: RouteModels = {
  chat: ["gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.5-flash"], messages: ["claude-sonnet-4-5", "gpt-4o-mini"],
  generate: ["gemini-2.5-flash", "gpt-4o-mini"], responses: ["gpt-5-pro"], embeddings: ["text-embedding-3-small"],
  images: ["dall-e-3"], edits: ["dall-e-2"], transcriptions: ["whisper-1"], speech: ["tts-1"], rerank: ["rerank-v1"],
  moderations: ["omni-moderation-latest"], videos: ["sora-2"], realtime: ["gpt-realtime"], gets: true,
};

/** Models served by the fake's misbehaving channels (and a realtime upstream that never answers). */
const bad: RouteModels = {
  chat: ["bad-gpt", "bad-claude", "bad-gemini"], messages: ["bad-claude", "bad-gpt"], generate: ["bad-gemini", "bad-gpt"],
  responses: ["bad-resp"], embeddings: ["bad-embed"], images: [], edits: [], transcriptions: ["bad-whisper"], speech: ["bad-speech"],
  rerank: [], moderations: [], videos: [], realtime: ["gpt-realtime-slow"], gets: false,
};

const chatPrice = { input: 0.15, output: 0.6 };

/** Runs `work` over `items`, `width` at a time. */
async function inPool<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

const tail = (text: string) => text.split("\n").slice(-15).join("\n");
const show = (out: RawOutcome) => JSON.stringify(out.kind === "answer" ? { ...out, body: out.body.toString("utf8").slice(0, 300) } : out);

describe("no request can kill the process", () => {
  let dir: string;
  let fake: FakeTolerant;
  let realtime: FakeRealtime;
  /** A realtime upstream that accepts connections and never answers. */
  let silent: net.Server;
  const silentSockets = new Set<net.Socket>();
  let gateway: { child: Child; port: number; base: string };
  /** Requests to misbehaving upstreams whose connection closed with no answer at all. */
  const droppedUnanswered: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-fuzz-"));
    fake = await startFakeTolerant();
    realtime = await startFakeRealtime({ keys: [CHANNEL_KEY] });
    silent = net.createServer((s) => { silentSockets.add(s); s.on("close", () => silentSockets.delete(s)); }); // never answers
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const silentUrl = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    const other = (name: string, protocol: string, url: string, models: string[]) =>
      ({ name, protocol, base_url: url, keys: [CHANNEL_KEY], groups: ["default"], models });
    const yaml = (port: number) => config({
      server: {
        listen: `127.0.0.1:${port}`, upstream_timeout: "1s", drain_timeout: "1s", header_timeout: "1s", body_timeout: "1s",
        stream_idle_timeout: "1s",
        max_body: "64KiB",
      },
      users: { alice: { credit: 1_000_000, groups: ["default"] } },
      tokens: [token("alice-main", TOKEN)],
      channels: [
        channel("oa", fake.url, { models: ["gpt-4o-mini", "gpt-5-pro", "text-embedding-3-small", "dall-e-3", "dall-e-2", "whisper-1",
          "tts-1", "rerank-v1", "omni-moderation-latest", "sora-2"] }),
        other("an", "anthropic", fake.url, ["claude-sonnet-4-5"]),
        other("ge", "gemini", fake.url, ["gemini-2.5-flash"]),
        channel("rt", realtime.url, { models: ["gpt-realtime"] }),
        channel("rt-silent", silentUrl, { models: ["gpt-realtime-slow"] }),
        channel("bad-oa", `${fake.url}/bad`, { models: ["bad-gpt", "bad-resp", "bad-embed", "bad-whisper", "bad-speech"] }),
        other("bad-an", "anthropic", `${fake.url}/bad`, ["bad-claude"]),
        other("bad-ge", "gemini", `${fake.url}/bad`, ["bad-gemini"]),
      ],
      models: {
        "gpt-4o-mini": { endpoint: "chat", price: chatPrice },
        "claude-sonnet-4-5": { price: chatPrice },
        "gemini-2.5-flash": { price: chatPrice },
        "gpt-5-pro": { endpoint: "responses", price: chatPrice },
        "text-embedding-3-small": { endpoint: "embeddings", price: { input: 0.02 } },
        "dall-e-3": { endpoint: "image", price: { per_image: 0.04 } },
        "dall-e-2": { endpoint: "image", price: { per_image: 0.02 } },
        "whisper-1": { endpoint: "transcription", price: { per_second: 0.0001 } },
        "tts-1": { endpoint: "speech", price: { per_1k_chars: 0.015 } },
        "rerank-v1": { endpoint: "rerank", price: { input: 0.05 } },
        "omni-moderation-latest": { endpoint: "moderation", price: { input: 0 } },
        "sora-2": { endpoint: "video", request_schema: "video-family-c", price: { per_second: 0.1 } },
        "gpt-realtime": { endpoint: "realtime", price: { input: 4, output: 16 } },
        "gpt-realtime-slow": { endpoint: "realtime", price: { input: 4, output: 16 } },
        "bad-gpt": { endpoint: "chat", price: chatPrice },
        "bad-claude": { price: chatPrice },
        "bad-gemini": { price: chatPrice },
        "bad-resp": { endpoint: "responses", price: chatPrice },
        "bad-embed": { endpoint: "embeddings", price: { input: 0.02 } },
        "bad-whisper": { endpoint: "transcription", price: { per_second: 0.0001 } },
        "bad-speech": { endpoint: "speech", price: { per_1k_chars: 0.015 } },
      },
    });
    gateway = await serveGateway({ file: join(dir, "gateway.yaml"), cwd: dir, yaml, logLevel: "error", readyMs: 20_000 });
  });

  after(async () => {
    if (gateway && alive(gateway.child)) gateway.child.proc.kill("SIGKILL");
    await fake?.close();
    await realtime?.close();
    for (const s of silentSockets) s.destroy();
    await new Promise((r) => silent?.close(r));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const mustLive = (what: string) => {
    if (!alive(gateway.child)) assert.fail(`the gateway process died (${what}); its last log lines:\n${tail(gateway.child.stderr)}`);
  };

  /** A connection dropped with no answer: gives the child a moment to be seen exiting, if it died. */
  const exitSeen = () => eventually(() => !alive(gateway.child), 1000, "an exit").catch(() => {});

  /** Waits until no request is in flight in the gateway: none was left hanging. */
  const nothingInFlight = () => eventually(async () => {
    const metrics = await rawRequest(`${gateway.base}/metrics`);
    return /^gateway_inflight_requests 0$/m.test(metrics.text);
  }, 5000, "every request to finish (gateway_inflight_requests 0)");

  test("random and mutated requests on every route each get a whole 2xx/4xx answer with a request id", async (t) => {
    const routes = fuzzRoutes(good);
    const seen = new Map<string, number>();
    const count = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1);
    await fc.assert(fc.asyncProperty(fuzzCase(routes, { token: TOKEN }), async (c: FuzzCase) => {
      const out = await rawSend(gateway.port, c.send);
      if (out.kind !== "answer") await exitSeen();
      mustLive(c.label);
      if (out.kind !== "answer") assert.fail(`no answer to ${c.label}: ${show(out)}`);
      assert.ok(out.status === 101 || (out.status >= 200 && out.status < 500), `${c.label}: ${show(out)}`);
      assert.ok(out.headers["x-gateway-request-id"], `no request id: ${c.label}: ${show(out)}`);
      assert.ok(out.complete, `answer cut short: ${c.label}: ${show(out)}`);
      count(String(out.status));
      if (/multipart body is malformed/.test(out.body.toString("utf8"))) count("malformed multipart");
      if (out.status === 200 && /^(image-edits|transcriptions|videos-upload) /.test(c.label)) count("multipart served");
    }), { numRuns: 600, seed: SEED, endOnFailure: true, includeErrorInReport: true });
    t.diagnostic(`answers: ${JSON.stringify(Object.fromEntries([...seen].sort()))}`);
    // The run reached the parsers and the upstream, not only the gateway's early refusals.
    for (const key of ["200", "400", "401", "malformed multipart", "multipart served", "101"]) {
      assert.ok((seen.get(key) ?? 0) > 0, `no "${key}" answer in the run: ${JSON.stringify(Object.fromEntries(seen))}`);
    }
    await nothingInFlight();
    mustLive("after the run");
  });

  test("clients that leave mid-request (reset or half-close, at any byte) end only their own request", async () => {
    const routes = fuzzRoutes({ ...good, realtime: ["gpt-realtime", "gpt-realtime-slow"] });
    const cases = fc.sample(fc.record({
      // Whole requests left while the gateway works on them, or requests cut at any byte.
      c: fuzzCase(routes, { token: TOKEN }), cut: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
      pauseMs: fc.nat({ max: 40 }), then: fc.constantFrom("reset" as const, "end" as const),
    }), { numRuns: 300, seed: SEED });
    await inPool(cases, 16, async ({ c, cut, pauseMs, then }) => {
      const bytes = Buffer.concat(c.send.pieces.map((p) => Buffer.from(p)));
      await rawSend(gateway.port, { pieces: [bytes.subarray(0, Math.floor(bytes.length * cut))], pauseMs, then, timeoutMs: 5000 });
      mustLive(`client left: ${then} after ${pauseMs} ms at ${Math.round(cut * 100)}% of ${c.label}`);
    });
    await nothingInFlight();
    mustLive("after the run");
  });

  test("upstreams that misbehave (errors, garbage, cut heads and bodies, resets, silence) fail their own request only", async () => {
    const routes = fuzzRoutes(bad).filter((r) => r.name !== "realtime");
    const cases = fc.sample(fuzzCase(routes, {
      token: TOKEN, always: fc.constantFrom(...misbehaviours).map((m): [string, string][] => [["user-agent", `fuzz-mode/${m}`]]),
    }), { numRuns: 300, seed: SEED });
    let cut = 0;
    const problems: string[] = [];
    await inPool(cases, 16, async (c) => {
      const out = await rawSend(gateway.port, c.send);
      mustLive(c.label);
      if (out.kind === "dropped") return void droppedUnanswered.push(c.label);
      if (out.kind !== "answer") return void problems.push(`no answer (${out.kind}) to ${c.label}`);
      if (!out.headers["x-gateway-request-id"]) problems.push(`no request id: ${c.label}: ${show(out)}`);
      // An answer already under way when the upstream broke can only be cut; before that, an error.
      if (!out.complete) {
        if (out.status < 200 || out.status >= 300) problems.push(`cut ${out.status}: ${c.label}`);
        cut++;
      }
      if (/internal_error/.test(out.body.toString("utf8"))) problems.push(`internal error: ${c.label}: ${show(out)}`);
    });
    assert.ok(fake.paths.some((p) => p.startsWith("/bad/")), "the misbehaving channels were reached");
    assert.deepEqual(problems, [], `${problems.length} of ${cases.length} requests:\n${problems.join("\n")}`);
    await nothingInFlight();
    mustLive(`after the run (${cut} answers cut after their head)`);
  });

  test("an upstream that breaks before the client got a byte gives an error answer, not a dropped connection", () => {
    assert.deepEqual(droppedUnanswered, [], `${droppedUnanswered.length} connections dropped with no answer:\n${droppedUnanswered.join("\n")}`);
  });

  test("afterwards it serves, and drains on SIGTERM with nothing left in flight", async () => {
    const r = await rawRequest(`${gateway.base}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "still there?" }] }),
    });
    assert.equal(r.status, 200, r.text);
    assert.doesNotMatch(gateway.child.stderr, /unhandled error|request failed outside the chain/, tail(gateway.child.stderr));
    gateway.child.proc.kill("SIGTERM");
    const { code } = await exited(gateway.child, 10_000);
    assert.equal(code, 0, tail(gateway.child.stderr));
    assert.doesNotMatch(gateway.child.stderr, /drain deadline passed/, "a request was still open at shutdown");
  });
});
