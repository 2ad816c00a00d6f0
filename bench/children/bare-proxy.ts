// Child process: the baseline. A bare pass-through reverse proxy built with http-proxy-3,
// no auth, no parsing, no logging, with the same keep-alive pool settings the gateway
// uses upstream (src/upstream/agents.ts), so the comparison isolates the gateway's work.

import http from "node:http";
import { createProxyServer } from "http-proxy-3";
import { serveProxy } from "../lib/ipc.js";

// BENCH_TRACE=<file>: a timeline of each request (see trace.ts).
const writeTrace = process.env.BENCH_TRACE ? (await import("./trace.js")).startTrace(process.env.BENCH_TRACE) : undefined;

const target = process.argv[2];
if (!target) throw new Error("usage: bare-proxy.ts <upstream url>");

const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 15_000, maxSockets: 512, maxFreeSockets: 64, scheduling: "lifo" });
const proxy = createProxyServer({ target, agent });
proxy.on("error", (_err, _req, res) => {
  if (res instanceof http.ServerResponse && !res.headersSent) res.writeHead(502).end();
  else res.destroy();
});
await serveProxy((req, res) => proxy.web(req, res), () => {
  agent.destroy();
  writeTrace?.();
});
