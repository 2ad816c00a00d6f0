import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { eventData, SseSplitter } from "../../src/protocols/sse.js";
import { ChatStreamTap } from "../../src/protocols/openai/chat-stream-tap.js";

test("events split across chunks and line-ending styles come out whole", () => {
  const s = new SseSplitter();
  assert.deepEqual(s.push(Buffer.from("data: a\n")), []);
  assert.deepEqual(s.push(Buffer.from("\ndata: b\r\n\r\ndata: c\r")), ["data: a\n\n", "data: b\r\n\r\n"]);
  assert.deepEqual(s.push(Buffer.from("\r")), ["data: c\r\r"]);
  assert.equal(s.flush(), "");
});

test("any split into chunks gives the events the whole text gives, large events included", () => {
  const whole = (text: string) => {
    const s = new SseSplitter();
    return { events: s.push(Buffer.from(text)), rest: s.flush() };
  };
  fc.assert(fc.property(
    fc.array(fc.constantFrom("data: x", "é", "\n", "\r", "\r\n", "event: e", "y".repeat(70_000)), { maxLength: 40 }),
    fc.array(fc.nat(), { maxLength: 12 }),
    (parts, cuts) => {
      const bytes = Buffer.from(parts.join(""));
      const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
      const s = new SseSplitter();
      const events: string[] = [];
      let from = 0;
      for (const to of [...at, bytes.length]) {
        events.push(...s.push(bytes.subarray(from, to)));
        from = to;
      }
      assert.deepEqual({ events, rest: s.flush() }, whole(bytes.toString("utf8")));
    }), { numRuns: 300 });
});

test("a multi-byte character split between chunks is not corrupted", () => {
  const s = new SseSplitter();
  const bytes = Buffer.from("data: héllo\n\n");
  const cut = bytes.indexOf(0xc3) + 1;
  assert.deepEqual(s.push(bytes.subarray(0, cut)), []);
  assert.deepEqual(s.push(bytes.subarray(cut)), ["data: héllo\n\n"]);
});

test("eventData joins data lines and ignores other fields", () => {
  assert.equal(eventData("event: x\ndata: 1\ndata:2\n\n"), "1\n2");
  assert.equal(eventData(": comment\n\n"), undefined);
});

const chunk = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
const usage = { prompt_tokens: 10, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 3 } };
const stream = [
  chunk({ choices: [{ index: 0, delta: { content: "hi" } }], usage: null }),
  chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null }),
  chunk({ choices: [], usage }),
  "data: [DONE]\n\n",
].join("");

test("the tap passes bytes unchanged and reads the final usage", () => {
  const tap = new ChatStreamTap(false);
  const bytes = Buffer.from(stream);
  let out = "";
  for (let i = 0; i < bytes.length; i += 7) out += String(tap.push(bytes.subarray(i, i + 7)));
  out += tap.end();
  assert.equal(out, stream);
  assert.deepEqual(tap.usage, { input: 7, cacheRead: 3, cacheWrite: 0, output: 4, reasoning: 0 });
});

test("in strip mode the usage-only chunk is removed and everything else kept", () => {
  const tap = new ChatStreamTap(true);
  const bytes = Buffer.from(stream);
  let out = "";
  for (let i = 0; i < bytes.length; i += 5) out += String(tap.push(bytes.subarray(i, i + 5)));
  out += tap.end();
  assert.equal(out, stream.replace(chunk({ choices: [], usage }), ""));
  assert.equal(tap.usage?.input, 7);
});

test("parseEvent reads the event name and data under every line-ending style", async () => {
  const { parseEvent } = await import("../../src/protocols/sse.js");
  for (const nl of ["\n", "\r\n", "\r"]) {
    assert.deepEqual(parseEvent(`event: delta${nl}data: {"a":1}${nl}data: 2${nl}${nl}`), { event: "delta", data: '{"a":1}\n2' });
  }
  assert.equal(parseEvent(": ping\n\n"), undefined);
  assert.deepEqual(parseEvent("data:x\n\n"), { event: undefined, data: "x" });
});

test("wellFormed: every JSON object or array passes, none of its cuts does, and unbalanced data fails", async () => {
  const { wellFormed } = await import("../../src/protocols/usage-tap.js");
  const fc = (await import("fast-check")).default;
  const container = fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.array(fc.jsonValue()));
  fc.assert(fc.property(container, fc.nat(), (value, cut) => {
    const text = JSON.stringify(value);
    assert.ok(wellFormed(text), text);
    assert.ok(wellFormed(JSON.stringify(value, null, 2)), "pretty-printed too");
    const prefix = text.slice(0, cut % text.length);
    assert.ok(!wellFormed(prefix), `a cut passed: ${prefix}`);
  }), { seed: 4242, numRuns: 500 });
  for (const bad of ['{"choices": [tru}', '{"delta": tru}', '{"a": 01x}', '{"a":1}}', '{"a":"b}', '"text"', "[1,2", '{"a":1} x', "", "not json", "{a: 1}", '{"x": XYZ}', '{"x": NaN}']) {
    assert.equal(wellFormed(bad), false, bad);
  }
});

test("the tap reads an event's data the same whatever its line endings and fields", async () => {
  const { ChatStreamTap } = await import("../../src/protocols/openai/chat-stream-tap.js");
  const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
  for (const nl of ["\n", "\r\n", "\r"]) {
    for (const extra of ["", `event: x${nl}`, `: comment${nl}`, `id: 1${nl}`]) {
      const tap = new ChatStreamTap(false);
      const text = `${extra}data: ${JSON.stringify({ choices: [], usage })}${nl}${nl}${extra}data: {"choices": [tru}${nl}${nl}`;
      tap.push(Buffer.from(text));
      assert.equal(tap.usage?.output, 2, JSON.stringify(text));
      assert.equal(tap.ending, "undecodable", JSON.stringify(text));
    }
  }
});

test("an event longer than maxEventChars is dropped, not held: the splitter reports it and stops, however it is cut", () => {
  const limit = 100;
  const fits = `data: ${"a".repeat(limit - 8)}\n\n`; // exactly the limit
  const tooLong = `data: ${"b".repeat(limit)}\n\n`;
  fc.assert(fc.property(fc.array(fc.nat(), { maxLength: 8 }), (cuts) => {
    const bytes = Buffer.from(fits + tooLong + fits);
    const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
    const s = new SseSplitter(limit);
    const events: string[] = [];
    let from = 0;
    for (const to of [...at, bytes.length]) {
      events.push(...s.push(bytes.subarray(from, to)));
      from = to;
    }
    assert.deepEqual(events, [fits]);
    assert.equal(s.overflowed, true);
    assert.equal(s.flush(), "");
  }), { numRuns: 200 });
});

test("an unfinished event past the limit overflows at once, before its end arrives", () => {
  const s = new SseSplitter(1024);
  assert.deepEqual(s.push(Buffer.from(`data: ${"c".repeat(1000)}`)), []);
  assert.equal(s.overflowed, false);
  assert.deepEqual(s.push(Buffer.from("c".repeat(100))), []);
  assert.equal(s.overflowed, true);
  assert.deepEqual(s.push(Buffer.from("\n\ndata: x\n\n")), [], "nothing is split after it");
});
