// `npx tsx bench/upload-memory.ts`: what concurrent large uploads cost a gateway process in
// memory. Spawns `gateway` (dist/ when up to date, else the sources through tsx) in front of
// an upstream that reads and discards, sends UPLOADS multipart transcription uploads of
// UPLOAD_MIB each at once, and samples the gateway's RSS (/proc/<pid>/status VmRSS) every
// 20 ms. Settings (env): UPLOADS (50), UPLOAD_MIB (20), BUDGET (server.max_body_memory, 2GiB).

import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveGateway } from "../test/helpers/spawn-gateway.js";
import { TOKEN, channel, config, token } from "../test/integration/support.js";

const uploads = Number(process.env.UPLOADS ?? 50);
const mib = Number(process.env.UPLOAD_MIB ?? 20);
const budget = process.env.BUDGET ?? "2GiB";

const upstream = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ text: "ok", usage: { type: "duration", seconds: 1 } }));
  });
});
await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

const dir = await mkdtemp(join(tmpdir(), "gw-upload-mem-"));
const { child, base } = await serveGateway({
  file: join(dir, "gateway.yaml"), cwd: dir, logLevel: "error", readyMs: 30_000,
  yaml: (port) => config({
    server: { listen: `127.0.0.1:${port}`, max_body: `${mib + 1}MiB`, max_body_memory: budget, upstream_timeout: "60s" },
    users: { alice: { credit: 1_000_000, groups: ["default"] } },
    tokens: [token("alice-main", TOKEN)],
    channels: [channel("oa", upstreamUrl, { models: ["whisper-1"] })],
    models: { "whisper-1": { endpoint: "transcription", price: { per_second: 0.0001 } } },
  }),
});
const pid = child.proc.pid!;
const rssMiB = async () => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

const boundary = "uploadmemoryboundary";
const form = Buffer.concat([
  Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--${boundary}\r\n` +
    `Content-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`),
  Buffer.alloc(mib * 1024 * 1024, 7),
  Buffer.from(`\r\n--${boundary}--\r\n`),
]);
const upload = () => new Promise<number>((resolve, reject) => {
  const req = http.request(`${base}/v1/audio/transcriptions`, {
    method: "POST", agent: false,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": form.length },
  }, (res) => { res.resume(); res.on("end", () => resolve(res.statusCode ?? 0)); });
  req.on("error", reject);
  req.end(form);
});

// Warm the path up (one upload), then read the settled baseline.
await upload();
await new Promise((r) => setTimeout(r, 500));
const baseline = await rssMiB();
let peak = baseline;
const sampler = setInterval(() => { void rssMiB().then((v) => { peak = Math.max(peak, v); }); }, 20);
const started = Date.now();
const statuses = await Promise.all(Array.from({ length: uploads }, () => upload().catch(() => 0)));
const seconds = (Date.now() - started) / 1000;
clearInterval(sampler);
await new Promise((r) => setTimeout(r, 1000));
const after = await rssMiB();
const tally = statuses.reduce<Record<number, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {});

console.log(`node ${process.version}, gateway pid ${pid}; ${uploads} uploads of ${mib} MiB at once, max_body_memory ${budget}`);
console.log(`answers: ${JSON.stringify(tally)} in ${seconds.toFixed(1)} s`);
console.log(`RSS: baseline ${baseline.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB (+${(peak - baseline).toFixed(0)} MiB), 1 s after ${after.toFixed(0)} MiB`);

child.proc.kill("SIGTERM");
await new Promise((r) => child.proc.once("exit", r));
upstream.close();
await rm(dir, { recursive: true, force: true });
