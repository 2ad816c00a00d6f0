import assert from "node:assert/strict";
import { test } from "node:test";
import client from "prom-client";
import { Histogram, registry, Tally } from "../../src/observability/metrics.js";

test("Histogram renders cumulative buckets, +Inf, sum and count per label set", async () => {
  const h = new Histogram("test_histogram_seconds", "A test histogram.", ["route", "status"], [0.01, 0.1, 1]);
  h.observe(0.005, "chat", "200");
  h.observe(0.01, "chat", "200"); // on a bound: counted in that bucket (le is inclusive)
  h.observe(0.5, "chat", "200");
  h.observe(7, "chat", "200"); // beyond the last bound: only +Inf
  h.observe(0.2, "chat", "500");
  const text = await registry.getSingleMetricAsString("test_histogram_seconds");
  const lines = text.split("\n");
  assert.equal(lines[0], "# HELP test_histogram_seconds A test histogram.");
  assert.equal(lines[1], "# TYPE test_histogram_seconds histogram");
  const ok = (le: string) => `test_histogram_seconds_bucket{route="chat",status="200",le="${le}"}`;
  assert.ok(lines.includes(`${ok("0.01")} 2`));
  assert.ok(lines.includes(`${ok("0.1")} 2`));
  assert.ok(lines.includes(`${ok("1")} 3`));
  assert.ok(lines.includes(`${ok("+Inf")} 4`));
  assert.ok(lines.includes(`test_histogram_seconds_sum{route="chat",status="200"} 7.515`));
  assert.ok(lines.includes(`test_histogram_seconds_count{route="chat",status="200"} 4`));
  assert.ok(lines.includes(`test_histogram_seconds_bucket{route="chat",status="500",le="0.1"} 0`));
  assert.ok(lines.includes(`test_histogram_seconds_bucket{route="chat",status="500",le="1"} 1`));
  h.reset();
  assert.equal((await registry.getSingleMetricAsString("test_histogram_seconds")).split("\n").length, 2);
  registry.removeSingleMetric("test_histogram_seconds");
});

test("Tally keeps each label set apart and moves only new increments into the counter on each scrape", async () => {
  const tally = new Tally();
  new client.Counter({
    name: "test_tally_total", help: "A test counter.", labelNames: ["model", "kind"], registers: [registry],
    collect() {
      tally.drainInto(this);
    },
  });
  tally.add(3, "m", "input");
  tally.add(2, "m", "output");
  tally.add(4, "m", "input");
  tally.add(1, "n", "input");
  const read = async () => (await registry.getSingleMetricAsString("test_tally_total")).split("\n");
  let lines = await read();
  assert.ok(lines.includes('test_tally_total{model="m",kind="input"} 7'));
  assert.ok(lines.includes('test_tally_total{model="m",kind="output"} 2'));
  assert.equal(lines.filter((l) => l.startsWith("test_tally_total{")).length, 3);
  tally.add(1, "m", "output");
  lines = await read(); // cumulative across scrapes, each increment counted once
  assert.ok(lines.includes('test_tally_total{model="m",kind="input"} 7'));
  assert.ok(lines.includes('test_tally_total{model="m",kind="output"} 3'));
  registry.removeSingleMetric("test_tally_total");
});
