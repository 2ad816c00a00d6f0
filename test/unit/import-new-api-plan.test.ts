// The pure parts of `gateway import new-api`: new-api's ratios as exact prices, quota as
// nano-units, its keys as the keys clients send, the --from forms, and the plan's
// choices for what new-api allows and the gateway does not.

import { test } from "node:test";
import assert from "node:assert/strict";
import { sha256Hex } from "../../src/config/hash.js";
import { clientKeyOf, planImport } from "../../src/import/new-api/plan.js";
import { modelPriceOf, priceOptions, quotaToNano } from "../../src/import/new-api/prices.js";
import type { NewApiData } from "../../src/import/new-api/records.js";
import { maskedUrl, parseSourceUrl } from "../../src/import/new-api/source.js";

const options = (entries: Record<string, unknown>) => new Map(Object.entries(entries).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));

test("a ratio of 1 is 2 per 1M input tokens; output is input × the completion ratio, exact", () => {
  const opts = priceOptions(options({
    ModelRatio: { a: 0.075, b: 0.1, c: 7.5, d: 1 }, CompletionRatio: { a: 4, b: 3, c: 1.3333333 },
    CacheRatio: { c: 0.3333333333, d: 0.25 }, CreateCacheRatio: { d: 1.25 }, ModelPrice: { d: 0.04 },
  }));
  assert.deepEqual(modelPriceOf("a", opts), { input: 0.15, output: 0.6 });
  assert.deepEqual(modelPriceOf("b", opts), { input: 0.2, output: 0.6 }); // 0.1 × 2 × 3 without float noise
  // A cache ratio past 6 decimals is written as an amount (input × ratio, to the nano).
  assert.deepEqual(modelPriceOf("c", opts), { input: 15, output: 19.9999995, cache_read: 5 });
  assert.deepEqual(modelPriceOf("d", opts), { per_request: 0.04 }, "ModelPrice wins over the ratio, as in new-api");
  assert.equal(modelPriceOf("unknown", opts), undefined);
});

test("QuotaPerUnit scales both prices and quota; bad options are reported and ignored", () => {
  const opts = priceOptions(options({ QuotaPerUnit: "1000000", ModelRatio: { a: 1, b: "x" }, GroupRatio: "{not json" }));
  assert.deepEqual(modelPriceOf("a", opts), { input: 1, output: 1 });
  assert.equal(quotaToNano(1_000_000, opts.quotaPerUnit), 1_000_000_000n);
  assert.equal(quotaToNano(5_000_000, 500_000), 10_000_000_000n);
  assert.equal(quotaToNano(1, 500_000), 2_000n);
  assert.equal(quotaToNano(-5, 500_000), 0n);
  assert.equal(opts.problems.length, 2);
});

test("new-api keys are stored without the sk- clients send", () => {
  assert.equal(clientKeyOf("abc123"), "sk-abc123");
  assert.equal(clientKeyOf("sk-abc123"), "sk-abc123");
});

test("--from forms: sqlite paths, postgres and mysql/mariadb URLs; passwords masked in messages", () => {
  assert.deepEqual(parseSourceUrl("sqlite:/data/one-api.db"), { kind: "sqlite", path: "/data/one-api.db" });
  assert.deepEqual(parseSourceUrl("sqlite:///data/one-api.db"), { kind: "sqlite", path: "/data/one-api.db" });
  assert.deepEqual(parseSourceUrl("sqlite:one-api.db"), { kind: "sqlite", path: "one-api.db" });
  assert.equal(parseSourceUrl("postgresql://u:p@h/db").kind, "postgres");
  assert.deepEqual(parseSourceUrl("mariadb://u:p@h:3306/db"), { kind: "mysql", url: "mysql://u:p@h:3306/db" });
  assert.throws(() => parseSourceUrl("oracle://x"));
  assert.equal(maskedUrl("mysql://root:s3cret@db:3306/oneapi"), "mysql://root:***@db:3306/oneapi");
});

const data = (over: Partial<NewApiData>): NewApiData => ({ users: [], tokens: [], channels: [], abilities: [], options: new Map(), ...over });
const user = { id: 7, username: "dan", email: "", status: 1, group: "default", quota: 0, usedQuota: 0, deleted: false };
const token = { id: 9, userId: 7, key: "k".repeat(48), name: "", status: 1, expiredTime: -1, remainQuota: 0, unlimitedQuota: false, modelLimits: [], allowIps: [], group: "", deleted: false };

test("tokens: the original key's hash; auto group, exhausted and expired tokens, names made unique by id", () => {
  const plan = planImport(data({
    users: [user],
    tokens: [token, { ...token, id: 10, key: "j".repeat(48), group: "auto", status: 4 }, { ...token, id: 11, key: "", name: "x" }],
  }));
  assert.deepEqual(plan.tokens.map((t) => [t.token.name, t.token.group, t.token.status, t.token.quotaNano]), [
    ["dan-token-9", "default", "active", 0n],
    ["dan-token-10", "default", "disabled", 0n],
  ]);
  assert.equal(plan.tokens[0].token.keyHash, sha256Hex(`sk-${"k".repeat(48)}`));
  assert.match(plan.notes.join("\n"), /group 'auto'/);
  assert.deepEqual(plan.skipped.map((s) => s.reason), ["no key"]);
});

test("channels: models come from abilities when the channel lists none; mapping kept for imported models only", () => {
  const channel = { id: 3, type: 43, name: "", keys: ["k"], status: 3, baseUrl: "https://api.deepseek.com/", models: [], groups: [], priority: -1, weight: 2, modelMapping: '{"deepseek-chat":"deepseek-v3","gone":"x"}' };
  const plan = planImport(data({
    channels: [channel],
    abilities: [{ group: "default", model: "deepseek-chat", channelId: 3 }],
    options: options({ ModelRatio: { "deepseek-chat": 0.135 } }),
  }));
  assert.deepEqual(plan.channels, [{
    name: "channel-3", protocol: "openai", base_url: "https://api.deepseek.com", keys: ["k"], groups: ["default"], models: ["deepseek-chat"],
    model_map: { "deepseek-chat": "deepseek-v3" }, priority: -1, weight: 2, status: "disabled",
  }]);
  assert.deepEqual(plan.models.get("deepseek-chat"), { price: { input: 0.27, output: 0.27 } });
});
