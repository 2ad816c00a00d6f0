// Converted stream CPU: the same gateway serves streamed chat completions for two models,
// one through an `openai` channel (pass-through: the upstream's SSE bytes are relayed while
// a tap reads usage) and one through an `anthropic` channel (converted: the request is
// encoded as Messages, and each Anthropic SSE event is decoded to canonical events and
// re-encoded as chat-completions chunks); a third lane sends responses-protocol streams
// (`/v1/responses`) for the anthropic model, re-encoded as responses events. All upstreams
// stream the same 20 text pieces.
// The gateway child's CPU time is read (IPC) before and after each batch, so the figure is
// the gateway's own CPU per stream; batches alternate A B B A … so drift hits both alike.
// Every stream is checked: status 200, 20 content deltas whose text is the fake's text, a
// finish_reason "stop" and the closing [DONE].

import http from "node:http";
import type { Child } from "./ipc.js";
import { benchToken, streamChunks, streamText } from "./shared.js";

export type Path = "pass-through" | "converted" | "responses-converted";

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
  /** Responses-protocol clients on the anthropic channel. */
  readonly resp: PathRun;
}

type LaneKey = "pass" | "conv" | "resp";

interface Lane {
  readonly path: Path;
  readonly url: URL;
  readonly agent: http.Agent;
  readonly body: string;
  readonly upstream: Child;
  readonly check: (text: string) => string | undefined;
}

function lane(path: Path, base: string, model: string, concurrency: number, upstream: Child): Lane {
  const responses = path === "responses-converted";
  return {
    path, upstream,
    url: new URL(responses ? "/v1/responses" : "/v1/chat/completions", base),
    agent: new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency }),
    body: JSON.stringify(responses
      ? { model, stream: true, input: "Tell me about foxes." }
      : { model, stream: true, messages: [{ role: "user", content: "Tell me about foxes." }] }),
    check: responses ? checkResponsesStream : checkChatStream,
  };
}

/** Checks one responses-protocol SSE body: every output_text delta, in order, carrying the
 * upstream's text, sequence numbers counting from 0, and response.completed last. */
export function checkResponsesStream(text: string): string | undefined {
  let content = "", deltas = 0, completed = false, seq = 0;
  for (const event of text.split("\n\n")) {
    if (event.trim() === "") continue;
    if (completed) return "events after response.completed";
    const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
    let e: { type?: unknown; delta?: unknown; sequence_number?: unknown };
    try { e = JSON.parse(data); } catch { return `unparsable event: ${data.slice(0, 120)}`; }
    if (e.sequence_number !== seq++) return `sequence_number ${String(e.sequence_number)}, expected ${seq - 1}`;
    if (e.type === "response.output_text.delta" && typeof e.delta === "string") {
      content += e.delta;
      deltas++;
    } else if (e.type === "response.completed") completed = true;
    else if (e.type === "error" || e.type === "response.failed") return `error event: ${data.slice(0, 200)}`;
  }
  if (!completed) return "no response.completed";
  if (deltas !== streamChunks) return `${deltas} text deltas, expected ${streamChunks}`;
  if (content !== streamText) return `text ${JSON.stringify(content)} differs from the upstream's`;
  return undefined;
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
        const problem = l.check(text);
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
  const lanes: Record<LaneKey, Lane> = {
    pass: lane("pass-through", gateway.url, models.pass, s.concurrency, upstreams.openai),
    conv: lane("converted", gateway.url, models.conv, s.concurrency, upstreams.anthropic),
    resp: lane("responses-converted", gateway.url, models.conv, s.concurrency, upstreams.anthropic),
  };
  const fresh = () => ({ streams: 0, gatewayCpuUs: 0, upstreamCpuUs: 0, wallS: 0, perBatchUs: [] as number[] });
  const acc = { pass: fresh(), conv: fresh(), resp: fresh() };
  // Each batch runs the lanes in a rotated order, so drift falls on all three alike.
  const orders: LaneKey[][] = [["pass", "conv", "resp"], ["resp", "pass", "conv"], ["conv", "resp", "pass"]];
  try {
    if (s.warmup > 0) {
      for (const key of orders[0]) await batch(lanes[key], s.warmup, s.concurrency);
    }
    const batches = Math.max(1, Math.min(s.batches, s.streams));
    for (let i = 0, done = 0; i < batches; i++) {
      const n = Math.round(((i + 1) * s.streams) / batches) - done;
      done += n;
      for (const key of orders[i % orders.length]) {
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
      progress(`  batch ${i + 1}/${batches}: gateway CPU/stream pass-through ${Math.round(acc.pass.perBatchUs.at(-1)!)} µs, ` +
        `converted ${Math.round(acc.conv.perBatchUs.at(-1)!)} µs, responses converted ${Math.round(acc.resp.perBatchUs.at(-1)!)} µs`);
    }
  } finally {
    for (const l of Object.values(lanes)) l.agent.destroy();
  }
  return acc;
}
