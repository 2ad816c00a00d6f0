// The sliding window itself is checked by the limiter contract (test/contracts/limiter.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { describeWindow } from "../../src/pipeline/stages/limits.js";

test("windows are described the way the 429 message states them", () => {
  assert.equal(describeWindow({ max: 1, perMs: 60_000 }), "1 minute");
  assert.equal(describeWindow({ max: 1, perMs: 300_000 }), "5 minutes");
  assert.equal(describeWindow({ max: 1, perMs: 30_000 }), "30 seconds");
  assert.equal(describeWindow({ max: 1, perMs: 3_600_000 }), "1 hour");
});
