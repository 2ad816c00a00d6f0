// `npx tsx bench/quick.ts`: one target under the bench's load, for quick looks while
// optimising (the full comparison is `npm run bench`). Uses the compiled dist/ as is (run
// `npm run build` first). Settings (env): QUICK_TARGET=gateway|bare|transport,
// QUICK_ROUNDS (2), QUICK_S (8 s per round), QUICK_RATE (a fixed offered req/s, paced
// open-loop; default as fast as possible), QUICK_NODE_ARGS (e.g. "--trace-gc-nvp" or
// "--cpu-prof --cpu-prof-dir=/tmp/p"), QUICK_ENV ("K=V,K=V" for the target, e.g.
// BENCH_HEAP_PROFILE=<file>: see children/gateway.ts), QUICK_MAINONLY=1 (pin only the
// target's main thread to CPU 1; its helper threads may run on either CPU), QUICK_STREAM=1
// (streamed chat requests instead of JSON ones), QUICK_CONNECTIONS (50; 1 for the
// one-connection latency).
import { execFileSync } from "node:child_process";
import { Child } from "./lib/ipc.js";
import { measureLoad, streamRequestBody } from "./lib/load.js";
import { measurePaced } from "./lib/paced.js";
import { int, ms, percentile, sorted } from "./lib/stats.js";

execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" });
const entries = { gateway: "gateway.ts", bare: "bare-proxy.ts", transport: "transport.ts" } as const;
const entry = entries[(process.env.QUICK_TARGET ?? "gateway") as keyof typeof entries];
if (!entry) throw new Error(`QUICK_TARGET must be one of ${Object.keys(entries).join(", ")}`);
const extraEnv = Object.fromEntries((process.env.QUICK_ENV ?? "").split(",").filter(Boolean).map((kv) => kv.split("=")));
const nodeArgs = (process.env.QUICK_NODE_ARGS ?? "").split(" ").filter(Boolean);
const mainOnly = process.env.QUICK_MAINONLY === "1";
const rate = process.env.QUICK_RATE ? Number(process.env.QUICK_RATE) : undefined;
const stream = process.env.QUICK_STREAM === "1";

const fake = await Child.start({ entry: "fake.ts", cpu: 0 });
const target = await Child.start({ entry, args: [fake.url], cpu: mainOnly ? undefined : 1, nodeArgs, env: { GATEWAY_LOG_LEVEL: "info", ...extraEnv } });
for (let r = 0; r < Number(process.env.QUICK_ROUNDS ?? 2); r++) {
  if (mainOnly) {
    // Threads started since (the gateway's usage-log writer) inherit the main thread's CPU.
    execFileSync("taskset", ["-a", "-p", "-c", "0,1", String(target.pid)], { stdio: "ignore" });
    execFileSync("taskset", ["-p", "-c", "1", String(target.pid)], { stdio: "ignore" });
  }
  const settings = { connections: Number(process.env.QUICK_CONNECTIONS ?? 50), durationS: Number(process.env.QUICK_S ?? 8), warmupS: 2, body: stream ? streamRequestBody : undefined };
  const run = rate ? await measurePaced(target, fake, { ...settings, rate }) : await measureLoad(target, fake, settings);
  const lat = sorted(run.latencies);
  console.log(`${entry}: ${int(run.requests / run.seconds)} req/s, p50 ${ms(percentile(lat, 50))} p99 ${ms(percentile(lat, 99))} ms, ` +
    `CPU ${((1e6 * run.targetCpuS) / run.requests).toFixed(1)} µs/req (${Math.round((100 * run.targetCpuS) / run.seconds)} %)`);
}
await target.stop();
await fake.stop();
