// A/B of two compiled builds of the gateway under the same load, with the bare http-proxy-3
// pass-through measured in the same run as the reference, in alternating rounds so drift
// falls on all alike. Per round and target: non-stream chat throughput at 50 connections
// (requests/s, target CPU µs per request, p99), streamed chat throughput at 50 connections
// (streams/s, CPU µs per stream), and latency at 1 connection (p50, p99).
// Usage: AB_A=/abs/distA AB_B=/abs/distB npx tsx bench/ab.ts (copies of dist/ built from the
// two versions; the same path twice with AB_ARGS_A / AB_ARGS_B compares node flags, and
// AB_ENV_A / AB_ENV_B ("K=V,K=V") environment settings).
// AB_ROUNDS (4), AB_S (5 s per measurement), AB_CHAT_ONLY=1 (non-stream throughput only).
import { execFileSync } from "node:child_process";
import { Child } from "./lib/ipc.js";
import { measureLoad, streamRequestBody, type LoadRun } from "./lib/load.js";
import { median, percentile, sorted } from "./lib/stats.js";

type Target = "bare" | "A" | "B";

execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" });
const fake = await Child.start({ entry: "fake.ts", cpu: 0 });
const flags = (v: string | undefined) => (v ?? "").split(" ").filter(Boolean);
const builds = { A: process.env.AB_A!, B: process.env.AB_B! };
const envOf = (v: string | undefined) => Object.fromEntries((v ?? "").split(",").filter(Boolean).map((kv) => kv.split("=")));
const gateway = (k: "A" | "B") => Child.start({
  entry: "gateway.ts", args: [fake.url], cpu: 1, nodeArgs: flags(process.env[`AB_ARGS_${k}`]),
  env: { BENCH_LIB: builds[k], GATEWAY_LOG_LEVEL: "info", ...envOf(process.env[`AB_ENV_${k}`]) },
});
const kids: Record<Target, Child> = {
  bare: await Child.start({ entry: "bare-proxy.ts", args: [fake.url], cpu: 1 }),
  A: await gateway("A"),
  B: await gateway("B"),
};
const rounds = Number(process.env.AB_ROUNDS ?? 4);
const seconds = Number(process.env.AB_S ?? 5);
/** AB_CHAT_ONLY=1: only the non-stream throughput (quick looks while optimising). */
const chatOnly = process.env.AB_CHAT_ONLY === "1";

interface Round {
  readonly rps: number;
  readonly cpuUs: number;
  readonly p99: number;
  readonly streamsPerS: number;
  readonly streamCpuUs: number;
  readonly p50At1: number;
  readonly p99At1: number;
  readonly stolen: number;
}
const results: Record<Target, Round[]> = { bare: [], A: [], B: [] };

const perSecond = (run: LoadRun) => run.requests / run.seconds;
const cpuPer = (run: LoadRun) => (1e6 * run.targetCpuS) / Math.max(1, run.requests);

async function measure(k: Target, warm: boolean): Promise<Round> {
  const target = kids[k];
  const chat = await measureLoad(target, fake, { connections: 50, durationS: seconds, warmupS: warm ? 3 : 1 });
  if (chatOnly) {
    return { rps: perSecond(chat), cpuUs: cpuPer(chat), p99: percentile(sorted(chat.latencies), 99),
      streamsPerS: NaN, streamCpuUs: NaN, p50At1: NaN, p99At1: NaN, stolen: chat.stolen };
  }
  const stream = await measureLoad(target, fake, { connections: 50, durationS: seconds, warmupS: 1, body: streamRequestBody });
  const single = await measureLoad(target, fake, { connections: 1, durationS: seconds, warmupS: 1 });
  const latencies = sorted(single.latencies);
  return {
    rps: perSecond(chat), cpuUs: cpuPer(chat), p99: percentile(sorted(chat.latencies), 99),
    streamsPerS: perSecond(stream), streamCpuUs: cpuPer(stream),
    p50At1: percentile(latencies, 50), p99At1: percentile(latencies, 99),
    stolen: Math.max(chat.stolen, stream.stolen, single.stolen),
  };
}

const orders: Target[][] = [["bare", "A", "B"], ["B", "A", "bare"], ["A", "bare", "B"], ["B", "bare", "A"]];
for (let r = 0; r < rounds; r++) {
  for (const k of orders[r % orders.length]) results[k].push(await measure(k, r === 0));
  process.stderr.write(`round ${r + 1}/${rounds} done\n`);
}

const med = (k: Target, f: (x: Round) => number) => median(results[k].map(f));
const fmt = (v: number, digits = 1) => v.toFixed(digits);
const cols: [string, (x: Round) => number, number][] = [
  ["chat req/s", (x) => x.rps, 0], ["µs/req", (x) => x.cpuUs, 1], ["p99 ms", (x) => x.p99, 2],
  ["streams/s", (x) => x.streamsPerS, 0], ["µs/stream", (x) => x.streamCpuUs, 0],
  ["p50@1 ms", (x) => x.p50At1, 3], ["p99@1 ms", (x) => x.p99At1, 3], ["steal", (x) => 100 * x.stolen, 0],
];
console.log(`medians of ${rounds} rounds of ${seconds} s per measurement (A=${builds.A}, B=${builds.B})`);
console.log(["target", ...cols.map((c) => c[0])].join("\t"));
for (const k of ["bare", "A", "B"] as const) console.log([k, ...cols.map(([, f, d]) => fmt(med(k, f), d))].join("\t"));
for (const k of ["A", "B"] as const) {
  const ratio = (f: (x: Round) => number) => median(results[k].map((x, i) => f(x) / f(results.bare[i])));
  console.log(`${k} ÷ bare (median of per-round ratios): chat throughput ${fmt(ratio((x) => x.rps), 2)}, stream throughput ${fmt(ratio((x) => x.streamsPerS), 2)}`);
}
const paired = (f: (x: Round) => number) => median(results.B.map((x, i) => f(x) - f(results.A[i])));
console.log(`B − A (median of per-round differences): p50@1 ${fmt(paired((x) => x.p50At1), 3)} ms, p99@1 ${fmt(paired((x) => x.p99At1), 3)} ms, µs/req ${fmt(paired((x) => x.cpuUs), 1)}`);
for (const k of ["bare", "A", "B"] as const) {
  console.log(`${k} rounds: ` + results[k].map((x) => `${fmt(x.rps, 0)} req/s ${fmt(x.streamsPerS, 0)} st/s p50@1 ${fmt(x.p50At1, 3)}`).join(" | "));
}
await kids.A.stop(); await kids.B.stop(); await kids.bare.stop(); await fake.stop();
