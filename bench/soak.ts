// `npm run soak`: minutes of mixed traffic against a real `gateway` process (every client
// protocol, pass-through and converted, JSON and streams, client aborts, malformed bodies,
// a config reload every few seconds), then the verdicts: errors by kind, the usage log
// against the spend to the nano-unit, nothing left reserved, RSS flat after warm-up.
//
// While traffic runs, the usage log is read as `gateway logs` reads it every few seconds:
// every answer a client received must be in it within SOAK_LAG_BOUND_MS (2000), and the
// journal on disk must stay within its bound. Once traffic stops, with the gateway still up,
// the log, `gateway usage` and the spend counters must agree to the nano-unit.
//
// Settings: `--duration 5m` (or 300s; env SOAK_S, seconds: 300), SOAK_CONCURRENCY (64 client
// loops: enough to keep the gateway at its full rate on a 2-core host),
// SOAK_STREAM_SHARE (0.5), SOAK_ABORT_SHARE (0.08), SOAK_MALFORMED_SHARE (0.04),
// SOAK_RELOAD_MS (3000), SOAK_SAMPLE_MS (3000), SOAK_LAG_CHECK_MS (5000), SOAK_MAX_DELAY_MS
// (2: upstream hold before answering), SOAK_CHUNK_DELAY_MS (1: most ms between stream events), SOAK_CLIENT_TIMEOUT_MS
// (30000: a request unanswered this long is a "client-timeout" error), SOAK_KEEP=1 (keep the
// temp folder: gateway.yaml, the SQLite store, gateway.log), SOAK_GATEWAY_ROOT (soak another
// checkout of the gateway, e.g. `git archive HEAD` unpacked with node_modules linked).
// Exits 1 when a check fails.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { checkNothingReserved, checkTotalsAtRest, checkUsageLog, waitIdle, type Check } from "./lib/soak-checks.js";
import { journalFootprint, startLagMonitor } from "./lib/soak-lag.js";
import { JOURNAL_BACKLOG_BYTES } from "../src/state/sqlite.js";
import { SEGMENT_BYTES } from "../src/state/sqlite-journal.js";
import { metricSum, scrape } from "./lib/soak-metrics.js";
import { judgeFlatness, startMonitor } from "./lib/soak-monitor.js";
import { startReloads } from "./lib/soak-reloader.js";
import { printChecks, printHeader, printLines, printLog, printRss, printTraffic } from "./lib/soak-report.js";
import { runTraffic, TrafficTally } from "./lib/soak-traffic.js";
import { gatewayRoot, startGatewayProcess, storeModule, type GatewayProcess } from "./lib/soak-gateway.js";
import { startSoakUpstreams } from "./lib/soak-upstreams.js";
import { renderConfig } from "./lib/soak-world.js";

