// `npm run bench:kinds`: what a Bedrock channel costs the gateway against an Anthropic one,
// same run, same upstream answers. Six lanes of Messages requests (pass-through on all),
// plain and streamed, on three channels: `anthropic` (SSE), `bedrock` signing each request
// with SigV4, and `bedrock` sending a Bedrock API key (no signature). Each Bedrock stream's
// event-stream frames are decoded, checksums verified, into SSE. Batches rotate the lanes
// so drift falls on all alike; the gateway child's own CPU is read before and after each
// batch. Reports µs per request per lane (medians of the batches) and what the issue asks
// of a provider kind, all from the same run:
// - the per-request cost of signing: SigV4 − API key, plain and streamed;
// - the cost of a Bedrock stream against an SSE one: the API-key stream − the SSE stream
//   (the request made Bedrock's, its frames decoded and relayed; no signature);
// - the bound: a Bedrock stream relayed within 1.2× the CPU of an SSE pass-through, judged
//   on the API-key stream by the median of the batches' own ratios (each batch runs every
//   lane in turn, so the host's drift blurs that less than the ratio of the lanes' medians,
//   printed beside it); the signed stream's ratio is printed too, signature
//   included (bench/RESULTS.md says why the bound is read on the relay).
// Env: BENCH_KINDS_REQUESTS (per lane, default 3600), BENCH_KINDS_BATCHES (default 18),
// BENCH_SRC=1 (TypeScript sources instead of dist/), BENCH_KINDS_LANES and BENCH_KINDS_PROF
// (below), BENCH_KINDS_THREADS=1 (the gateway's CPU by thread: main, V8's GC and compiler
// workers, libuv, the store).

import { execFileSync } from "node:child_process";
import http from "node:http";
import { Child } from "./lib/ipc.js";
import { threadCpu } from "./lib/threads.js";
import { benchToken, streamText } from "./lib/shared.js";
import { median } from "./lib/stats.js";

const requests = Number(process.env.BENCH_KINDS_REQUESTS ?? 3600);
const batches = Number(process.env.BENCH_KINDS_BATCHES ?? 18);
const concurrency = 10;
const BOUND = 1.2;

type LaneKey = "ssePlain" | "bedrockPlain" | "keyPlain" | "sseStream" | "bedrockStream" | "keyStream";
const models = { sse: "bench-claude-sse", bedrock: "bench-claude-bedrock", bedrockKey: "bench-claude-bedrock-key" };

interface Lane {
  readonly key: LaneKey;
  readonly body: string;
  readonly stream: boolean;
  readonly agent: http.Agent;
  readonly perBatchUs: number[];
  /** BENCH_KINDS_THREADS=1: the gateway's CPU by thread name, summed over the batches. */
  readonly threadNs: Map<string, number>;
}

function lane(key: LaneKey, model: string, stream: boolean): Lane {
  return {
    key, stream, perBatchUs: [], threadNs: new Map(),
    body: JSON.stringify({ model, max_tokens: 64, stream, messages: [{ role: "user", content: "Tell me about foxes." }] }),
    agent: new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency }),
  };
}

/** The text of a Messages answer (SSE deltas joined, or the JSON's text), to check it. */
function textOf(body: string, stream: boolean): string {
  if (!stream) return (JSON.parse(body) as { content: { text: string }[] }).content[0].text;
  if (!body.includes("event: message_stop")) throw new Error(`stream without message_stop: ${body.slice(0, 300)}`);
  let text = "";
  for (const line of body.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const e = JSON.parse(line.slice(5)) as { type: string; delta?: { text?: string } };
    if (e.type === "error") throw new Error(`error event: ${line}`);
    if (e.type === "content_block_delta") text += e.delta?.text ?? "";
  }
  return text;
}

function once(url: URL, l: Lane): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: "POST", agent: l.agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(l.body), "x-api-key": benchToken, "anthropic-version": "2023-06-01" },
    }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => { body += c; });
      res.on("end", () => {
        try {
          if (res.statusCode !== 200) throw new Error(`${l.key}: ${res.statusCode} ${body.slice(0, 300)}`);
          const text = textOf(body, l.stream);
          if (l.stream && text !== streamText) throw new Error(`${l.key}: text ${JSON.stringify(text)} is not the upstream's`);
          resolve();
        } catch (error) {
          reject(error);
        }
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(l.body);
  });
}

/** CPU ns so far of each thread of process `pid`, summed by name: the main thread by its
 * id (Node 20 names most of its threads "node"), the others by name, or by id when unnamed. */
function threadCpuNs(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const [tid, t] of threadCpu(pid)) {
    const name = Number(tid) === pid ? "main" : t.name === "node" ? `thread ${tid}` : t.name;
    byName.set(name, (byName.get(name) ?? 0) + t.ns);
  }
  return byName;
}
const threads = process.env.BENCH_KINDS_THREADS === "1";

