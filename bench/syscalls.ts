// Per-request costs of one target that a shared host does not blur much: CPU time by thread
// (from /proc, so the usage-log writer thread and V8's helpers show apart from the event
// loop) and, with SYSCALLS_STRACE=1, system calls by kind (strace -c -f, which slows the
// target: read its counts, not its times), over a fixed number of chat requests.
// Usage: npx tsx bench/syscalls.ts <gateway.ts|bare-proxy.ts> [requests=3000] [connections=1]
// (BENCH_LIB=/abs/dist picks the gateway build; the strace table goes to stdout).
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { Child } from "./lib/ipc.js";
import { threadCpu } from "./lib/threads.js";
import { requestBody, requestHeaders } from "./lib/load.js";

execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" });
const [entry, n = "3000", c = "1"] = process.argv.slice(2);
if (entry !== "gateway.ts" && entry !== "bare-proxy.ts") throw new Error("usage: syscalls.ts <gateway.ts|bare-proxy.ts> [requests] [connections]");
const requests = Number(n);
const connections = Number(c);
const fake = await Child.start({ entry: "fake.ts", cpu: 0 });
const target = await Child.start({ entry, args: [fake.url], cpu: 1, env: { GATEWAY_LOG_LEVEL: "info" } });
const run = (o: object) => autocannon({
  url: `${target.url}/v1/chat/completions`, method: "POST", headers: requestHeaders, body: requestBody, connections, timeout: 10, ...o,
});

await run({ duration: 3 });
const straceOut = join(tmpdir(), `syscalls-${process.pid}.txt`);
const strace = process.env.SYSCALLS_STRACE === "1"
  ? spawn("strace", ["-c", "-f", "-o", straceOut, "-p", String(target.pid)], { stdio: "ignore" }) : undefined;
if (strace) await new Promise((r) => setTimeout(r, 1000));
const before = threadCpu(target.pid);
const result = await run({ amount: requests });
const after = threadCpu(target.pid);
if (strace) {
  strace.kill("SIGINT");
  await new Promise((r) => strace.once("exit", r));
}
const served = result.requests.total;
console.log(`${entry}: ${served} requests at ${connections} connection(s), ${result.non2xx} non-2xx`);
const byName = new Map<string, number>();
for (const [tid, t] of after) {
  const us = (t.ns - (before.get(tid)?.ns ?? 0)) / 1000;
  const name = tid === String(target.pid) ? "main (event loop)" : process.env.SYSCALLS_BY_TID === "1" ? `${t.name} ${tid}` : t.name;
  byName.set(name, (byName.get(name) ?? 0) + us);
}
let total = 0;
for (const [name, us] of [...byName].sort((a, b) => b[1] - a[1])) {
  total += us;
  if (us > 0) console.log(`  ${name.padEnd(20)} ${(us / served).toFixed(1).padStart(7)} µs/req`);
}
console.log(`  ${"all threads".padEnd(20)} ${(total / served).toFixed(1).padStart(7)} µs/req`);
if (strace) {
  const table = readFileSync(straceOut, "utf8").split("\n");
  rmSync(straceOut, { force: true });
  console.log("system calls per request (strace -c -f):");
  for (const line of table) {
    const cols = line.trim().split(/\s+/);
    const calls = Number(cols[3]);
    if (cols.length >= 5 && Number.isFinite(calls) && calls > 0 && cols.at(-1) !== "total") {
      console.log(`  ${cols.at(-1)!.padEnd(14)} ${(calls / served).toFixed(2)}`);
    }
  }
}
await target.stop();
await fake.stop();
