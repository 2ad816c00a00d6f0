// `server.workers: 2` against one worker, both on Redis + PostgreSQL, the real `gateway`
// command under the same load (autocannon, 50 connections, non-stream chat) in alternating
// rounds. Nothing is pinned: with workers the gateway spreads over every core, and on a
// 2-core machine it shares them with the load generator, the fake upstream, Redis and
// PostgreSQL, so expect little (see bench/RESULTS.md).
// Usage: WORKERS_STORE=redis://127.0.0.1:6379/15 WORKERS_LEDGER=postgres://…/gw_bench
//   npx tsx bench/workers.ts   (ROUNDS=3, SECONDS=5; the ledger database must exist)
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { Child } from "./lib/ipc.js";
import { requestBody, requestHeaders } from "./lib/load.js";
import { benchToken, model } from "./lib/shared.js";
import { median } from "./lib/stats.js";

const store = process.env.WORKERS_STORE ?? "redis://127.0.0.1:6379/15";
const ledger = process.env.WORKERS_LEDGER ?? "postgres://postgres@127.0.0.1:5432/gw_bench";
const rounds = Number(process.env.ROUNDS ?? 3);
const seconds = Number(process.env.SECONDS ?? 5);
const bin = fileURLToPath(new URL("../bin/gateway.js", import.meta.url));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function configText(port: number, workers: number, upstream: string): string {
  return `server: { listen: "127.0.0.1:${port}", workers: ${workers} }
store: ${store}
ledger: ${ledger}
log: { level: warn }
groups: { default: {} }
users: { bench: { credit: 1000000, groups: [default] } }
tokens: [{ name: bench, key: ${benchToken}, user: bench, group: default }]
channels:
  - { name: fake, protocol: openai, base_url: "${upstream}", keys: [sk-upstream-bench], groups: [default], models: [${model}] }
models:
  ${model}: { endpoint: chat, price: { input: 0.15, output: 0.6 } }
`;
}

async function listening(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gateway at ${url} did not answer`);
}

/** Starts `gateway --config` with N workers, loads it for a warm-up and a measured run. */
async function measure(workers: number, upstream: string, dir: string): Promise<number> {
  const port = await freePort();
  const file = join(dir, `w${workers}.yaml`);
  writeFileSync(file, configText(port, workers, upstream));
  const child = spawn(process.execPath, [bin, "--config", file], { stdio: ["ignore", "ignore", "inherit"] });
  const url = `http://127.0.0.1:${port}`;
  try {
    await listening(url, child);
    const run = (duration: number) => autocannon({ url: `${url}/v1/chat/completions`, method: "POST", headers: requestHeaders, body: requestBody, connections: 50, duration });
    await run(2);
    const result = await run(seconds);
    if (result.non2xx || result.errors) console.error(`workers ${workers}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return result.requests.total / seconds;
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
}

const fake = await Child.start({ entry: "fake.ts" });
const dir = mkdtempSync(join(tmpdir(), "gateway-workers-"));
const results: Record<1 | 2, number[]> = { 1: [], 2: [] };
try {
  for (let r = 0; r < rounds; r++) {
    for (const w of (r % 2 === 0 ? [1, 2] : [2, 1]) as (1 | 2)[]) results[w].push(await measure(w, fake.url, dir));
    console.log(`round ${r + 1}: workers 1 ${results[1].at(-1)!.toFixed(0)} req/s, workers 2 ${results[2].at(-1)!.toFixed(0)} req/s`);
  }
  const ratios = results[2].map((v, i) => v / results[1][i]);
  console.log(`median: workers 1 ${median(results[1]).toFixed(0)} req/s, workers 2 ${median(results[2]).toFixed(0)} req/s, ratio ${median(ratios).toFixed(2)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
  await fake.stop();
  process.exit(0);
}