const num = (name: string, fallback: number) => (process.env[name] !== undefined ? Number(process.env[name]) : fallback);
/** `--duration 90s`, `--duration 5m` or `--duration=300` (seconds). */
function durationArg(): number | undefined {
  const at = process.argv.findIndex((a) => a === "--duration" || a.startsWith("--duration="));
  if (at === -1) return undefined;
  const text = process.argv[at].includes("=") ? process.argv[at].split("=")[1] : process.argv[at + 1];
  const m = /^(\d+(?:\.\d+)?)(s|m)?$/.exec(text ?? "");
  if (!m) throw new Error(`--duration ${text}: expected seconds (300, 300s) or minutes (5m)`);
  return Number(m[1]) * (m[2] === "m" ? 60 : 1);
}
const settings = {
  seconds: durationArg() ?? num("SOAK_S", 300),
  concurrency: num("SOAK_CONCURRENCY", 64),
  streamShare: num("SOAK_STREAM_SHARE", 0.5),
  abortShare: num("SOAK_ABORT_SHARE", 0.08),
  malformedShare: num("SOAK_MALFORMED_SHARE", 0.04),
  reloadMs: num("SOAK_RELOAD_MS", 3000),
  sampleMs: num("SOAK_SAMPLE_MS", 3000),
  lagCheckMs: num("SOAK_LAG_CHECK_MS", 5000),
  lagBoundMs: num("SOAK_LAG_BOUND_MS", 2000),
  maxDelayMs: num("SOAK_MAX_DELAY_MS", 2),
  chunkDelayMs: num("SOAK_CHUNK_DELAY_MS", 1),
  clientTimeoutMs: num("SOAK_CLIENT_TIMEOUT_MS", 30_000),
  keep: process.env.SOAK_KEEP === "1",
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const dir = await mkdtemp(join(os.tmpdir(), "gateway-soak-"));
const file = join(dir, "gateway.yaml");
const dbPath = join(dir, "soak.db");
const upstreams = await startSoakUpstreams({ maxDelayMs: settings.maxDelayMs, maxChunkDelayMs: settings.chunkDelayMs, cacheShare: 0.3 });
let port = 0;
const render = (revision: number) => renderConfig({ port, dbPath, upstreams: upstreams.urls, revision });
const gateway = await startGatewayProcess({ file, cwd: dir, readyMs: 60_000, yaml: (p) => { port = p; return render(0); } });
const base = gateway.base;
const pid = gateway.proc.pid!;
let stopping = false;
let exitedEarly: string | undefined;
void gateway.exit.then((how) => { if (!stopping) exitedEarly = how; });

printHeader([
  `date ${new Date().toISOString()}; host ${os.cpus().length} vCPU ${os.cpus()[0]?.model ?? "?"}; Node ${process.version}`,
  `gateway ${gatewayRoot}, pid ${pid} at ${base.origin}, store ${dbPath}`,
  `settings: ${settings.seconds} s, ${settings.concurrency} client loops, streams ${settings.streamShare}, ` +
    `client aborts ${settings.abortShare}, malformed ${settings.malformedShare}, reload every ${settings.reloadMs} ms, ` +
    `upstream hold 0–${settings.maxDelayMs} ms, stream events 1–${1 + settings.chunkDelayMs} ms apart`,
]);

const startMetrics = await scrape(base);
const tally = new TrafficTally();
const monitor = startMonitor({ pid, base, everyMs: settings.sampleMs, requests: () => tally.total });
const { openSqliteStore } = await storeModule();
const lag = startLagMonitor({
  dbPath, everyMs: settings.lagCheckMs, boundMs: settings.lagBoundMs, take: () => tally.takeAnswers(),
  open: () => openSqliteStore(dbPath, { mustExist: true }),
});
const reloads = startReloads({ file, everyMs: settings.reloadMs, pid, render });
const trafficStarted = performance.now();
let stopped = false;
const stopTimer = setTimeout(() => {
  stopped = true;
  console.log("  stopping traffic: each client loop ends after its request in flight");
}, settings.seconds * 1000);
const progress = setInterval(() => {
  const s = (performance.now() - trafficStarted) / 1000;
  const last = monitor.samples[monitor.samples.length - 1];
  const disk = journalFootprint(dbPath);
  console.log(`  ${s.toFixed(0)} s: ${tally.total} requests, ${tally.complete} complete, ${[...tally.errors.values()].reduce((a, b) => a + b, 0)} errors, RSS ${last ? (last.rssBytes / 2 ** 20).toFixed(0) : "?"} MiB; ` +
    `log reads ${lag.report.reads}, ${lag.report.late} late, worst lag ${lag.report.worstLagMs} ms, SQLite behind ≤ ${lag.report.sqliteBehindMax} entries; journal ${(disk.journal / 2 ** 20).toFixed(1)} MiB, WAL ${(disk.wal / 2 ** 20).toFixed(1)} MiB`);
}, 15_000);

await runTraffic({
  base, concurrency: settings.concurrency, streamShare: settings.streamShare, abortShare: settings.abortShare,
  malformedShare: settings.malformedShare, timeoutMs: settings.clientTimeoutMs,
}, tally, () => stopped || exitedEarly !== undefined);
const trafficSeconds = (performance.now() - trafficStarted) / 1000;
console.log("  traffic stopped; checking the gateway at rest");
clearTimeout(stopTimer);
clearInterval(progress);
await lag.stop();
await reloads.stop();
await sleep(1000); // the last rewrite's debounced reload
monitor.stop();

const checks: Check[] = [];
/** Runs one check phase within `ms`; a phase that throws or overruns is a failed check. */
async function phase<T>(name: string, ms: number, run: () => Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`did not finish within ${ms / 1000} s`)), ms); });
  try {
    return await Promise.race([run(), overrun]);
  } catch (error) {
    checks.push({ name, pass: false, detail: String((error as Error)?.message ?? error) });
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

if (!exitedEarly) {
  const inflight = await phase("no request left in flight once traffic stopped", 15_000, () => waitIdle(base, 10_000));
  checks.push({
    name: "no request left in flight once traffic stopped", pass: inflight === undefined ? undefined : inflight <= 1,
    detail: `gateway_inflight_requests ${inflight ?? "absent"} (1 is the scrape itself)`,
  });
  checks.push(...(await phase("nothing left reserved", 90_000, () => checkNothingReserved(base, dbPath, tally))) ?? []);
  checks.push(...(await phase("totals at rest", 60_000, () => checkTotalsAtRest(dbPath))) ?? []);
}
const lagReport = lag.report;
checks.push({
  name: `usage log kept up: every answer in \`gateway logs\` within ${settings.lagBoundMs} ms, read every ${settings.lagCheckMs / 1000} s`,
  pass: lagReport.reads > 0 && lagReport.late === 0 && lagReport.errors.length === 0,
  detail: `${lagReport.checked} answers in ${lagReport.reads} reads: ${lagReport.late} late${lagReport.lateExamples.length ? ` (e.g. ${lagReport.lateExamples.join(", ")})` : ""}, ` +
    `${lagReport.missingWithinBound} missing from a read within the bound, worst lag ${lagReport.worstLagMs} ms` +
    `${lagReport.errors.length ? `; ${lagReport.errors.length} reads failed: ${lagReport.errors[0]}` : ""}`,
});
const journalBound = JOURNAL_BACKLOG_BYTES + SEGMENT_BYTES + 2 ** 20;
checks.push({
  name: "journal on disk bounded (backlog bound + one segment + 1 MiB for lines in flight)",
  pass: lagReport.journalMaxBytes <= journalBound,
  detail: `largest ${(lagReport.journalMaxBytes / 2 ** 20).toFixed(1)} MiB of ${(journalBound / 2 ** 20).toFixed(0)} MiB; WAL largest ${(lagReport.walMaxBytes / 2 ** 20).toFixed(1)} MiB`,
});
const endMetrics = exitedEarly ? "" : (await phase("final /metrics scrape", 10_000, () => scrape(base))) ?? "";

// Reloads: each rewrite must have been applied, none rejected.
const rewrites = [...reloads.done.values()].reduce((a, b) => a + b, 0);
const reloadDelta = (outcome: string) =>
  (metricSum(endMetrics, "gateway_config_reloads_total", { outcome }) ?? 0) - (metricSum(startMetrics, "gateway_config_reloads_total", { outcome }) ?? 0);
const applied = reloadDelta("applied");
checks.push({
  name: "every config rewrite reloaded, none rejected", pass: applied === rewrites && reloadDelta("rejected") === 0,
  detail: `${rewrites} rewrites (${[...reloads.done].map(([m, n]) => `${n} ${m}`).join(", ")}); gateway: ${applied} applied, ` +
    `${reloadDelta("unchanged")} unchanged, ${reloadDelta("rejected")} rejected`,
});
const costMetric = metricSum(endMetrics, "gateway_cost_total");

// SIGTERM: the gateway drains, flushes the usage log and exits 0.
console.log("  SIGTERM to the gateway; then reading its usage log");
stopping = true;
const exit = await stopGateway(gateway);
checks.push({
  name: "gateway up for the whole soak, exits 0 on SIGTERM", pass: !exitedEarly && exit === "code 0",
  detail: exitedEarly ? `exited during the soak: ${exitedEarly}` : `SIGTERM → ${exit}`,
});

const logResult = await phase("usage log read", 120_000, () => checkUsageLog(dbPath, tally));
checks.push(...(logResult?.checks ?? []));
checks.push({
  name: "no errors but the malformed bodies' 400s", pass: tally.errors.size === 0,
  detail: `${[...tally.errors.values()].reduce((a, b) => a + b, 0)} unexpected outcomes of ${tally.total} requests`,
});
const flat = judgeFlatness(monitor.samples);
checks.push({ name: "RSS flat after warm-up (last third's max ≤ middle third's + 10 %)", pass: flat?.flat, detail: flat ? `${(100 * flat.growth).toFixed(1)} %` : "too few samples" });
const logLevels = gatewayLogSummary(gateway.stderr());
checks.push({ name: "no error-level lines in the gateway's log", pass: (logLevels.get("error") ?? 0) === 0, detail: `${logLevels.get("error") ?? 0} error lines` });

printTraffic(tally, trafficSeconds);
printLines("upstreams and gateway", [
  `fronts passed ${upstreams.counts.forwarded} requests to the fakes; the gateway abandoned ${upstreams.counts.cutByGateway} before their answer ended`,
  `gateway_cost_total at the end: ${costMetric ?? "absent"} (float, for reference; the log sum is exact)`,
  ...[...logSummaryLines(gateway.stderr())],
]);
printRss(monitor.samples, flat, Math.max(settings.sampleMs / 1000, settings.seconds / 12));
const readMs = [...lagReport.readMs].sort((a, b) => a - b);
printLines("usage log while traffic ran", [
  `${lagReport.reads} reads as \`gateway logs\` reads (one every ${settings.lagCheckMs / 1000} s), ${lagReport.checked} answers checked; ` +
    `read time median ${readMs[Math.floor(readMs.length / 2)] ?? "–"} ms, max ${readMs.at(-1) ?? "–"} ms`,
  `answers missing from a read: ${lagReport.missingWithinBound} within ${settings.lagBoundMs} ms, ${lagReport.late} later; worst lag ${lagReport.worstLagMs} ms`,
  `SQLite alone (without the journal's tail) was at most ${lagReport.sqliteBehindMax} entries behind what a read showed`,
  `journal on disk at most ${(lagReport.journalMaxBytes / 2 ** 20).toFixed(1)} MiB, SQLite WAL at most ${(lagReport.walMaxBytes / 2 ** 20).toFixed(1)} MiB`,
]);
if (logResult) printLog(logResult.facts);
const ok = printChecks(checks);
console.log(`\n${ok ? "soak PASSED" : "soak FAILED"}`);

await upstreams.close();
if (settings.keep || !ok) {
  await writeFile(join(dir, "gateway.log"), gateway.stderr());
  console.log(`kept ${dir} (gateway.yaml, soak.db, gateway.log)`);
} else {
  await rm(dir, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);

/** SIGTERMs the gateway and waits (30 s at most, then SIGKILL) for it to exit. */
async function stopGateway(g: GatewayProcess): Promise<string> {
  if (!g.alive()) return "already exited";
  g.proc.kill("SIGTERM");
  const timer = setTimeout(() => g.proc.kill("SIGKILL"), 30_000);
  const how = await g.exit;
  clearTimeout(timer);
  return how;
}

/** Lines of the gateway's log by level. */
function gatewayLogSummary(stderr: string): Map<string, number> {
  const levels = new Map<string, number>();
  for (const line of stderr.split("\n")) {
    if (!line) continue;
    let level = "unparsed";
    try { level = String((JSON.parse(line) as { level?: unknown }).level ?? "unparsed"); } catch { /* not JSON */ }
    levels.set(level, (levels.get(level) ?? 0) + 1);
  }
  return levels;
}

/** The gateway's warning and error messages, counted, plus totals by level. */
function* logSummaryLines(stderr: string): Generator<string> {
  const byMsg = new Map<string, number>();
  for (const line of stderr.split("\n")) {
    if (!line) continue;
    let key: string;
    try {
      const j = JSON.parse(line) as { level?: string; msg?: string; error?: unknown };
      if (j.level !== "warn" && j.level !== "error") continue;
      const detail = typeof j.error === "string" ? `: ${j.error.split("\n").slice(0, 2).map((l) => l.trim()).join(" ").slice(0, 200)}` : "";
      key = `${j.level}: ${j.msg}${detail}`;
    } catch {
      key = `unparsed: ${line.slice(0, 160)}`;
    }
    byMsg.set(key, (byMsg.get(key) ?? 0) + 1);
  }
  yield `gateway log lines by level: ${[...gatewayLogSummary(stderr)].map(([l, n]) => `${l} ${n}`).join(", ")}`;
  for (const [msg, n] of [...byMsg].sort((a, b) => b[1] - a[1])) yield `${String(n).padStart(7)}  ${msg}`;
}
