// The sliding window itself is checked by the limiter contract (test/contracts/limiter.ts),
// the held limits by the admitter contract (test/contracts/admitter.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { compileSource, ConfigError } from "../../src/config/index.js";
import { describeWindow } from "../../src/pipeline/rate-windows.js";

test("windows are described the way the 429 message states them", () => {
  assert.equal(describeWindow({ max: 1, perMs: 60_000 }), "1 minute");
  assert.equal(describeWindow({ max: 1, perMs: 300_000 }), "5 minutes");
  assert.equal(describeWindow({ max: 1, perMs: 30_000 }), "30 seconds");
  assert.equal(describeWindow({ max: 1, perMs: 3_600_000 }), "1 hour");
});

test("the held limits compile from gateway.yaml; a bad value or an unknown key is refused naming it", () => {
  const yaml = (limits: string, groupLimits = "{ tokens_per_minute: 2000000 }", modelLimits = "{ request_rate: { max: 1000, per: 1m } }") => `
limits: ${limits}
groups:
  default: { multiplier: 1, limits: ${groupLimits} }
users: { alice: { credit: 1, groups: [default] } }
tokens: [{ name: t, key: sk-abcdefghijklmnop, user: alice, group: default }]
channels: [{ name: c, protocol: openai, base_url: "http://127.0.0.1:1", keys: [k], groups: [default], models: [m] }]
models:
  m: { price: { input: 1, output: 1 }, limits: ${modelLimits} }
`;
  const { runtime } = compileSource(yaml("{ tokens_per_minute: 200000, concurrent: 20 }"), { path: "gateway.yaml", env: {} });
  assert.deepEqual(runtime.limits, { requestRate: undefined, totalRequests: undefined, tokensPerMinute: 200000, concurrent: 20 });
  assert.equal(runtime.groups.get("default")!.tokensPerMinute, 2_000_000);
  assert.deepEqual(runtime.models.get("m")!.requestRate, { max: 1000, perMs: 60_000 });
  const refused = (text: string, pattern: RegExp) => assert.throws(() => compileSource(text, { path: "gateway.yaml", env: {} }),
    (err: unknown) => err instanceof ConfigError && pattern.test(err.message));
  refused(yaml("{ tokens_per_minute: 0 }"), /tokens_per_minute/);
  refused(yaml("{ concurrent: 1.5 }"), /concurrent/);
  refused(yaml("{}", "{ request_rate: { max: 1, per: 1m } }"), /request_rate/);
  refused(yaml("{}", "{}", "{ tokens_per_minute: 5 }"), /tokens_per_minute/);
});
