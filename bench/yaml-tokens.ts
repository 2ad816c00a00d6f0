// `npx tsx bench/yaml-tokens.ts [N]`: how long gateway.yaml with N tokens (default 100,000)
// takes to load, and the memory it needs. Writes a generated config to a temp directory,
// loads it with loadConfigFile in a fresh child process (so the figures are the load's
// alone), and prints wall time, CPU time and peak RSS. Settings (env): YAML_TOKENS_ROUNDS
// (1; each round is a new child), YAML_TOKENS_NODE_ARGS (e.g. "--cpu-prof
// --cpu-prof-dir=/tmp/p" or "--heap-prof"), YAML_TOKENS_KEEP=1 (keep and print the file).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

interface Figures {
  tokens: number;
  wallMs: number;
  cpuMs: number;
  maxRssMiB: number;
  /** RSS before the load began (node, tsx and the config modules loaded). */
  baseRssMiB: number;
}

/** A config with `n` tokens over n/10 users; about one in five has each optional policy. */
export function generateConfig(n: number): string {
  const users = Math.max(1, Math.floor(n / 10));
  const out: string[] = [
    "store: sqlite:./data/bench.db",
    "groups:",
    "  default: { multiplier: 1 }",
    "  premium: { multiplier: 1.5 }",
    "models:",
    "  gpt-4o-mini:",
    "    price: { input: 0.15, output: 0.6 }",
    "  gpt-4o:",
    "    price: { input: 2.5, output: 10 }",
    "channels:",
    "  - name: openai",
    "    protocol: openai",
    "    base_url: http://127.0.0.1:9",
    "    keys: [sk-upstream]",
    "    groups: [default, premium]",
    "    models: [gpt-4o-mini, gpt-4o]",
    "users:",
  ];
  for (let u = 0; u < users; u++) out.push(`  user-${u}: { credit: ${10 + (u % 90)}, groups: [default, premium] }`);
  out.push("tokens:");
  for (let i = 0; i < n; i++) {
    const hash = createHash("sha256").update(`sk-bench-${i}`).digest("hex");
    out.push(`  - name: token-${i}`, `    key_sha256: ${hash}`, `    user: user-${i % users}`, `    group: ${i % 3 === 0 ? "premium" : "default"}`);
    if (i % 5 === 1) out.push(`    allow_ips: [203.0.113.0/24, 198.51.100.${i % 250}]`);
    if (i % 5 === 2) out.push(`    models: [gpt-4o-mini, "gpt-4*"]`);
    if (i % 7 === 3) out.push(`    expires: 2030-01-${String(1 + (i % 28)).padStart(2, "0")}T00:00:00Z`);
    if (i % 4 === 0) out.push(`    quota: ${(i % 50) + 0.25}`);
    if (i % 97 === 0) out.push("    status: disabled");
  }
  return out.join("\n") + "\n";
}

/** Child side: load the file once and print the figures as one JSON line. */
async function child(file: string): Promise<void> {
  const { loadConfigFile } = await import("../src/config/index.js");
  const baseRssMiB = process.memoryUsage().rss / 2 ** 20;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const { runtime } = await loadConfigFile(file, { env: {} });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const figures: Figures = {
    tokens: runtime.tokensByHash.size,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    baseRssMiB,
  };
  process.stdout.write(JSON.stringify(figures) + "\n");
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 100_000);
  const rounds = Number(process.env.YAML_TOKENS_ROUNDS ?? 1);
  const nodeArgs = (process.env.YAML_TOKENS_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const dir = mkdtempSync(join(tmpdir(), "yaml-tokens-"));
  const file = join(dir, "gateway.yaml");
  const text = generateConfig(n);
  writeFileSync(file, text);
  console.log(`${n} tokens, ${(text.length / 2 ** 20).toFixed(1)} MiB of YAML: ${file}`);
  try {
    for (let r = 0; r < rounds; r++) {
      const output = execFileSync(process.execPath, [...nodeArgs, "--import", "tsx", fileURLToPath(import.meta.url), "--child", file], {
        encoding: "utf8",
        maxBuffer: 1 << 20,
      });
      const f = JSON.parse(output.trim().split("\n").pop()!) as Figures;
      console.log(
        `round ${r + 1}: ${f.tokens} tokens loaded; wall ${(f.wallMs / 1000).toFixed(2)} s, CPU ${(f.cpuMs / 1000).toFixed(2)} s, ` +
          `peak RSS ${f.maxRssMiB.toFixed(0)} MiB (${f.baseRssMiB.toFixed(0)} MiB before the load)`,
      );
    }
  } finally {
    if (process.env.YAML_TOKENS_KEEP !== "1") rmSync(dir, { recursive: true, force: true });
  }
}

// Run as a script (bench/accounts-scale.ts imports generateConfig alone).
const isEntry = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1]);
if (process.argv[2] === "--child") await child(process.argv[3]);
else if (isEntry) await main();
