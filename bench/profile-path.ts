// Profiles the gateway on one streaming path only, for `profile-summary.ts`:
//   npx tsx bench/profile-path.ts <converted|pass-through> <dir> [streams=3000]
// Starts both fakes and the gateway child (compiled dist/, run `npm run build` first) with
// --cpu-prof, sends the streams 10 at a time, stops; prints gateway CPU µs per stream.

import http from "node:http";
import { Child } from "./lib/ipc.js";
import { checkChatStream } from "./lib/convert.js";
import { benchToken, convertModel, model } from "./lib/shared.js";

const [path, dir, n] = process.argv.slice(2);
if ((path !== "converted" && path !== "pass-through") || !dir) throw new Error("usage: profile-path.ts <converted|pass-through> <dir> [streams]");
const total = Number(n ?? 3000);
const children: Child[] = [];
try {
  const [openai, anthropic] = await Promise.all([
    Child.start({ entry: "fake.ts", cpu: 0 }),
    Child.start({ entry: "fake.ts", cpu: 0, env: { BENCH_FAKE_PROTOCOL: "anthropic" } }),
  ]);
  children.push(openai, anthropic);
  const gw = await Child.start({ entry: "gateway.ts", args: [openai.url, anthropic.url], cpu: 1, onStderrLine: () => {},
    nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`, `--cpu-prof-name=gateway-${path}.cpuprofile`] });
  children.push(gw);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
  const body = JSON.stringify({ model: path === "converted" ? convertModel : model, stream: true, messages: [{ role: "user", content: "Tell me about foxes." }] });
  const one = () => new Promise<void>((resolve, reject) => {
    http.request(new URL("/v1/chat/completions", gw.url), { method: "POST", agent, headers: { "content-type": "application/json", authorization: `Bearer ${benchToken}` } }, (res) => {
      let t = ""; res.setEncoding("utf8"); res.on("data", (c: string) => { t += c; });
      res.on("end", () => { const p = checkChatStream(t); if (p) reject(new Error(p)); else resolve(); });
    }).on("error", reject).end(body);
  });
  let next = 0;
  const c0 = await gw.cpu();
  await Promise.all(Array.from({ length: 10 }, async () => { while (next++ < total) await one(); }));
  const c1 = await gw.cpu();
  process.stdout.write(`${path}: ${total} streams, gateway CPU ${Math.round((c1.cpuUs - c0.cpuUs) / total)} µs/stream (profiling on)\n`);
  agent.destroy();
} finally {
  await Promise.allSettled(children.map((c) => c.stop()));
}
