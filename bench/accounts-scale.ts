// `npx tsx bench/accounts-scale.ts [N]`: what a million stored accounts cost the gateway at
// start: time from `node bin/gateway.js --config …` to /healthz answering, RSS then, and the
// first and the next requests of a stored token (a cache miss, then hits). Three configs:
// an empty store, a store of N tokens (default 1,000,000), and 100,000 tokens in the YAML.
// The per-request CPU of authentication with stored tokens is measured by bench/ab.ts
// (AB_ENV_B="BENCH_ACCOUNTS=1000000": the same build, its token stored among a million).
// Settings (env): SCALE_ROUNDS (2).
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fillAccountStore } from "./lib/stored-accounts.js";
import { benchToken } from "./lib/shared.js";
import { generateConfig } from "./yaml-tokens.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const total = Number(process.argv[2] ?? 1_000_000);
const rounds = Number(process.env.SCALE_ROUNDS ?? 2);

interface Start {
  readonly startMs: number;
  readonly rssMiB: number;
  /** The first request of the stored token (a miss: read from the store), and the median of the next 20. */
  readonly firstMs?: number;
  readonly nextMs?: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function get(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", () => resolve(0));
    req.end();
  });
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

/** Serves `yamlFor(port)` from `dir` and measures the start, then a stored token's requests. */
async function measureStart(dir: string, yamlFor: (port: number) => string, storedToken: boolean): Promise<Start> {
  const port = await freePort();
  const file = join(dir, "gateway.yaml");
  writeFileSync(file, yamlFor(port));
  const started = performance.now();
  const child = spawn(process.execPath, [join(root, "bin/gateway.js"), "--config", file], { cwd: dir, stdio: "ignore", env: { ...process.env, GATEWAY_LOG_LEVEL: "warn" } });
  try {
    const base = `http://127.0.0.1:${port}`;
    while ((await get(`${base}/healthz`)) !== 200) await new Promise((r) => setTimeout(r, 5));
    const startMs = performance.now() - started;
    const rss = rssMiB(child.pid!);
    if (!storedToken) return { startMs, rssMiB: rss };
    const balance = () => get(`${base}/v1/dashboard/billing/subscription`, { authorization: `Bearer ${benchToken}` });
    let t = performance.now();
    if ((await balance()) !== 200) throw new Error("the stored token was refused");
    const firstMs = performance.now() - t;
    const next: number[] = [];
    for (let i = 0; i < 20; i++) {
      t = performance.now();
      await balance();
      next.push(performance.now() - t);
    }
    next.sort((a, b) => a - b);
    return { startMs, rssMiB: rss, firstMs, nextMs: next[10] };
  } finally {
    child.kill("SIGKILL");
  }
}

const head = (store: string) => (port: number) => `server: { listen: "127.0.0.1:${port}" }
store: ${store}
groups: { default: {} }
users: {}
tokens: []
channels: []
models: { gpt-4o-mini: { endpoint: chat, price: { input: 1, output: 1 } } }
`;

process.stderr.write("building dist/ (npm run build)\n");
execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });

const dirs = { empty: mkdtempSync(join(tmpdir(), "gw-scale-empty-")), stored: mkdtempSync(join(tmpdir(), "gw-scale-stored-")), yaml: mkdtempSync(join(tmpdir(), "gw-scale-yaml-")) };
try {
  let t = performance.now();
  const store = await fillAccountStore(join(root, "dist"), join(dirs.stored, "gateway.db"), total);
  await store.close();
  process.stderr.write(`filled the store with ${total} tokens in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  t = performance.now();
  const emptyStore = await fillAccountStore(join(root, "dist"), join(dirs.empty, "gateway.db"), 1);
  await emptyStore.close();
  const yaml100k = generateConfig(100_000).replace("store: sqlite:./data/bench.db", "store: sqlite:./gateway.db");
  const results: Record<string, Start[]> = { "empty store (1 token)": [], [`store of ${total} tokens`]: [], "100k tokens in gateway.yaml": [] };
  for (let r = 0; r < rounds; r++) {
    results["empty store (1 token)"].push(await measureStart(dirs.empty, head("sqlite:./gateway.db"), true));
    results[`store of ${total} tokens`].push(await measureStart(dirs.stored, head("sqlite:./gateway.db"), true));
    results["100k tokens in gateway.yaml"].push(await measureStart(dirs.yaml, (port) => `server: { listen: "127.0.0.1:${port}" }\n${yaml100k}`, false));
  }
  const fmt = (v: number | undefined, d = 0) => (v === undefined ? "—" : v.toFixed(d));
  console.log("| config | start to /healthz (ms) | RSS (MiB) | stored token, first request (ms) | next ones, median (ms) |");
  console.log("|---|---:|---:|---:|---:|");
  for (const [name, runs] of Object.entries(results)) {
    const m = (f: (s: Start) => number | undefined) => {
      const v = runs.map(f).filter((x): x is number => x !== undefined).sort((a, b) => a - b);
      return v.length ? v[Math.floor(v.length / 2)] : undefined;
    };
    console.log(`| ${name} | ${fmt(m((s) => s.startMs))} | ${fmt(m((s) => s.rssMiB))} | ${fmt(m((s) => s.firstMs), 2)} | ${fmt(m((s) => s.nextMs), 2)} |`);
  }
} finally {
  for (const d of Object.values(dirs)) rmSync(d, { recursive: true, force: true });
}
