// Prints the soak's figures: throughput per route cell, outcomes (errors vs expected),
// reloads, the gateway's own warnings, RSS over time with the flatness verdict, and the
// billing checks with PASS/FAIL.

import type { Check, LogFacts } from "./soak-checks.js";
import type { Flatness, Sample } from "./soak-monitor.js";
import type { TrafficTally } from "./soak-traffic.js";

const mib = (b: number | undefined) => (b === undefined || !Number.isFinite(b) ? "–" : (b / 2 ** 20).toFixed(1));
const pad = (s: string | number, n: number) => String(s).padEnd(n);
const lpad = (s: string | number, n: number) => String(s).padStart(n);

export function printHeader(lines: readonly string[]): void {
  console.log(`\n=== soak ===`);
  for (const l of lines) console.log(l);
}

export function printTraffic(t: TrafficTally, seconds: number): void {
  console.log(`\n--- throughput (${seconds.toFixed(1)} s of traffic) ---`);
  console.log(`all: ${t.total} requests, ${(t.total / seconds).toFixed(1)} req/s; complete answers ${t.complete} (${(t.complete / seconds).toFixed(1)}/s)`);
  console.log(`${pad("protocol mode body", 40)}${lpad("requests", 9)}${lpad("req/s", 8)}${lpad("complete", 9)}${lpad("aborted", 8)}${lpad("malformed", 10)}${lpad("errors", 7)}`);
  for (const [key, c] of [...t.cells].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`${pad(key, 40)}${lpad(c.requests, 9)}${lpad((c.requests / seconds).toFixed(1), 8)}${lpad(c.complete, 9)}${lpad(c.aborted, 8)}${lpad(c.malformed, 10)}${lpad(c.errors, 7)}`);
  }
  console.log(`\n--- errors by kind (expected: none) ---`);
  if (t.errors.size === 0) console.log("none");
  for (const [kind, n] of [...t.errors].sort((a, b) => b[1] - a[1])) {
    console.log(`${lpad(n, 7)}  ${kind}   e.g. ${(t.examples.get(kind) ?? []).join(", ")}`);
  }
  console.log(`\n--- expected outcomes (client aborts, malformed bodies' 400s) ---`);
  for (const [kind, n] of [...t.expected].sort((a, b) => b[1] - a[1])) console.log(`${lpad(n, 7)}  ${kind}`);
}

export function printLines(title: string, lines: readonly string[]): void {
  console.log(`\n--- ${title} ---`);
  for (const l of lines) console.log(l);
}

/** RSS table: one row per `rowEveryS` seconds, with the request rate since the previous row. */
export function printRss(samples: readonly Sample[], flat: Flatness | undefined, rowEveryS: number): void {
  console.log(`\n--- gateway memory over time ---`);
  console.log(`${lpad("t (s)", 7)}${lpad("RSS MiB", 9)}${lpad("heap MiB", 10)}${lpad("req/s", 8)}${lpad("in flight", 10)}`);
  let last: Sample | undefined;
  samples.forEach((s, i) => {
    const isLast = i === samples.length - 1;
    if (last && s.t - last.t < rowEveryS - 0.5 && !isLast) return;
    const rate = last ? (s.requests - last.requests) / (s.t - last.t) : 0;
    console.log(`${lpad(s.t.toFixed(0), 7)}${lpad(mib(s.rssBytes), 9)}${lpad(mib(s.heapUsedBytes), 10)}${lpad(last ? rate.toFixed(0) : "–", 8)}${lpad(s.inflight ?? "–", 10)}`);
    last = s;
  });
  if (!flat) {
    console.log("RSS flatness: too few samples to judge");
    return;
  }
  console.log(`RSS after warm-up (first ${flat.warmupEndS.toFixed(0)} s): middle third max ${mib(flat.middleMaxBytes)} MiB, ` +
    `last third max ${mib(flat.lastMaxBytes)} MiB (${(100 * flat.growth).toFixed(1)} %), slope ${mib(flat.slopeBytesPerMin)} MiB/min → ` +
    `${flat.flat ? "flat" : "GROWING"}`);
  console.log(`heap in use, lowest: middle third ${mib(flat.middleHeapFloorBytes)} MiB, last third ${mib(flat.lastHeapFloorBytes)} MiB; ` +
    `peak RSS ${mib(Math.max(...samples.map((s) => s.rssBytes)))} MiB`);
}

export function printLog(facts: LogFacts): void {
  console.log(`\n--- usage log ---`);
  console.log(`${facts.entries} entries, Σ cost ${facts.sumNano} nano; ${facts.estimated} estimated (${facts.estimatedFromClientAborts} of requests the client left)`);
  for (const [k, n] of [...facts.byStatus].sort((a, b) => b[1] - a[1])) console.log(`${lpad(n, 7)}  ${k}`);
}

/** Prints the checks; returns whether none failed. */
export function printChecks(checks: readonly Check[]): boolean {
  console.log(`\n--- checks ---`);
  for (const c of checks) {
    const verdict = c.pass === undefined ? "SKIP" : c.pass ? "PASS" : "FAIL";
    console.log(`${verdict}  ${c.name}: ${c.detail}`);
  }
  return checks.every((c) => c.pass !== false);
}
