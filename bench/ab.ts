// A/B of two compiled builds of the gateway under the same load, alternating rounds so
// drift falls on both alike. Usage: AB_A=/abs/distA AB_B=/abs/distB npx tsx bench/ab.ts
// (copies of dist/ built from the two versions; the same path twice with AB_ARGS_A /
// AB_ARGS_B compares node flags). AB_ROUNDS (4), AB_S (5 s per round).
import { execFileSync } from "node:child_process";
import { Child } from "./lib/ipc.js";
import { measureLoad } from "./lib/load.js";
import { median, percentile, sorted } from "./lib/stats.js";

execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" });
const fake = await Child.start({ entry: "fake.ts", cpu: 0 });
const flags = (v: string | undefined) => (v ?? "").split(" ").filter(Boolean);
const builds = { A: process.env.AB_A!, B: process.env.AB_B! };
const kids = {
  A: await Child.start({ entry: "gateway.ts", args: [fake.url], cpu: 1, nodeArgs: flags(process.env.AB_ARGS_A), env: { BENCH_LIB: builds.A, GATEWAY_LOG_LEVEL: "info" } }),
  B: await Child.start({ entry: "gateway.ts", args: [fake.url], cpu: 1, nodeArgs: flags(process.env.AB_ARGS_B), env: { BENCH_LIB: builds.B, GATEWAY_LOG_LEVEL: "info" } }),
};
const rounds = Number(process.env.AB_ROUNDS ?? 4);
const out: Record<"A" | "B", number[]> = { A: [], B: [] };
const p99s: Record<"A" | "B", number[]> = { A: [], B: [] };
for (let r = 0; r < rounds; r++) {
  for (const k of (r % 2 ? ["B", "A"] : ["A", "B"]) as ("A" | "B")[]) {
    const run = await measureLoad(kids[k], fake, { connections: 50, durationS: Number(process.env.AB_S ?? 5), warmupS: 1 });
    out[k].push((1e6 * run.targetCpuS) / run.requests);
    p99s[k].push(percentile(sorted(run.latencies), 99));
  }
}
for (const k of ["A", "B"] as const) console.log(`${k} ${builds[k]}: µs/req ${out[k].map((v) => v.toFixed(1)).join(" ")} (median ${median(out[k]).toFixed(1)}), p99 median ${median(p99s[k]).toFixed(2)} ms`);
await kids.A.stop(); await kids.B.stop(); await fake.stop();
