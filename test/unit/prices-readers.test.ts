// The price list readers against the shipped samples of LiteLLM's and models.dev's real
// formats: exact amounts (nano-units, from the decimal text of per-token floats), the
// ratio-or-absolute choice, tiers, service tiers, variants, and what is left out and why.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { flatten } from "../../src/prices/diff.js";
import type { ListedModel, PriceList } from "../../src/prices/listed.js";
import { gatewayPrice } from "../../src/prices/price-keys.js";
import { detectFormat, readPriceList } from "../../src/prices/read.js";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/prices/${name}`, import.meta.url));
const litellmText = readFileSync(fixture("litellm-sample.json"), "utf8");
const modelsDevText = readFileSync(fixture("models-dev-sample.json"), "utf8");
const litellm = readPriceList(litellmText, "litellm-sample.json");
const modelsDev = readPriceList(modelsDevText, "models-dev-sample.json");

function model(list: PriceList, entry: string, provider?: string): ListedModel {
  const found = list.models.find((m) => m.entry === entry && (provider === undefined || m.provider === provider));
  assert.ok(found, `${entry} is read`);
  return found;
}

/** gateway.yaml's price for an entry, as field → exact decimal text. */
function yamlPrice(list: PriceList, entry: string, provider?: string): Record<string, string> {
  return Object.fromEntries(flatten(gatewayPrice(model(list, entry, provider).price)));
}

const B = 1_000_000_000n; // nano-units per unit of the currency

describe("format detection", () => {
  test("each sample is told by its shape", () => {
    assert.equal(detectFormat(JSON.parse(litellmText)), "litellm");
    assert.equal(detectFormat(JSON.parse(modelsDevText)), "models.dev");
    assert.equal(detectFormat({ "some-model": { price: 1 } }), undefined);
    assert.equal(litellm.format, "litellm");
    assert.equal(modelsDev.format, "models.dev");
  });
});

describe("LiteLLM", () => {
  test("the documenting sample_spec is no model", () => {
    assert.equal(litellm.models.some((m) => m.entry === "sample_spec"), false);
  });

  test("per-token floats become exact prices per 1M tokens, tiers by their threshold", () => {
    const sonnet = model(litellm, "claude-sonnet-4-5");
    assert.equal(sonnet.provider, "anthropic");
    assert.equal(sonnet.endpoint, "chat");
    assert.equal(sonnet.maxOutputTokens, 64000);
    const { tiers, toolCallsPer1k, ...base } = sonnet.price;
    assert.deepEqual(base, {
      input: 3n * B, output: 15n * B, cacheRead: 300_000_000n, cacheWrite: 3_750_000_000n, cacheWrite1h: 6n * B,
    });
    assert.deepEqual(toolCallsPer1k, { web_search: 10n * B });
    assert.deepEqual(tiers, [{
      aboveInputTokens: 200_000,
      price: { input: 6n * B, output: 22_500_000_000n, cacheRead: 600_000_000n, cacheWrite: 7_500_000_000n, cacheWrite1h: 12n * B },
    }]);
  });

  test("gateway.yaml keys: ratios where exact, a tier names only what the base's ratios do not give", () => {
    assert.deepEqual(yamlPrice(litellm, "claude-sonnet-4-5"), {
      input: "3", output: "15", cache_read_ratio: "0.1", cache_write_ratio: "1.25", cache_write_1h_ratio: "2",
      "tool_calls.web_search": "10", "tiers[above 200000].input": "6", "tiers[above 200000].output": "22.5",
    });
    assert.deepEqual(yamlPrice(litellm, "claude-haiku-4-5"), {
      input: "1", output: "5", cache_read_ratio: "0.1", cache_write_ratio: "1.25", cache_write_1h_ratio: "2",
    });
  });

  test("audio: cached audio is an absolute price when audio input × the cache ratio is not it", () => {
    assert.deepEqual(yamlPrice(litellm, "gpt-4o-mini-realtime-preview"), {
      input: "0.6", output: "2.4", cache_read_ratio: "0.5", audio_input: "10", audio_cache_read: "0.3", audio_output: "20",
    });
    assert.equal(model(litellm, "gpt-4o-mini-realtime-preview").endpoint, "realtime");
    assert.deepEqual(yamlPrice(litellm, "gpt-4o-audio-preview"), { input: "2.5", output: "10", audio_input: "40", audio_output: "80" });
  });

  test("reasoning is omitted when it equals output; the provider prefix is not part of the name", () => {
    const lite = model(litellm, "gemini/gemini-2.5-flash-lite");
    assert.equal(lite.name, "gemini-2.5-flash-lite");
    assert.equal(lite.price.reasoning, 400_000_000n);
    assert.deepEqual(yamlPrice(litellm, "gemini/gemini-2.5-flash-lite"), {
      input: "0.1", output: "0.4", cache_read_ratio: "0.1", audio_input: "0.3", "tool_calls.web_search": "35",
    });
  });

  test("service tiers: one exact multiplier each, else left out with a note", () => {
    assert.deepEqual(model(litellm, "gpt-5-2025-08-07").price.serviceTiersPpm, { flex: 500_000n, priority: 2_000_000n });
    assert.deepEqual(model(litellm, "gpt-4.1").price.serviceTiersPpm, { priority: 1_750_000n });
    assert.deepEqual(model(litellm, "gpt-4o").price.serviceTiersPpm, { priority: 1_700_000n });
    const mini = model(litellm, "gpt-4o-mini");
    // 0.25 / 0.15 = 1.666…: no multiplier of 6 places prices it.
    assert.equal(mini.price.serviceTiersPpm, undefined);
    assert.match(mini.notes.join("\n"), /service tier "priority" left out/);
  });

  test("image entries: token prices, and sizes and qualities as variants of a model priced per image", () => {
    assert.deepEqual(yamlPrice(litellm, "gpt-image-1.5"), { input: "5", output: "10", cache_read_ratio: "0.25", image_input: "8", image_output: "32" });
    assert.match(model(litellm, "gpt-image-1.5").notes.join("\n"), /size and quality prices left out: the model is priced by tokens/);
    // The sample holds gpt-image-1's size entry but not its own entry: the model is made from it.
    assert.deepEqual(yamlPrice(litellm, "gpt-image-1"), { per_image: "0.167", "variants[size=1024x1024,quality=high].per_image": "0.167" });
    assert.equal(model(litellm, "gpt-image-1").endpoint, "image");
    // Per pixel × 1024 × 1024 is exact at 9 places; the other two sizes are not.
    const dalle2 = model(litellm, "dall-e-2");
    assert.deepEqual(yamlPrice(litellm, "dall-e-2"), { per_image: "0.019922944", "variants[size=1024x1024].per_image": "0.019922944" });
    assert.equal(dalle2.notes.filter((n) => /variant (256|512)-x-\d+\/dall-e-2 left out: .*not exact/.test(n)).length, 2);
  });

  test("flat prices: per second (exact), left out where the model is priced by tokens", () => {
    const whisper = model(litellm, "groq/whisper-large-v3");
    assert.equal(whisper.name, "whisper-large-v3");
    assert.deepEqual(whisper.price, { perSecond: 30_830n });
    assert.equal(whisper.endpoint, "transcription");
    const tts = model(litellm, "gpt-4o-mini-tts");
    assert.equal(tts.price.perSecond, undefined);
    assert.match(tts.notes.join("\n"), /per-second price left out: the model is priced by tokens/);
  });

  test("a mode the gateway does not serve gives no endpoint", () => {
    const instruct = model(litellm, "gpt-3.5-turbo-instruct");
    assert.equal(instruct.endpoint, undefined);
    assert.equal(instruct.kind, "mode completion");
  });

  test("an amount not exact at 9 places refuses its entry, naming the key and the value", () => {
    const list = readPriceList(JSON.stringify({
      "odd-model": { input_cost_per_token: 1.0000000001e-06, output_cost_per_token: 2e-06, litellm_provider: "openai", mode: "chat" },
      "bad-model": { input_cost_per_token: "cheap", litellm_provider: "openai", mode: "chat" },
    }), "odd.json");
    assert.deepEqual(list.models, []);
    assert.deepEqual(list.refused.map((r) => [r.entry, r.reason]), [
      ["odd-model", "input_cost_per_token 0.0000010000000001 is 1.0000000001 per 1M tokens: more than 9 decimal places, not exact"],
      ["bad-model", 'input_cost_per_token must be a number ≥ 0, not "cheap"'],
    ]);
  });

  test("a cache price whose ratio of input is not an exact decimal is written as its own price", () => {
    const list = readPriceList(JSON.stringify({
      thirds: { input_cost_per_token: 3e-07, output_cost_per_token: 1.2e-06, cache_read_input_token_cost: 1e-07, cache_creation_input_token_cost: 3.75e-07, litellm_provider: "openai", mode: "chat" },
    }), "thirds.json");
    assert.deepEqual(yamlPrice(list, "thirds"), { input: "0.3", output: "1.2", cache_read: "0.1", cache_write_ratio: "1.25" });
  });
});

describe("models.dev", () => {
  test("costs per 1M tokens, context tiers, audio", () => {
    assert.deepEqual(model(modelsDev, "gemini-2.5-pro", "google").price, {
      input: 1_250_000_000n, output: 10n * B, cacheRead: 125_000_000n,
      tiers: [{ aboveInputTokens: 200_000, price: { input: 2_500_000_000n, output: 15n * B, cacheRead: 250_000_000n } }],
    });
    assert.deepEqual(yamlPrice(modelsDev, "gemini-2.5-pro", "google"), {
      input: "1.25", output: "10", cache_read_ratio: "0.1", "tiers[above 200000].input": "2.5", "tiers[above 200000].output": "15",
    });
    assert.deepEqual(yamlPrice(modelsDev, "gemini-2.5-flash-native-audio-latest"), { input: "0.5", output: "2", audio_input: "3", audio_output: "12" });
  });

  test("the older context_over_200k form; a tier writes its cache ratio when the base's does not give it", () => {
    // 0.31 / 1.25 = 0.248 at the base; 0.625 / 2.5 = 0.25 above 200K tokens.
    assert.deepEqual(yamlPrice(modelsDev, "gemini-2.5-pro", "google-vertex"), {
      input: "1.25", output: "10", cache_read_ratio: "0.248",
      "tiers[above 200000].input": "2.5", "tiers[above 200000].output": "15", "tiers[above 200000].cache_read_ratio": "0.25",
    });
  });

  test("per_minute becomes per_second; zero token prices are dropped beside a unit price", () => {
    assert.deepEqual(model(modelsDev, "whisper-1").price, { input: 0n, output: 0n, perSecond: 100_000n });
    assert.deepEqual(yamlPrice(modelsDev, "whisper-1"), { per_second: "0.0001" });
    assert.equal(model(modelsDev, "whisper-1").endpoint, "transcription");
  });

  test("endpoints from modalities; a model without cost is unpriced", () => {
    assert.equal(model(modelsDev, "gemini-embedding-001").endpoint, "embeddings");
    assert.equal(model(modelsDev, "text-embedding-ada-002").endpoint, "embeddings");
    assert.equal(model(modelsDev, "claude-sonnet-4-5").endpoint, "chat");
    assert.equal(model(modelsDev, "gpt-image-1").endpoint, "image");
    assert.deepEqual(model(modelsDev, "gpt-image-1").price, {});
    assert.equal(model(modelsDev, "gpt-5", "openai").maxOutputTokens, 128000);
  });
});
