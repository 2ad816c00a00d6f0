// The seal the gateway puts on signatures it writes into converted answers, and how a
// request's signed reasoning is fitted to the provider it goes to (src/protocols/reasoning.ts).

import { test } from "node:test";
import assert from "node:assert/strict";
import type { CanonicalRequest } from "../../src/protocols/canonical.js";
import { isSealed, openSignature, portableReasoning, sealedEvent, sealSignature } from "../../src/protocols/reasoning.js";

test("a sealed signature opens to its issuer and the provider's bytes; an unsealed one is the client protocol's provider's", () => {
  assert.equal(sealSignature("gemini", "CiQBabc=="), "gw:gemini:CiQBabc==");
  assert.deepEqual(openSignature("gw:gemini:CiQBabc==", "anthropic"), { issuer: "gemini", signature: "CiQBabc==" });
  assert.deepEqual(openSignature("EqQBabc==", "anthropic"), { issuer: "anthropic", signature: "EqQBabc==" });
  // base64 and base64url never hold ':' — no provider's signature reads as sealed.
  for (const provider of ["EqQBCkYIBRgCKkD+/==", "gAAAAABp-_fernet", "gwZ0abc", "gw-abc"]) assert.equal(isSealed(provider), false);
  assert.equal(isSealed("gw:mistral:x"), false, "only the three issuers");
});

test("portableReasoning: own signatures unsealed, another provider's left out and named once per issuer", () => {
  const req: CanonicalRequest = {
    model: "m", system: [], stream: false,
    messages: [
      { role: "user", content: [{ type: "text", text: "q" }] },
      { role: "assistant", content: [
        { type: "thinking", text: "a", signature: "gw:gemini:G1" },
        { type: "thinking", text: "b", signature: "gw:anthropic:A1" },
        { type: "redacted_thinking", data: "R1" },
        { type: "thinking", text: "c", signature: "gw:gemini:G2" },
        { type: "text", text: "x" },
      ] },
    ],
  } as unknown as CanonicalRequest;
  const toAnthropic = portableReasoning(req, "messages", "anthropic");
  assert.deepEqual(toAnthropic.request.messages[1].content, [
    { type: "thinking", text: "a" },
    { type: "thinking", text: "b", signature: "A1" },
    { type: "redacted_thinking", data: "R1" },
    { type: "thinking", text: "c" },
    { type: "text", text: "x" },
  ]);
  assert.deepEqual(toAnthropic.dropped, ["thinking.signature (from gemini)"]);
  const toGemini = portableReasoning(req, "messages", "gemini");
  assert.deepEqual(toGemini.request.messages[1].content, [
    { type: "thinking", text: "a", signature: "G1" },
    { type: "thinking", text: "b" },
    { type: "thinking", text: "c", signature: "G2" },
    { type: "text", text: "x" },
  ]);
  assert.deepEqual(toGemini.dropped, ["thinking.signature (from anthropic)"]);
  const plain = { ...req, messages: [req.messages[0]] } as CanonicalRequest;
  assert.equal(portableReasoning(plain, "messages", "gemini").request, plain, "nothing signed: the request itself");
});

test("a converted stream's signature delta and redacted block are sealed", () => {
  assert.deepEqual(sealedEvent({ type: "signature_delta", index: 0, signature: "S" }, "openai"), { type: "signature_delta", index: 0, signature: "gw:openai:S" });
  assert.deepEqual(sealedEvent({ type: "block_start", index: 1, block: { type: "redacted_thinking", data: "D" } }, "anthropic"),
    { type: "block_start", index: 1, block: { type: "redacted_thinking", data: "gw:anthropic:D" } });
  const text = { type: "text_delta", index: 0, text: "t" } as const;
  assert.equal(sealedEvent(text, "gemini"), text);
});
