// Hardening item 4: a broken upstream answer is an error, never a charge. A 200 whose body
// does not parse (JSON cut in half, an HTML page), is cut short (socket destroyed under a
// longer Content-Length) or stalls, and an HTML error page, reach the client as a 502
// `upstream_error` in its protocol's shape with a cost-0 usage entry; with a healthy channel
// behind, the request fails over to it and is billed once. Every client protocol, pass-through
// and converted; raw HTTP here, the official SDKs in upstream-faults-sdk.test.ts.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { jsonFaults, REPORTED, type Fault } from "../helpers/fake-faulty.js";
import { answerText, errorCode, errorMessage } from "../helpers/client-wire.js";
import {
  CHANNEL, IDLE_MS, PAIRS, PASSTHROUGH, forgetHealth, modelFor, nanoFor, pairName, startFaultWorld, upstreamSide,
  type Call, type Client, type FaultWorld,
} from "../helpers/fault-world.js";
import { rawRequest } from "./support.js";

/** Faults whose upstream goes silent: the gateway gives up after the idle timeout. */
const stalls = new Set<Fault>(["stall-body"]);

/** The whole answer every healthy upstream gives, whatever the protocol. */
const WHOLE_TEXT = "Hello world!";

function assertAnswered(c: Call): void {
  assert.ok(!c.timedOut, `the client waited past its deadline (${c.tookMs} ms)`);
  assert.ok(c.complete, "the answer must be whole, not cut off");
  assert.ok(c.requestId, "every answer carries X-Gateway-Request-Id");
}

/** The 502 in the client protocol's own shape, with our catalogue code. */
function assertUpstreamError(client: Client, c: Call): void {
  assert.equal(c.status, 502, c.text);
  assert.match(String(c.headers["content-type"]), /^application\/json/);
  assert.equal(errorCode(client, c.json), "upstream_error", c.text);
  if (client === "messages") assert.equal(c.json.error.type, "api_error", c.text);
  if (client === "generate") {
    assert.equal(c.json.error.code, 502, c.text);
    assert.equal(c.json.error.status, "INTERNAL", c.text);
  }
  // The upstream's page is not echoed (it could name the operator's account).
  assert.doesNotMatch(errorMessage(c.json), /<html|nginx|Bad Gateway/i);
}

describe("a broken whole answer is a 502 in the client's protocol, never a charge", { concurrency: true }, () => {
  let w: FaultWorld;
  before(async () => { w = await startFaultWorld(); });
  after(async () => { await w?.close(); });

  for (const pair of PAIRS) {
    const { client, channel } = pair;
    describe(pairName(pair), { concurrency: true }, () => {
      test("control: a whole answer is relayed and billed with its reported usage", async () => {
        const c = await w.call({ client, model: modelFor(client, channel, false), fault: "ok", stream: false });
        assertAnswered(c);
        assert.equal(c.status, 200, c.text);
        assert.equal(answerText(client, c.json), WHOLE_TEXT);
        const e = await w.entry(c.requestId);
        assert.equal(e.estimated, false);
        assert.equal(e.costNano, nanoFor(REPORTED.input, REPORTED.output));
        assert.equal(e.channel, CHANNEL.solo(channel));
      });

      for (const fault of jsonFaults) {
        test(`${fault}: 502 upstream_error, usage entry costs 0, upstream connection ended`, async () => {
          const c = await w.call({ client, model: modelFor(client, channel, false), fault, stream: false });
          assertAnswered(c);
          assertUpstreamError(client, c);
          if (stalls.has(fault)) {
            // Given up after the idle timeout, not before, and not much after.
            assert.ok(c.tookMs >= IDLE_MS - 100 && c.tookMs < IDLE_MS + 3000, `took ${c.tookMs} ms`);
          } else {
            assert.ok(c.tookMs < IDLE_MS, `a broken answer must not wait for the idle timeout (took ${c.tookMs} ms)`);
          }
          const e = await w.entry(c.requestId);
          assert.equal(e.costNano, 0n);
          assert.equal(e.estimated, false);
          assert.equal(e.status, 502);
          assert.equal(e.error, "upstream_error");
          assert.equal(e.channel, CHANNEL.solo(channel));
          const up = await upstreamSide(w.faulty, c, IDLE_MS + 3000);
          assert.equal(up.wire, wireOf(client, channel));
        });
      }
    });
  }
});

// Sequential: channel health is process-wide, and each request must find the faulty channel first.
describe("a broken whole answer fails over to the next channel, billed once", () => {
  let w: FaultWorld;
  before(async () => { w = await startFaultWorld(); });
  after(async () => { await w?.close(); });

  for (const pair of PAIRS) {
    const { client, channel } = pair;
    for (const fault of jsonFaults) {
      test(`${pairName(pair)}: ${fault} → the healthy channel answers`, async () => {
        // Channel health is shared state: start each request with the faulty channel first.
        forgetHealth();
        const c = await w.call({ client, model: modelFor(client, channel, true), fault, stream: false });
        assertAnswered(c);
        assert.equal(c.status, 200, c.text);
        assert.equal(answerText(client, c.json), WHOLE_TEXT);
        assert.ok(w.faulty.find(c.tag), "the faulty channel was tried first");
        assert.ok(w.healthy.find(c.tag), "then the healthy one");
        const entries = w.gw.store.logs({ requestId: c.requestId });
        const e = await w.entry(c.requestId);
        assert.equal(entries.length, 1, "one usage entry per request");
        assert.equal(e.channel, CHANNEL.fallback(channel));
        assert.equal(e.status, 200);
        assert.equal(e.estimated, false);
        assert.equal(e.costNano, nanoFor(REPORTED.input, REPORTED.output), "billed once, for the answer served");
      });
    }
  }

  test("a broken answer counts as a channel failure (gateway_upstream_retries_total, reason broken_answer)", async () => {
    const series = `gateway_upstream_retries_total{channel="${CHANNEL.backedFirst("anthropic")}",reason="broken_answer"}`;
    const count = async () => {
      const m = (await rawRequest(`${w.gw.url}/metrics`)).text.split("\n").find((l) => l.startsWith(series + " "));
      return m ? Number(m.split(" ")[1]) : 0;
    };
    const before = await count();
    forgetHealth();
    const c = await w.call({ client: "chat", model: modelFor("chat", "anthropic", true), fault: "truncated-json", stream: false });
    assert.equal(c.status, 200, c.text);
    assert.equal(await count(), before + 1);
  });
});

/** The upstream wire a (client, channel) pair speaks to the channel. */
function wireOf(client: Client, channel: string): string {
  if (client === "responses") return "responses";
  if (PASSTHROUGH[client] === channel) return client;
  return channel === "openai" ? "chat" : channel === "anthropic" ? "messages" : "generate";
}
