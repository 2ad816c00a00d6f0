// Child process: the real gateway (startGateway + RuntimeBox) compiled from inline YAML:
// one user, one token, one OpenAI channel pointing at the fake, gpt-4o-mini priced; given a
// second URL (a fake Anthropic upstream), also an `anthropic` channel serving
// claude-sonnet-4-5, so chat-completions requests for it are converted both ways.
// Logs at the default level (info: one JSON line per request on stdout, which the driver
// sends to /dev/null, so writing it is paid for as in production); the usage log goes to
// its SQLite store; the driver reads stderr through a pipe.
//
// BENCH_HEAP_PROFILE=<file>: samples what the gateway allocates from 4 s to 7 s after start
// (V8's sampling heap profiler) and writes it with the number of requests served meanwhile;
// `npx tsx bench/heap-summary.ts <file>` prints bytes per request by function. Allocation is
// the one cost a shared host does not blur. With BENCH_HEAP_PROMOTED=1 only what outlived
// minor GCs is kept: what feeds the old generation and its full GCs.
// BENCH_TRACE=<file>: a timeline of each request (see trace.ts; meant for one connection),
// written to <file> when the child stops.
// BENCH_LIMITS=1: the token has a request rate and a total-requests window (never reached),
// so each request also takes two rate windows, as most operators configure.
// BENCH_ACCOUNTS=N: the bench token and its user are kept in the accounts store (the SQLite
// file) among N tokens in all, not in the YAML (which keeps 9 others): authentication goes
// through the store's cache (bench/accounts-scale.md says what this measures).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveChild } from "../lib/ipc.js";
import { benchToken, convertModel, model } from "../lib/shared.js";

// The gateway's compiled output (`npm run build`, which the driver runs first), as
// `gateway` runs in production; BENCH_SRC=1 measures the TypeScript sources through tsx.
const lib = process.env.BENCH_LIB ?? (process.env.BENCH_SRC === "1" ? "../../src" : "../../dist");
const { openState } = (await import(`${lib}/state/open.js`)) as Partial<typeof import("../../src/state/open.js")>;
const { compileSource } = (await import(`${lib}/config/index.js`)) as typeof import("../../src/config/index.js");
const { RuntimeBox } = (await import(`${lib}/runtime/box.js`)) as typeof import("../../src/runtime/box.js");
const { startGateway } = (await import(`${lib}/server/server.js`)) as typeof import("../../src/server/server.js");
const { destroyAgents } = (await import(`${lib}/upstream/agents.js`)) as typeof import("../../src/upstream/agents.js");

const writeTrace = process.env.BENCH_TRACE ? (await import("./trace.js")).startTrace(process.env.BENCH_TRACE) : undefined;

const upstream = process.argv[2];
const anthropicUpstream = process.argv[3];
if (!upstream) throw new Error("usage: gateway.ts <openai upstream url> [anthropic upstream url]");

// BENCH_KINDS_UPSTREAM=<url> (bench/kinds.ts): three more channels on that upstream, one
// `anthropic` (SSE) and two `bedrock` (event-stream frames), one signing with SigV4 and one
// sending a Bedrock API key, each with its model.
const kindsUpstream = process.env.BENCH_KINDS_UPSTREAM;
const kindsModels = { sse: "bench-claude-sse", bedrock: "bench-claude-bedrock", bedrockKey: "bench-claude-bedrock-key" };
const bedrockChannel = (name: string, model: string, credentials: string) => `  - name: ${name}
    kind: bedrock
    region: us-east-1
    base_url: ${kindsUpstream}
    credentials: ${credentials}
    groups: [default]
    models: [${model}]
    model_map: { ${model}: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" }
`;
const limits = process.env.BENCH_LIMITS === "1"
  ? "limits: { request_rate: { max: 100000000, per: 1m }, total_requests: { max: 100000000, per: 1h } }\n" : "";
const storedAccounts = Number(process.env.BENCH_ACCOUNTS ?? 0);
// Ten tokens in the YAML either way: the bench token and nine others, or the nine alone.
const fillerTokens = Array.from({ length: 9 }, (_, i) => `  - { name: yaml-${i}, key: sk-yaml-filler-${i}-0123456789, user: yaml, group: default }`).join("\n");
const yaml = `${limits}
server: { listen: "127.0.0.1:0" }
groups: { default: {} }
users:
  yaml: { credit: 1000000, groups: [default] }
${storedAccounts > 0 ? "" : "  bench: { credit: 1000000, groups: [default] }\n"}tokens:
${storedAccounts > 0 ? "" : `  - { name: bench, key: ${benchToken}, user: bench, group: default }\n`}${fillerTokens}
channels:
  - name: fake
    protocol: openai
    base_url: ${upstream}
    keys: [sk-upstream-bench]
    groups: [default]
    models: [${model}]
${anthropicUpstream ? `  - name: fake-anthropic
    protocol: anthropic
    base_url: ${anthropicUpstream}
    keys: [sk-ant-upstream-bench]
    groups: [default]
    models: [${convertModel}]