async function batch(url: URL, l: Lane, count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await once(url, l);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

// BENCH_LIB=<dir>: a build of the gateway made beforehand (A/B runs): nothing is built.
if (process.env.BENCH_SRC !== "1" && process.env.BENCH_LIB === undefined) {
  console.log("building dist/ (npm run build) so the gateway runs as compiled JavaScript");
  execFileSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
}
const upstream = await Child.start({ entry: "fake-kinds.ts", cpu: 0 });
const fakeOpenai = await Child.start({ entry: "fake.ts", cpu: 0 });
// BENCH_KINDS_PROF=<dir>: the gateway writes a CPU profile there (bench/profile-summary.ts),
// sampled every 100 µs: at the default 1 ms a stream of a few hundred µs is barely seen.
const prof = process.env.BENCH_KINDS_PROF;
const gateway = await Child.start({
  entry: "gateway.ts", args: [fakeOpenai.url], cpu: 1, ...(prof ? { nodeArgs: ["--cpu-prof", "--cpu-prof-interval=100", `--cpu-prof-dir=${prof}`] } : {}),
  env: { BENCH_KINDS_UPSTREAM: upstream.url, GATEWAY_LOG_LEVEL: "info", ...(process.env.BENCH_SRC === "1" ? { BENCH_SRC: "1" } : {}) },
});
const url = new URL("/v1/messages", gateway.url);
const lanes: Record<LaneKey, Lane> = {
  ssePlain: lane("ssePlain", models.sse, false),
  keyPlain: lane("keyPlain", models.bedrockKey, false),
  bedrockPlain: lane("bedrockPlain", models.bedrock, false),
  sseStream: lane("sseStream", models.sse, true),
  keyStream: lane("keyStream", models.bedrockKey, true),
  bedrockStream: lane("bedrockStream", models.bedrock, true),
};
// BENCH_KINDS_LANES=bedrockStream,…: only those lanes (for a profile of one).
const keys = (process.env.BENCH_KINDS_LANES?.split(",") ?? Object.keys(lanes)) as LaneKey[];
try {
  for (const key of keys) await batch(url, lanes[key], 200); // warm-up: JIT, connections
  for (let i = 0, done = 0; i < batches; i++) {
    const n = Math.round(((i + 1) * requests) / batches) - done;
    done += n;
    const order = keys.map((_, j) => keys[(i + j) % keys.length]);
    for (const key of order) {
      const t0 = threads ? threadCpuNs(gateway.pid) : undefined;
      const c0 = await gateway.cpu();
      await batch(url, lanes[key], n);
      const c1 = await gateway.cpu();
      lanes[key].perBatchUs.push((c1.cpuUs - c0.cpuUs) / n);
      if (t0) {
        for (const [name, ns] of threadCpuNs(gateway.pid)) lanes[key].threadNs.set(name, (lanes[key].threadNs.get(name) ?? 0) + (ns - (t0.get(name) ?? 0)) / requests);
      }
    }
    console.log(`batch ${i + 1}/${batches}: ${keys.map((k) => `${k} ${Math.round(lanes[k].perBatchUs.at(-1)!)} µs`).join(", ")}`);
  }
} finally {
  for (const l of Object.values(lanes)) l.agent.destroy();
  await gateway.stop();
  await Promise.all([upstream.stop(), fakeOpenai.stop()]);
}
const m = Object.fromEntries(keys.map((k) => [k, median(lanes[k].perBatchUs)])) as Record<LaneKey, number>;
const has = (...ks: LaneKey[]) => ks.every((k) => keys.includes(k));
// Each batch runs every lane once, in turn (the stream lanes one after another): a ratio of
// two lanes batch by batch is blurred less by the host's drift than the ratio of the lanes'
// medians.
const paired = (a: LaneKey, b: LaneKey) => median(lanes[a].perBatchUs.map((us, i) => us / lanes[b].perBatchUs[i]));
console.log(`\ngateway CPU per request (medians of ${batches} batches of ~${Math.round(requests / batches)}):`);
for (const k of keys) console.log(`  ${k.padEnd(14)} ${m[k].toFixed(0)} µs`);
if (has("bedrockPlain", "keyPlain")) console.log(`SigV4 signing: ${(m.bedrockPlain - m.keyPlain).toFixed(0)} µs/request (SigV4 − API key, plain)`);
if (has("bedrockStream", "keyStream")) console.log(`SigV4 signing: ${(m.bedrockStream - m.keyStream).toFixed(0)} µs/request (SigV4 − API key, streamed)`);
if (has("keyStream", "sseStream")) {
  console.log(`a Bedrock stream against an SSE one: +${(m.keyStream - m.sseStream).toFixed(0)} µs/stream (API key − SSE: the request made Bedrock's, frames decoded)`);
  const ratio = paired("keyStream", "sseStream");
  console.log(`Bedrock stream relayed / SSE pass-through: ${ratio.toFixed(2)}× paired (lanes' medians ${(m.keyStream / m.sseStream).toFixed(2)}×) — ${ratio <= BOUND ? "PASS" : "FAIL"} (bound ${BOUND}×)`);
}
if (has("bedrockStream", "sseStream")) {
  console.log(`signed with SigV4, signature included: ${paired("bedrockStream", "sseStream").toFixed(2)}× paired (lanes' medians ${(m.bedrockStream / m.sseStream).toFixed(2)}×)`);
}
if (threads) {
  console.log("\ngateway CPU by thread, µs per request (all batches):");
  for (const k of keys) console.log(`  ${k.padEnd(14)} ${[...lanes[k].threadNs].sort((a, b) => b[1] - a[1]).map(([name, ns]) => `${name} ${(ns / 1000).toFixed(0)}`).join(", ")}`);
}
