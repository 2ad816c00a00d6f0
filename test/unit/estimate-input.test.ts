// The local input-token estimate the token-counting routes answer for channels that cannot
// count (billing/estimate.ts estimateInputTokens): characters / 4, per-message framing, a
// fixed cost per image, every part of the canonical request counted.

import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { IMAGE_TOKENS, MESSAGE_OVERHEAD_TOKENS, estimateInputTokens } from "../../src/billing/estimate.js";
import type { Block, CanonicalRequest, ImageBlock, Message, TextBlock } from "../../src/protocols/canonical.js";

const request = (messages: Message[], extra: Partial<CanonicalRequest> = {}): CanonicalRequest =>
  ({ model: "m", system: [], messages, stream: false, ...extra });
const user = (...content: Block[]): Message => ({ role: "user", content });
const text = (t: string): TextBlock => ({ type: "text", text: t });
const image: ImageBlock = { type: "image", source: { kind: "base64", mediaType: "image/png", data: "AAAA".repeat(5000) } };

test("nothing to count is zero", () => {
  assert.deepEqual(estimateInputTokens(request([])), { text: 0, image: 0 });
});

test("text: characters / 4 rounded up, plus the framing of each message", () => {
  assert.deepEqual(estimateInputTokens(request([user(text("abcde"))])), { text: 2 + MESSAGE_OVERHEAD_TOKENS, image: 0 });
  const two = estimateInputTokens(request([user(text("a".repeat(40))), { role: "assistant", content: [text("b".repeat(40))] }]));
  assert.equal(two.text, 20 + 2 * MESSAGE_OVERHEAD_TOKENS);
});

test("system, thinking, tool calls, tool results and tool definitions all count; redacted thinking does not", () => {
  const base = estimateInputTokens(request([user(text("wxyz"))])).text;
  const withSystem = estimateInputTokens(request([user(text("wxyz"))], { system: [{ type: "text", text: "s".repeat(400) }] })).text;
  assert.equal(withSystem, base + 100);
  const call = { type: "tool_use", id: "t1", name: "get", input: { city: "Zürich" } } as const;
  const turn = (b: Block) => estimateInputTokens(request([user(text("wxyz")), { role: "assistant", content: [b] }])).text;
  assert.equal(turn(call), base + MESSAGE_OVERHEAD_TOKENS + Math.ceil(("get" + JSON.stringify(call.input)).length / 4));
  assert.equal(turn({ type: "thinking", text: "t".repeat(80) }), base + MESSAGE_OVERHEAD_TOKENS + 20);
  assert.equal(turn({ type: "redacted_thinking", data: "r".repeat(8000) }), base + MESSAGE_OVERHEAD_TOKENS);
  const result = estimateInputTokens(request([user({ type: "tool_result", toolUseId: "t1", content: [text("r".repeat(40)), image] })]));
  assert.deepEqual(result, { text: 10 + MESSAGE_OVERHEAD_TOKENS, image: IMAGE_TOKENS });
  const tools = estimateInputTokens(request([], { tools: [{ name: "get", description: "d".repeat(37), parameters: { type: "object" } }] }));
  assert.equal(tools.text, Math.ceil((3 + 37 + JSON.stringify({ type: "object" }).length) / 4));
});

test("an image costs IMAGE_TOKENS whatever its size", () => {
  const one = estimateInputTokens(request([user(text("hi"), image)]));
  const small = estimateInputTokens(request([user(text("hi"), { type: "image", source: { kind: "url", url: "https://x/y.png" } })]));
  assert.equal(one.image, IMAGE_TOKENS);
  assert.deepEqual(small, one);
});

test("property: within [chars/4, chars/4 + framing] for text, and never smaller for more content", () => {
  fc.assert(fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 8 }), fc.string({ minLength: 1 }), (texts, more) => {
    const messages = texts.map((t) => user(text(t)));
    const chars = texts.reduce((n, t) => n + t.length, 0);
    const n = estimateInputTokens(request(messages)).text;
    assert.ok(n >= Math.ceil(chars / 4) && n <= Math.ceil(chars / 4) + MESSAGE_OVERHEAD_TOKENS * texts.length);
    const grown = estimateInputTokens(request([...messages, user(text(more))])).text;
    assert.ok(grown > n);
  }));
});
