// The canonical stream contract (src/protocols/canonical.ts) as one checker every adapter's
// tests run over decoded event lists, so all three protocols are held to the same rules.

import assert from "node:assert/strict";
import type { CanonicalEvent, StreamBlockStart } from "../../src/protocols/canonical.js";

const deltaBlock: Record<string, StreamBlockStart["type"]> = {
  text_delta: "text",
  thinking_delta: "thinking",
  signature_delta: "thinking",
  tool_input_delta: "tool_use",
};

/**
 * Asserts the contract: exactly one message_start, first; block_start indexes count from
 * 0 in order; every delta and block_stop belongs to an open block of the matching kind;
 * a tool_use block's input deltas join into a JSON object; an image block carries its whole
 * source in its block_start and takes no deltas; exactly one message_stop or
 * error, last; message_stop only with every block closed. A lone `error` (the upstream
 * failed before the message began) is a valid stream too.
 */
export function assertStreamContract(events: readonly CanonicalEvent[]): void {
  const at = (i: number, msg: string) => `event ${i} (${JSON.stringify(events[i])}): ${msg}`;
  assert.ok(events.length > 0, "the stream has no events");
  if (events.length === 1 && events[0].type === "error") return;
  assert.equal(events[0].type, "message_start", at(0, "the first event must be message_start"));
  const open = new Map<number, { type: StreamBlockStart["type"]; json: string }>();
  let next = 0;
  events.forEach((e, i) => {
    if (i > 0) assert.notEqual(e.type, "message_start", at(i, "a second message_start"));
    const last = i === events.length - 1;
    if (e.type === "message_stop" || e.type === "error") {
      assert.ok(last, at(i, `${e.type} must be the last event`));
      if (e.type === "message_stop") {
        assert.equal(open.size, 0, at(i, `message_stop with blocks still open: ${[...open.keys()].join(",")}`));
        assert.ok(e.usage && typeof e.usage.input === "number", at(i, "message_stop needs a usage"));
      }
      return;
    }
    assert.ok(!last, at(i, "the stream must end with message_stop or error"));
    if (e.type === "block_start") {
      assert.equal(e.index, next, at(i, `block indexes must count 0,1,2… (expected ${next})`));
      next++;
      if (e.block.type === "image") {
        const s = e.block.source;
        assert.ok(s.kind === "base64" ? s.mediaType !== "" && s.data !== "" : s.url !== "", at(i, "an image block needs its whole source"));
      }
      open.set(e.index, { type: e.block.type, json: "" });
      return;
    }
    if (e.type === "block_stop") {
      const block = open.get(e.index);
      assert.ok(block, at(i, `block_stop for block ${e.index}, which is not open`));
      if (block.type === "tool_use") {
        const input: unknown = block.json === "" ? {} : JSON.parse(block.json);
        assert.ok(input !== null && typeof input === "object" && !Array.isArray(input), at(i, "tool input is not a JSON object"));
      }
      open.delete(e.index);
      return;
    }
    if (e.type === "message_start") return;
    const block = open.get(e.index);
    assert.ok(block, at(i, `${e.type} for block ${e.index}, which is not open`));
    assert.notEqual(block.type, "image", at(i, "an image block takes no deltas"));
    assert.equal(block.type, deltaBlock[e.type], at(i, `${e.type} inside a ${block.type} block`));
    if (e.type === "tool_input_delta") block.json += e.partialJson;
  });
}
