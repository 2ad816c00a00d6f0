// Hardening item 5: streams always end properly. An upstream stream that goes silent past
// stream_idle_timeout (1 s here), ends without its terminal event, carries an event that does
// not decode, or loses its connection, ends the client's stream with exactly one error event in
// the client's protocol and no terminal event; the upstream connection is closed; what was
// delivered is billed as a marked estimate (exactly the documented one), far below the
// pre-deduction. Every client protocol, pass-through and converted, with a whole stream as
// control; raw HTTP here, the official SDKs in upstream-faults-sdk.test.ts.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { REPORTED, type FaultExchange } from "../helpers/fake-faulty.js";
import {
  dataOf, errorCode, errorMessage, isErrorEvent, isTerminalEvent, sseEvents, streamedText, type SseEvent,
} from "../helpers/client-wire.js";
import {
  CHANNEL, IDLE_MS, PAIRS, PASSTHROUGH, estimate, forgetHealth, modelFor, nanoFor, pairName, startFaultWorld,
  upstreamSide, worstCase, type Call, type Protocol, type Client, type FaultWorld,
} from "../helpers/fault-world.js";

/** The stream faults of the matrix (html-200 has its own tests below). */
const faults = ["idle", "idle-at-start", "unterminated", "unterminated-late", "undecodable", "undecodable-braced", "cut"] as const;
type StreamFault = (typeof faults)[number];

/** What a client sees and is billed for a fault on a pair. */
interface Expected {
  /** Generated text delivered before the error event. */
  readonly text: string;
  /** Characters the estimate counts as delivered. */
  readonly outputChars: number;
  /** Catalogue code of the error event. */
  readonly code: string;
  /** How the upstream's connection ends. */
  readonly upstreamEnd: FaultExchange["end"];
}

function expected(client: Client, channel: Protocol, fault: StreamFault): Expected {
  // The faulty stream's text deltas: "Hello", " world", then "!" before its terminal event
  // (a generate-content stream carries its last text in the terminal chunk itself).
  const text = fault === "idle-at-start" ? ""
    : fault === "unterminated-late" && channel !== "gemini" ? "Hello world!" : "Hello world";
  // What the client was delivered is what is estimated (text deltas, not repeats of them).
  const outputChars = text.length;
  const idle = fault === "idle" || fault === "idle-at-start";
  return {
    text, outputChars,
    // Silence is the upstream timing out; every other fault is the upstream failing.
    code: idle ? "upstream_timeout" : "upstream_error",
    upstreamEnd: idle || fault === "undecodable" ? "closed-by-gateway" : fault === "cut" ? "cut-by-fake" : "finished",
  };
}

/** Usage a faulty upstream of `channel` reported before `fault` cut its stream (fake-faulty.ts). */
function reportedBefore(client: Client, channel: Protocol, fault: StreamFault): { input: number; output: number } | undefined {
  if (fault === "idle-at-start") return undefined;
  if (channel === "anthropic") return { input: REPORTED.input, output: fault === "unterminated-late" ? REPORTED.output : 1 };
  if (channel === "gemini") return { input: REPORTED.input, output: 0 };
  // A chat stream's usage chunk precedes [DONE]; a responses stream's usage is in its terminal event.
  return fault === "unterminated-late" && client !== "responses" ? REPORTED : undefined;
}

function assertEnded(c: Call): void {
  assert.ok(!c.timedOut, `the client waited past its deadline (${c.tookMs} ms)`);
  assert.ok(c.complete, "the stream must end by its framing, not be cut off");
  assert.ok(c.requestId, "every answer carries X-Gateway-Request-Id");
  assert.equal(c.status, 200, c.text);
  assert.match(String(c.headers["content-type"]), /^text\/event-stream/);
}

