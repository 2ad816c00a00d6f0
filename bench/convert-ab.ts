// The converted-stream lanes of `npm run bench` alone, for two builds in alternating runs:
// each run starts the build's gateway (pinned like the bench's) beside fake OpenAI and
// Anthropic upstreams and prints the gateway's CPU per stream of each lane and the ratios
// to the pass-through lane. Usage: AB_A=/abs/distA AB_B=/abs/distB npx tsx bench/convert-ab.ts
// (RUNS=2 per build, BENCH_CONVERT_STREAMS=900, BENCH_CONVERT_BATCHES=12).
import { execFileSync } from "node:child_process";
import { Child } from "./lib/ipc.js";
import { measureConvert } from "./lib/convert.js";
import { convertModel, model } from "./lib/shared.js";
import { median } from "./lib/stats.js";

execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" });
const builds = { A: process.env.AB_A!, B: process.env.AB_B! };
const runs = Number(process.env.RUNS ?? 2);
const streams = Number(process.env.BENCH_CONVERT_STREAMS ?? 900);
const batches = Number(process.env.BENCH_CONVERT_BATCHES ?? 12);
const fakeEnv = { BENCH_CHUNK_DELAY_MS: "1" };
const openai = await Child.start({ entry: "fake.ts", cpu: 0, env: fakeEnv });
const anthropic = await Child.start({ entry: "fake.ts", cpu: 0, env: { ...fakeEnv, BENCH_FAKE_PROTOCOL: "anthropic" } });
const ratios: Record<"A" | "B", { conv: number[]; resp: number[] }> = { A: { conv: [], resp: [] }, B: { conv: [], resp: [] } };
for (let r = 0; r < runs; r++) {
  for (const k of (r % 2 === 0 ? ["A", "B"] : ["B", "A"]) as ("A" | "B")[]) {
    const gateway = await Child.start({ entry: "gateway.ts", args: [openai.url, anthropic.url], cpu: 1, env: { BENCH_LIB: builds[k], GATEWAY_LOG_LEVEL: "info" } });
    const run = await measureConvert(gateway, { openai, anthropic }, { pass: model, conv: convertModel },
      { streams, concurrency: 10, warmup: 100, batches });
    await gateway.stop();
    const per = (p: { gatewayCpuUs: number; streams: number }) => p.gatewayCpuUs / p.streams;
    const [pass, conv, resp] = [per(run.pass), per(run.conv), per(run.resp)];
    ratios[k].conv.push(conv / pass);
    ratios[k].resp.push(resp / pass);
    console.log(`run ${r + 1} ${k}: µs/stream pass ${pass.toFixed(0)}, converted ${conv.toFixed(0)} (${(conv / pass).toFixed(2)}×), responses ${resp.toFixed(0)} (${(resp / pass).toFixed(2)}×)`);
  }
}
for (const k of ["A", "B"] as const) console.log(`${k}: converted ${median(ratios[k].conv).toFixed(2)}×, responses ${median(ratios[k].resp).toFixed(2)}× (medians of ${runs} runs)`);
await Promise.all([openai.stop(), anthropic.stop()]);
