// What a request asks that selects a price variant (Units.variant), as each route's rules
// read it: images' size and quality, video's size and resolution, the service tier of
// chat-completions, responses and messages; and how it prices: a variant by what the
// request asked, a service tier by what the answer says, else by what the request asked.

import assert from "node:assert/strict";
import { test } from "node:test";
import { priceUsage } from "../../src/billing/cost.js";
import type { MultipartFile } from "../../src/media/multipart.js";
import { toNano, toPpm } from "../../src/config/money.js";
import { imageEditRules, imageRules, videoRules } from "../../src/protocols/openai/media-passthrough.js";
import { chatPassthrough } from "../../src/protocols/openai/passthrough.js";
import { routeProtocols } from "../../src/protocols/registry.js";
import type { Units } from "../../src/protocols/usage.js";
import { answeredUnits, requestVariant, serviceTierRules } from "../../src/protocols/variants.js";
import type { Price } from "../../src/runtime/types.js";

const ONE = 1_000_000n;

test("chat-completions, responses and messages read the service tier the request asks", () => {
  for (const route of ["chat-completions", "responses", "messages"]) {
    const rules = routeProtocols[route].rules!;
    assert.deepEqual(rules({ model: "m", service_tier: "flex" }), { variant: { service_tier: "flex" } }, route);
    assert.equal(rules({ model: "m" }), undefined, `${route}: no tier asked, no units`);
  }
  assert.equal(serviceTierRules({ service_tier: null }), undefined);
  assert.equal(serviceTierRules({ service_tier: "" }), undefined);
  assert.equal(serviceTierRules({ service_tier: { tier: "flex" } }), undefined, "only a string (or number) names a variant");
});

test("images: size and quality as asked, absent when not asked; the one-image rule still holds", () => {
  assert.deepEqual(imageRules({ prompt: "a cat", size: "1792x1024", quality: "hd" }), { images: 1, variant: { size: "1792x1024", quality: "hd" } });
  assert.deepEqual(imageRules({ prompt: "a cat", quality: "low" }), { images: 1, variant: { quality: "low" } });
  const plain = imageRules({ prompt: "a cat" });
  assert.deepEqual(plain, { images: 1 });
  assert.equal("variant" in plain, false);
  const file: MultipartFile = { field: "image", filename: "a.png", mimeType: "image/png", size: 10 };
  assert.deepEqual(imageEditRules({ prompt: "a hat", size: "1024x1024", quality: "medium" }, [file]),
    { images: 1, variant: { size: "1024x1024", quality: "medium" } }, "a multipart form's fields are strings already");
});

test("video: size (OpenAI) and resolution (family C) as asked, beside the seconds", () => {
  assert.deepEqual(videoRules({ prompt: "waves", seconds: "8", size: "1280x720" }), { milliseconds: 8000, variant: { size: "1280x720" } });
  assert.deepEqual(videoRules({ prompt: "waves", seconds: "5", resolution: "1080p", aspect_ratio: "16:9" }),
    { milliseconds: 5000, variant: { resolution: "1080p" } });
  assert.deepEqual(videoRules({ prompt: "waves" }), { milliseconds: 10000 });
});

test("a variant's values are strings: numbers as their decimal text, anything else ignored", () => {
  assert.deepEqual(requestVariant({ a: 720, b: "x", c: true, d: null, e: [1] }, ["a", "b", "c", "d", "e", "f"]), { a: "720", b: "x" });
  assert.equal(requestVariant({}, ["size"]), undefined);
});

test("the units an answer reports keep the variant the request asked", () => {
  const asked: Units = { milliseconds: 10000, variant: { resolution: "1080p" } };
  assert.deepEqual(answeredUnits({ milliseconds: 8000 }, asked), { milliseconds: 8000, variant: { resolution: "1080p" } });
  assert.equal(answeredUnits(undefined, asked), asked);
  const own: Units = { milliseconds: 8000, variant: { size: "720x1280" } };
  assert.equal(answeredUnits(own, asked), own, "a variant the answer names stands");
  const plain: Units = { milliseconds: 8000 };
  assert.equal(answeredUnits(plain, { milliseconds: 1 }), plain);
});

/** dall-e-3 as a price list writes it: per image, by size and quality. */
const dallE3: Price = {
  perImage: toNano(0.04),
  variants: [
    { when: { quality: "hd", size: "1024x1024" }, price: { perImage: toNano(0.08) } },
    { when: { quality: "hd" }, price: { perImage: toNano(0.12) } },
    { when: { size: "1792x1024" }, price: { perImage: toNano(0.08) } },
  ],
};

test("an image's size and quality choose its price", () => {
  const cost = (json: Record<string, unknown>) => priceUsage({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 }, dallE3, ONE, imageRules(json));
  // 1 image × 0.04 = 40,000,000 nano; hd 1024² 0.08; hd other sizes 0.12; standard 1792×1024 0.08
  assert.equal(cost({ prompt: "p" }).costNano, 40_000_000n);
  assert.equal(cost({ prompt: "p", quality: "hd", size: "1024x1024" }).costNano, 80_000_000n);
  assert.equal(cost({ prompt: "p", quality: "hd", size: "1792x1024" }).costNano, 120_000_000n);
  assert.equal(cost({ prompt: "p", quality: "standard", size: "1792x1024" }).costNano, 80_000_000n);
  assert.deepEqual(cost({ prompt: "p", quality: "hd", size: "1024x1024" }).variant, { quality: "hd", size: "1024x1024" });
});

test("the service tier: the answer's when it names one, else the request's", () => {
  const gpt5: Price = { inputPer1M: toNano(1.25), outputPer1M: toNano(10), serviceTiersPpm: { flex: toPpm(0.5), priority: toPpm(2) } };
  const answer = (tier?: string) => ({
    id: "c", object: "chat.completion", model: "gpt-5", choices: [],
    ...(tier !== undefined && { service_tier: tier }),
    usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 },
  });
  const asked = routeProtocols["chat-completions"].rules!({ model: "gpt-5", service_tier: "flex" });
  // 1000 × 1250 + 100 × 10000 = 1,250,000 + 1,000,000 = 2,250,000 nano
  const cost = (tier: string | undefined, units?: Units) => priceUsage(chatPassthrough.bodyUsage(answer(tier))!, gpt5, ONE, units).costNano;
  assert.equal(cost(undefined), 2_250_000n, "nothing asked, nothing named");
  assert.equal(cost(undefined, asked), 1_125_000n, "flex asked, the answer names none: flex (× 0.5)");
  assert.equal(cost("default", asked), 2_250_000n, "flex asked, served at default: default");
  assert.equal(cost("priority", asked), 4_500_000n, "the answer's tier wins (× 2)");
});