/** The error event in the client protocol's own shape, with what marks an idle timeout. */
function assertErrorEvent(client: Client, events: readonly SseEvent[], fault: StreamFault, code: string): void {
  const last = events.at(-1)!;
  const err = dataOf(last);
  assert.equal(errorCode(client, err), code, last.raw);
  const idle = fault === "idle" || fault === "idle-at-start";
  if (idle) assert.match(errorMessage(err.error ?? err), /sent nothing for 1 s/);
  else assert.doesNotMatch(errorMessage(err.error ?? err), /sent nothing/);
  switch (client) {
    case "messages":
      assert.equal(last.event, "error");
      assert.equal(err.error.type, idle ? "timeout_error" : "api_error");
      break;
    case "generate":
      assert.equal(err.error.code, idle ? 504 : 502);
      assert.equal(err.error.status, idle ? "DEADLINE_EXCEEDED" : "INTERNAL");
      break;
    case "responses":
      // Numbered after the events relayed before it.
      assert.equal(last.event, "error");
      events.slice(0, -1).forEach((e, i) => assert.equal(dataOf(e).sequence_number, i));
      assert.equal(err.sequence_number, events.length - 1);
      break;
    case "chat":
      break;
  }
}

describe("a broken stream ends with one error event, closes the upstream, bills an estimate", { concurrency: true }, () => {
  let w: FaultWorld;
  before(async () => { w = await startFaultWorld(); });
  after(async () => { await w?.close(); });

  for (const pair of PAIRS) {
    const { client, channel } = pair;
    const passthrough = PASSTHROUGH[client] === channel;
    describe(pairName(pair), { concurrency: true }, () => {
      test("control: a whole stream ends with its terminal event, billed with reported usage", async () => {
        const c = await w.call({ client, model: modelFor(client, channel, false), fault: "ok", stream: true });
        assertEnded(c);
        const events = sseEvents(c.text);
        assert.ok(isTerminalEvent(client, events.at(-1)!), `the last event must be the terminal one: ${events.at(-1)!.raw}`);
        assert.equal(events.filter((e) => isTerminalEvent(client, e)).length, 1);
        assert.ok(!events.some((e) => isErrorEvent(client, e)), c.text);
        assert.equal(streamedText(client, events), "Hello world!");
        const e = await w.entry(c.requestId);
        assert.equal(e.estimated, false);
        assert.equal(e.costNano, nanoFor(REPORTED.input, REPORTED.output));
        assert.equal((await upstreamSide(w.faulty, c)).end, "finished");
      });

      for (const fault of faults) {
        // Every event is parsed: one that is not JSON ends the stream, whatever it looks like.
        if (fault === "undecodable-braced" && passthrough) continue;
        test(`${fault}: one error event, no terminal, upstream closed, estimate billed`, async () => {
          const want = expected(client, channel, fault);
          const c = await w.call({ client, model: modelFor(client, channel, false), fault, stream: true });
          assertEnded(c);
          const events = sseEvents(c.text);
          for (const e of events) if (e.data !== "[DONE]") dataOf(e); // every event whole JSON
          assert.equal(events.filter((e) => isErrorEvent(client, e)).length, 1, `exactly one error event:\n${c.text}`);
          assert.ok(isErrorEvent(client, events.at(-1)!), `the error event comes last:\n${c.text}`);
          assert.ok(!events.some((e) => isTerminalEvent(client, e)), `no terminal event:\n${c.text}`);
          assertErrorEvent(client, events, fault, want.code);
          assert.equal(streamedText(client, events), want.text);

          const up = await upstreamSide(w.faulty, c);
          assert.equal(up.end, want.upstreamEnd);
          if (fault === "idle" || fault === "idle-at-start") {
            const silent = c.endedAt - up.silentSince!;
            assert.ok(silent >= IDLE_MS - 100 && silent < IDLE_MS + 3000, `ended ${silent} ms after the upstream went silent`);
          } else if (passthrough) {
            assert.ok(c.tookMs < IDLE_MS, `pass-through ends at once (took ${c.tookMs} ms)`);
          }
          assert.ok(c.tookMs < IDLE_MS + 3000, `took ${c.tookMs} ms`);

          const e = await w.entry(c.requestId);
          assert.equal(e.estimated, true, "marked as an estimate");
          assert.equal(e.status, 200);
          assert.equal(e.channel, CHANNEL.solo(channel));
          assert.ok(e.costNano > 0n && e.costNano < worstCase(c.bodyBytes), `cost ${e.costNano} of worst case ${worstCase(c.bodyBytes)}`);
          // Usage the upstream reported before the fault counts over the guess (Anthropic's
          // message_start, Gemini's running usageMetadata, a chat usage chunk before a lost
          // [DONE]); what it did not report is ceil(bytes/4) in, ceil(chars delivered/4) out.
          const early = reportedBefore(client, channel, fault);
          const guess = { input: Math.ceil(c.bodyBytes / 4), output: Math.ceil(want.outputChars / 4) };
          assert.equal(e.costNano, early ? nanoFor(early.input, Math.max(early.output, guess.output)) : estimate(c.bodyBytes, want.outputChars),
            `reported usage over the guess (${JSON.stringify(early)})`);
        });
      }

      if (passthrough) {
        test("undecodable-braced: an event that is not JSON but looks like an object ends the stream too", async () => {
          const c = await w.call({ client, model: modelFor(client, channel, false), fault: "undecodable-braced", stream: true });
          assertEnded(c);
          const events = sseEvents(c.text);
          assert.ok(isErrorEvent(client, events.at(-1)!), c.text);
        });
      }

      test("linger: a whole stream whose upstream holds its connection open ends within the terminal grace, billed as reported", async () => {
        const c = await w.call({ client, model: modelFor(client, channel, false), fault: "linger", stream: true });
        assertEnded(c);
        const events = sseEvents(c.text);
        assert.ok(!events.some((e) => isErrorEvent(client, e)), c.text);
        assert.ok(isTerminalEvent(client, events.at(-1)!), c.text);
        assert.equal(streamedText(client, events), "Hello world!");
        assert.ok(c.tookMs < IDLE_MS + 1000, `took ${c.tookMs} ms`);
        assert.equal((await upstreamSide(w.faulty, c)).end, "closed-by-gateway");
        const e = await w.entry(c.requestId);
        assert.equal(e.estimated, false);
        assert.equal(e.costNano, nanoFor(REPORTED.input, REPORTED.output));
      });

      test("a 200 HTML page for a stream: 502 upstream_error before any byte, not billed", async () => {
        const c = await w.call({ client, model: modelFor(client, channel, false), fault: "html-200", stream: true });
        assert.ok(!c.timedOut && c.complete);
        assert.equal(c.status, 502, c.text);
        assert.equal(errorCode(client, c.json), "upstream_error", c.text);
        const e = await w.entry(c.requestId);
        assert.equal(e.costNano, 0n);
        assert.equal(e.status, 502);
      });
    });
  }
});

// Sequential: channel health is process-wide, and each request must find the faulty channel first.
describe("a stream that breaks before its first byte fails over", () => {
  let w: FaultWorld;
  before(async () => { w = await startFaultWorld(); });
  after(async () => { await w?.close(); });

  for (const pair of PAIRS) {
    const { client, channel } = pair;
    test(`${pairName(pair)}: a 200 HTML page → the healthy channel streams the answer, billed once`, async () => {
      forgetHealth();
      const c = await w.call({ client, model: modelFor(client, channel, true), fault: "html-200", stream: true });
      assertEnded(c);
      const events = sseEvents(c.text);
      assert.ok(isTerminalEvent(client, events.at(-1)!), c.text);
      assert.equal(streamedText(client, events), "Hello world!");
      assert.ok(w.faulty.find(c.tag), "the faulty channel was tried first");
      const e = await w.entry(c.requestId);
      assert.equal(e.channel, CHANNEL.fallback(channel));
      assert.equal(e.estimated, false);
      assert.equal(e.costNano, nanoFor(REPORTED.input, REPORTED.output));
    });
  }
});
