// Where a request's time goes at one connection: the bare proxy and one or two gateway
// builds in alternating rounds (p50 latency, wall and target CPU µs per request: CPU below
// the wall time is time spent waiting), and a timeline of the gateway's requests from a
// traced copy of build A and of the bare proxy (bench/children/trace.ts): medians of each
// step, in µs after the request's start, and of the gap between one answer's finish and the
// next request.
// Usage: ONE_A=/abs/dist [ONE_B=/abs/dist] npx tsx bench/one-conn.ts
// ONE_ROUNDS (3), ONE_S (3 s per measurement).
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Child } from "./lib/ipc.js";
import { measureLoad } from "./lib/load.js";
import { median, percentile, sorted } from "./lib/stats.js";
import { steps, type TraceFile } from "./children/trace.js";

execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" });
const rounds = Number(process.env.ONE_ROUNDS ?? 3);
const seconds = Number(process.env.ONE_S ?? 3);
const traceFile = (k: string) => join(tmpdir(), `one-conn-trace-${process.pid}-${k}.json`);
const fake = await Child.start({ entry: "fake.ts", cpu: 0 });
const gateway = (lib: string, env: Record<string, string> = {}) =>
  Child.start({ entry: "gateway.ts", args: [fake.url], cpu: 1, env: { BENCH_LIB: lib, GATEWAY_LOG_LEVEL: "info", ...env } });
const kids: Record<string, Child> = { bare: await Child.start({ entry: "bare-proxy.ts", args: [fake.url], cpu: 1 }) };
kids.A = await gateway(process.env.ONE_A!);
if (process.env.ONE_B) kids.B = await gateway(process.env.ONE_B);
kids["A+trace"] = await gateway(process.env.ONE_A!, { BENCH_TRACE: traceFile("A") });
kids["bare+trace"] = await Child.start({ entry: "bare-proxy.ts", args: [fake.url], cpu: 1, env: { BENCH_TRACE: traceFile("bare") } });

interface Round { p50: number; wallUs: number; cpuUs: number; stolen: number }
const results: Record<string, Round[]> = Object.fromEntries(Object.keys(kids).map((k) => [k, []]));
const names = Object.keys(kids);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? names : [...names].reverse();
  for (const k of order) {
    const run = await measureLoad(kids[k], fake, { connections: 1, durationS: seconds, warmupS: 1 });
    results[k].push({
      p50: percentile(sorted(run.latencies), 50), wallUs: (1e6 * run.seconds) / run.requests,
      cpuUs: (1e6 * run.targetCpuS) / run.requests, stolen: run.stolen,
    });
  }
  process.stderr.write(`round ${r + 1}/${rounds} done\n`);
}
for (const k of names) await kids[k].stop();
await fake.stop();

const f = (v: number, d = 0) => v.toFixed(d);
console.log(`one connection, medians of ${rounds} rounds of ${seconds} s`);
console.log("target\tp50 µs\twall µs/req\tCPU µs/req\tCPU share\tsteal %\trounds p50 µs");
for (const k of names) {
  const m = (g: (x: Round) => number) => median(results[k].map(g));
  console.log([k, f(m((x) => x.p50) * 1000), f(m((x) => x.wallUs)), f(m((x) => x.cpuUs)), f(m((x) => x.cpuUs / x.wallUs), 2),
    f(100 * Math.max(...results[k].map((x) => x.stolen))), results[k].map((x) => f(x.p50 * 1000)).join(" ")].join("\t"));
}
for (const k of ["bare", "A"]) {
  const trace = JSON.parse(readFileSync(traceFile(k), "utf8")) as TraceFile;
  rmSync(traceFile(k), { force: true });
  console.log(`\n${k}'s timeline (${trace.requests} requests traced, warm-ups included): median µs after the request's start`);
  let previous = 0;
  for (const s of steps) {
    const v = trace.sinceStart[s];
    if (v.length === 0) continue;
    const at = median(v);
    console.log(`${s.padEnd(16)}\t${f(at)}\t(+${f(at - previous)})\tp90 ${f(percentile(sorted(v), 90))}\tn=${v.length}`);
    previous = at;
  }
  console.log(`gap from a finish to the next start: median ${f(median(trace.gaps))} µs, p90 ${f(percentile(sorted(trace.gaps), 90))}`);
}
