// The worked example of docs/migrating-from-new-api.md stays true: its gateway.yaml compiles
// without warnings, its prices are the new-api ratios shown beside it converted by the
// guide's own rules, and the request it bills costs what the guide says.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { compileSource } from "../../src/config/index.js";
import { costOf, formatNano } from "../../src/billing/cost.js";

const guidePath = fileURLToPath(new URL("../../docs/migrating-from-new-api.md", import.meta.url));
const guide = readFileSync(guidePath, "utf8");

/** The body of the first fenced block in `lang` whose text passes `pick`. */
function block(lang: string, pick: (text: string) => boolean): string {
  const fences = [...guide.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]);
  const found = fences.find(pick);
  assert.ok(found, `no \`\`\`${lang} block found in the guide`);
  return found;
}

const yaml = block("yaml", (text) => text.startsWith("# gateway.yaml converted from the new-api setup"));
const ratios = JSON.parse(block("json", (text) => text.includes("ModelRatio"))) as Record<string, Record<string, number>>;

/** Every ${VAR} the example reads, set to a placeholder. */
const env = Object.fromEntries([...yaml.matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((m) => [m[1], `placeholder-${m[1]}`]));

function compiled() {
  return compileSource(yaml, { path: "docs/migrating-from-new-api.md", env });
}

test("the example gateway.yaml compiles without warnings", () => {
  const { runtime, warnings } = compiled();
  assert.deepEqual(warnings, []);
  assert.equal(runtime.channels.size, 4);
  assert.equal(runtime.tokensByHash.size, 2);
});

test("the example's prices are the new-api ratios converted as the guide says", () => {
  const { runtime } = compiled();
  const nano = (usd: number): bigint => BigInt(Math.round(usd * 1e9));
  for (const [model, modelRatio] of Object.entries(ratios.ModelRatio)) {
    const price = runtime.models.get(model)?.price;
    assert.ok(price, `${model} is not priced`);
    const input = modelRatio * 2;
    assert.equal(price.inputPer1M, nano(input), `${model} input`);
    assert.equal(price.outputPer1M, nano(input * ratios.CompletionRatio[model]), `${model} output`);
    const cacheRead = ratios.CacheRatio[model];
    assert.equal(price.cacheReadRatioPpm, cacheRead === undefined ? undefined : BigInt(Math.round(cacheRead * 1e6)), `${model} cache read`);
    const cacheWrite = ratios.CreateCacheRatio[model];
    assert.equal(price.cacheWriteRatioPpm, cacheWrite === undefined ? undefined : BigInt(Math.round(cacheWrite * 1e6)), `${model} cache write`);
  }
  for (const [model, perCall] of Object.entries(ratios.ModelPrice)) {
    assert.equal(runtime.models.get(model)?.price.perImage, nano(perCall), `${model} per call`);
  }
  for (const [group, ratio] of Object.entries(ratios.GroupRatio)) {
    assert.equal(runtime.groups.get(group)?.multiplier, ratio, `group ${group}`);
  }
});

test("the billed example costs what the guide says, as new-api's quota formula does", () => {
  const { runtime } = compiled();
  const usage = { input: 1000, cacheRead: 0, cacheWrite: 0, output: 500, reasoning: 0 };
  const cost = costOf(usage, runtime.models.get("gpt-4o-mini")!.price, runtime.groups.get("vip")!.multiplierPpm);
  assert.equal(formatNano(cost), "0.00036");
  const quota = (1000 + 500 * ratios.CompletionRatio["gpt-4o-mini"]) * ratios.ModelRatio["gpt-4o-mini"] * ratios.GroupRatio.vip;
  assert.equal(Math.round(quota), 180);
  assert.equal(180 / 500_000, 0.00036);
  assert.ok(guide.includes("= 180 points = $0.00036") && guide.includes("× 0.8 = $0.00036"), "the guide states the same figures");
});
