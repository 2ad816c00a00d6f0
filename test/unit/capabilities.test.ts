// Fitting a request to its model's capabilities (src/protocols/capabilities.ts), pure.

import { test } from "node:test";
import assert from "node:assert/strict";
import { fitToCapabilities } from "../../src/protocols/capabilities.js";

test("a request that fits is left alone (undefined: the client's bytes go)", () => {
  assert.equal(fitToCapabilities("chat-completions", { max_tokens: 10, reasoning_effort: "low" }, { reasoning: true, maxOutput: 100 }), undefined);
  assert.equal(fitToCapabilities("embeddings", { max_tokens: 1000 }, { maxOutput: 1 }), undefined, "routes without output limits");
});

test("reasoning false drops each protocol's reasoning field; limits above max_output are clamped; the client's object is not edited", () => {
  const body = { model: "m", reasoning_effort: "high", max_tokens: 500, max_completion_tokens: 50 };
  const fit = fitToCapabilities("chat-completions", body, { reasoning: false, maxOutput: 100 })!;
  assert.deepEqual(fit.json, { model: "m", max_tokens: 100, max_completion_tokens: 50 });
  assert.deepEqual(fit.changed, ["reasoning_effort", "max_tokens (clamped to 100)"]);
  assert.equal(body.reasoning_effort, "high");
  const gemini = fitToCapabilities("generate-content", { contents: [], generationConfig: { thinkingConfig: {}, maxOutputTokens: 9, temperature: 1 } }, { reasoning: false, maxOutput: 8 })!;
  assert.deepEqual(gemini.json, { contents: [], generationConfig: { maxOutputTokens: 8, temperature: 1 } });
  assert.deepEqual(gemini.changed, ["generationConfig.thinkingConfig", "generationConfig.maxOutputTokens (clamped to 8)"]);
});

test("messages: a thinking budget the clamped max_tokens no longer exceeds is lowered with it", () => {
  const fit = fitToCapabilities("messages", { max_tokens: 64000, thinking: { type: "enabled", budget_tokens: 32000 } }, { maxOutput: 16000 })!;
  assert.deepEqual(fit.json, { max_tokens: 16000, thinking: { type: "enabled", budget_tokens: 15999 } });
  assert.deepEqual(fit.changed, ["max_tokens (clamped to 16000)", "thinking.budget_tokens (clamped to 15999)"]);
});
