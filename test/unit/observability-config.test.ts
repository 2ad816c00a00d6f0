// The observability keys of gateway.yaml (metrics.listen, log.level) and the pieces that
// keep the request log and metric labels bounded and secret-free: model labels, error
// classes, request-line levels and the batching request log.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSource, ConfigError } from "../../src/config/index.js";
import { modelLabel, upstreamErrorClass } from "../../src/observability/metrics.js";
import { RequestLog, requestLevel } from "../../src/observability/request-log.js";
import { minimalConfig } from "../helpers/minimal-config.js";

const minimal = minimalConfig;

const build = (text: string) => compileSource(text, { path: "test.yaml", env: {}, generation: 1 }).runtime;

function issuesOf(text: string): string[] {
  try {
    build(text);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.issues.map((i) => `${i.path}: ${i.message}`);
  }
  return assert.fail("expected the config to be refused");
}

test("metrics.listen and log.level compile; omitted, neither is set", () => {
  const plain = build(minimal);
  assert.equal(plain.metricsListen, undefined);
  assert.equal(plain.logLevel, undefined);
  const set = build(`${minimal}metrics: { listen: "127.0.0.1:9464" }\nlog: { level: warn }\n`);
  assert.deepEqual(set.metricsListen, { host: "127.0.0.1", port: 9464 });
  assert.equal(set.logLevel, "warn");
  assert.deepEqual(build(`${minimal}metrics: { listen: "[::1]:9464" }\n`).metricsListen, { host: "::1", port: 9464 });
});

test("a bad metrics.listen or log.level is refused, naming the key", () => {
  assert.match(issuesOf(`${minimal}metrics: { listen: "nine" }\n`).join("\n"), /metrics\.listen: invalid listen address "nine"/);
  assert.match(issuesOf(`${minimal}server: { listen: "127.0.0.1:9000" }\nmetrics: { listen: "127.0.0.1:9000" }\n`).join("\n"),
    /metrics\.listen: must differ from server\.listen/);
  assert.match(issuesOf(`${minimal}log: { level: loud }\n`).join("\n"), /log\.level: must be one of debug, info, warn, error, off/);
  assert.match(issuesOf(`${minimal}log: { levle: warn }\n`).join("\n"), /unknown key "levle" \(did you mean "level"\?\)/);
});

test("model labels: declared names as they are, anything else as one value", () => {
  const models = new Map([["gpt-4o-mini", {}]]);
  assert.equal(modelLabel(models, "gpt-4o-mini"), "gpt-4o-mini");
  assert.equal(modelLabel(models, "made-up-by-a-client"), "other");
  assert.equal(modelLabel(models, undefined), "");
});

test("upstream error classes", () => {
  const cases: [string, string | undefined][] = [
    ["200", undefined], ["101", undefined], ["aborted", undefined], ["connect", "connect"], ["reset", "connect"],
    ["timeout", "timeout"], ["429", "rate_limited"], ["401", "auth"], ["403", "auth"], ["400", "client"], ["404", "client"],
    ["500", "server"], ["503", "server"], ["broken_answer", "broken_answer"],
  ];
  for (const [outcome, cls] of cases) assert.equal(upstreamErrorClass(outcome), cls, outcome);
});

test("request lines: level by status, filtered by log.level, one write per event-loop turn", async () => {
  assert.equal(requestLevel(200), "info");
  assert.equal(requestLevel(499), "warn");
  assert.equal(requestLevel(502), "error");
  const writes: string[] = [];
  const requestLog = new RequestLog((text) => writes.push(text));
  assert.equal(requestLog.enabled("info", "warn"), false);
  assert.equal(requestLog.enabled("error", "warn"), true);
  assert.equal(requestLog.enabled("error", "off"), false);
  requestLog.add("info", { requestId: "a", path: "/v1/chat/completions", protocol: "chat-completions", status: 200, durationMs: 1.5, cost: "0.0015" });
  requestLog.add("warn", { requestId: "b", path: "/x", protocol: "unknown", status: 404, durationMs: 0.2 });
  assert.equal(writes.length, 0, "written off the request's path");
  await new Promise((r) => setImmediate(r));
  assert.equal(writes.length, 1);
  const lines = writes[0].trimEnd().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(lines.map((l) => [l.level, l.msg, l.requestId, l.status]), [["info", "request", "a", 200], ["warn", "request", "b", 404]]);
  assert.equal(lines[0].cost, "0.0015");
  assert.ok(!("token" in lines[1]), "absent fields are left out");
});
