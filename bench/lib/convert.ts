// Converted stream CPU: the same gateway serves streamed chat completions for two models,
// one through an `openai` channel (pass-through: the upstream's SSE bytes are relayed while
// a tap reads usage) and one through an `anthropic` channel (converted: the request is
// encoded as Messages, and each Anthropic SSE event is decoded to canonical events and
// re-encoded as chat-completions chunks). Both upstreams stream the same 20 text pieces.
// The gateway child's CPU time is read (IPC) before and after each batch, so the figure is
// the gateway's own CPU per stream; batches alternate A B B A … so drift hits both alike.
// Every stream is checked: status 200, 20 content deltas whose text is the fake's text, a
// finish_reason "stop" and the closing [DONE].

import http from "node:http";
import type { Child } from "./ipc.js";
import { benchToken, streamChunks, streamText } from "./shared.js";

export type Path = "pass-through" | "converted";

export interface ConvertSettings {
  /** Measured streams per path. */
  readonly streams: number;
  readonly concurrency: number;
  /** Unmeasured streams per path first (JIT warm-up of the conversion code). */
  readonly warmup: number;
  /** Measured batches per path (alternating). */
  readonly batches: number;
}

export interface PathRun {
  readonly streams: number;
  /** Gateway CPU over the measured batches, µs. */
  readonly gatewayCpuUs: number;
  /** The path's fake upstream CPU over the same batches, µs (informational). */
  readonly upstreamCpuUs: number;
  readonly wallS: number;
  /** Gateway CPU µs per stream, per batch (for the spread). */
  readonly perBatchUs: number[];
}

export interface ConvertRun {
  readonly pass: PathRun;
  readonly conv: PathRun;
}

interface Lane {
  readonly path: Path;
  readonly url: URL;
  readonly agent: http.Agent;
  readonly body: string;
  readonly upstream: Child;
}

function lane(path: Path, base: string, model: string, concurrency: number, upstream: Child): Lane {
  return {
    path, upstream,
    url: new URL("/v1/chat/completions", base),
    agent: new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency }),
    body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "Tell me about foxes." }] }),
  };
}

/** Checks one chat-completions SSE body; returns a problem, or undefined when complete and correct. */
export function checkChatStream(text: string): string | undefined {
  let content = "", deltas = 0, done = false, finish: unknown = null, afterDone = false;
  for (const event of text.split("\n\n")) {
    if (event.trim() === "") continue;
    if (done) afterDone = true;
    const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
    if (data === "") continue;
    if (data === "[DONE]") { done = true; continue; }
    let chunk: { choices?: { delta?: { content?: unknown }; finish_reason?: unknown }[]; error?: unknown };
    try { chunk = JSON.parse(data); } catch { return `unparsable event: ${data.slice(0, 120)}`; }
    if (chunk.error) return `error event: ${JSON.stringify(chunk.error).slice(0, 200)}`;
    const choice = chunk.choices?.[0];
    if (typeof choice?.delta?.content === "string" && choice.delta.content !== "") {
      content += choice.delta.content;
      deltas++;
    }
    if (choice?.finish_reason) finish = choice.finish_reason;
  }
  if (!done) return "no [DONE]";
  if (afterDone) return "events after [DONE]";
  if (deltas !== streamChunks) return `${deltas} content deltas, expected ${streamChunks}`;
  if (content !== streamText) return `text ${JSON.stringify(content)} differs from the upstream's`;
  if (finish !== "stop") return `finish_reason ${JSON.stringify(finish)}, expected "stop"`;
  return undefined;
}

function once(l: Lane): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(l.url, {
      method: "POST",
      agent: l.agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(l.body), authorization: `Bearer ${benchToken}` },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => { text += chunk; });
      res.on("end", () => {
        if (res.statusCode !== 200) return reject(new Error(`${l.path} stream answered ${res.statusCode}: ${text.slice(0, 300)}`));
        const problem = checkChatStream(text);
        if (problem) return reject(new Error(`${l.path} stream incomplete or wrong: ${problem}\n${text.slice(0, 600)}`));
        resolve();
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(l.body);
  });
}

async function batch(l: Lane, count: number, concurrency: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await once(l);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** Runs the pass-through and converted lanes against `gateway`, measuring its CPU per batch. */
export async function measureConvert(
  gateway: Child,
  upstreams: { openai: Child; anthropic: Child },
  models: { pass: string; conv: string },
  s: ConvertSettings,
  progress: (line: string) => void = () => {},
): Promise<ConvertRun> {
  const lanes = {
    pass: lane("pass-through", gateway.url, models.pass, s.concurrency, upstreams.openai),
    conv: lane("converted", gateway.url, models.conv, s.concurrency, upstreams.anthropic),
  };
  const acc = {
    pass: { streams: 0, gatewayCpuUs: 0, upstreamCpuUs: 0, wallS: 0, perBatchUs: [] as number[] },
    conv: { streams: 0, gatewayCpuUs: 0, upstreamCpuUs: 0, wallS: 0, perBatchUs: [] as number[] },
  };
  try {
    if (s.warmup > 0) {
      await batch(lanes.pass, s.warmup, s.concurrency);
      await batch(lanes.conv, s.warmup, s.concurrency);
    }
    const batches = Math.max(1, Math.min(s.batches, s.streams));
    for (let i = 0, done = 0; i < batches; i++) {
      const n = Math.round(((i + 1) * s.streams) / batches) - done;
      done += n;
      const order: ("pass" | "conv")[] = i % 2 === 0 ? ["pass", "conv"] : ["conv", "pass"];
      for (const key of order) {
        const l = lanes[key];
        const [g0, u0] = await Promise.all([gateway.cpu(), l.upstream.cpu()]);
        const t0 = performance.now();
        await batch(l, n, s.concurrency);
        const wall = (performance.now() - t0) / 1000;
        const [g1, u1] = await Promise.all([gateway.cpu(), l.upstream.cpu()]);
        const a = acc[key];
        a.streams += n;
        a.gatewayCpuUs += g1.cpuUs - g0.cpuUs;
        a.upstreamCpuUs += u1.cpuUs - u0.cpuUs;
        a.wallS += wall;
        a.perBatchUs.push((g1.cpuUs - g0.cpuUs) / n);
      }
      progress(`  batch ${i + 1}/${batches}: gateway CPU/stream pass-through ${Math.round(acc.pass.perBatchUs.at(-1)!)} µs, converted ${Math.round(acc.conv.perBatchUs.at(-1)!)} µs`);
    }
  } finally {
    lanes.pass.agent.destroy();
    lanes.conv.agent.destroy();
  }
  return { pass: acc.pass, conv: acc.conv };
}