` : ""}${kindsUpstream ? `  - name: kinds-sse
    protocol: anthropic
    base_url: ${kindsUpstream}
    keys: [sk-ant-upstream-bench]
    groups: [default]
    models: [${kindsModels.sse}]
${bedrockChannel("kinds-bedrock", kindsModels.bedrock, "{ access_key_id: AKIABENCHBENCHBENCH0, secret_access_key: bench/secret/access/key/0123456789abcdef }")}\
${bedrockChannel("kinds-bedrock-key", kindsModels.bedrockKey, "{ api_key: bench-api-key }")}` : ""}models:
  ${model}:
    endpoint: chat
    price: { input: 0.15, output: 0.6, cache_read_ratio: 0.5 }
${anthropicUpstream ? `  ${convertModel}:
    endpoint: [chat, responses]
    price: { input: 3, output: 15, cache_read_ratio: 0.1, cache_write_ratio: 1.25 }
` : ""}${kindsUpstream ? `  ${kindsModels.sse}:
    price: { input: 3, output: 15 }
  ${kindsModels.bedrock}:
    price: { input: 3, output: 15 }
  ${kindsModels.bedrockKey}:
    price: { input: 3, output: 15 }
` : ""}`;

await serveChild(async () => {
  const { runtime, warnings } = compileSource(yaml, { path: "bench.yaml", env: {} });
  if (warnings.length) throw new Error(`bench config warnings: ${JSON.stringify(warnings)}`);
  // The production store: SQLite (WAL, group commit) in a fresh temp folder; or, with
  // BENCH_STORE=redis://… and BENCH_LEDGER=postgres://… (an existing database), the shared one.
  const dir = mkdtempSync(join(tmpdir(), "gateway-bench-"));
  const spec = { store: process.env.BENCH_STORE ?? "sqlite:bench.db", ledger: process.env.BENCH_LEDGER };
  // A build from before the state interfaces (bench/ab.ts's "before") takes a Store.
  const state = openState ? await openState(spec, { baseDir: dir, upstreamTimeoutMs: 300_000 }) : undefined;
  const legacy = state ? undefined
    : ((await import(`${lib}/state/sqlite.js`)) as { openSqliteStore: (path: string) => { close(): void } }).openSqliteStore(join(dir, "bench.db"));
  const accountStore = storedAccounts > 0 ? await (await import("../lib/stored-accounts.js")).fillAccountStore(lib, join(dir, "bench.db"), storedAccounts) : undefined;
  const gw = await startGateway({ box: new RuntimeBox(runtime), accountStore, ...(state ? { state } : { store: legacy }) } as Parameters<typeof startGateway>[0]);
  if (process.env.BENCH_HEAP_PROFILE) void profileAllocations(gw.server, process.env.BENCH_HEAP_PROFILE);
  return {
    url: gw.url,
    close: async () => {
      await gw.drain(1000);
      destroyAgents();
      await state?.close();
      await accountStore?.close();
      legacy?.close();
      rmSync(dir, { recursive: true, force: true });
      writeTrace?.();
    },
  };
});

/** See BENCH_HEAP_PROFILE above. */
async function profileAllocations(server: import("node:http").Server, file: string): Promise<void> {
  const { Session } = await import("node:inspector/promises");
  const { writeFileSync } = await import("node:fs");
  const session = new Session();
  session.connect();
  let requests = 0;
  server.on("request", () => requests++);
  await new Promise((r) => setTimeout(r, 4000));
  const promotedOnly = process.env.BENCH_HEAP_PROMOTED === "1";
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !promotedOnly,
  } as never);
  const from = requests;
  await new Promise((r) => setTimeout(r, 3000));
  const { profile } = (await session.post("HeapProfiler.stopSampling")) as { profile: unknown };
  writeFileSync(file, JSON.stringify({ requests: requests - from, promotedOnly, profile }));
  session.disconnect();
}
