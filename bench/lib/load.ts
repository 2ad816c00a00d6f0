// Throughput and latency under load: autocannon, non-stream chat completions, N connections
// for a fixed time after a warm-up. Latencies are taken from autocannon's per-response
// event (fractional ms) rather than its whole-millisecond histogram.

import autocannon from "autocannon";
import { benchToken, model } from "./shared.js";
import type { Child } from "./ipc.js";
import { cpuTimes, stolenShare } from "./steal.js";

export interface LoadSettings {
  readonly connections: number;
  readonly durationS: number;
  readonly warmupS: number;
  /** The request body (default: the non-stream chat request, requestBody). */
  readonly body?: string;
}

export interface LoadRun {
  readonly requests: number;
  readonly seconds: number;
  readonly latencies: Float64Array;
  readonly errors: number;
  readonly non2xx: number;
  /** CPU seconds used during the measured run, per process. */
  readonly targetCpuS: number;
  readonly upstreamCpuS: number;
  readonly driverCpuS: number;
  readonly targetRssBytes: number;
  /** Share of the target's CPU time the host took during the run (NaN: unknown). */
  readonly stolen: number;
}

/** The non-stream chat request every load generator sends. */
export const requestBody = JSON.stringify({
  model,
  messages: [
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content: "Say hello in one short sentence." },
  ],
  temperature: 0.2,
  max_tokens: 32,
});

export const requestHeaders = {
  "content-type": "application/json",
  authorization: `Bearer ${benchToken}`,
  "user-agent": "gateway-bench/1.0",
};

/** The streamed chat request: the same question, answered as an SSE stream. */
export const streamRequestBody = JSON.stringify({ ...JSON.parse(requestBody), stream: true });

function cannon(url: string, connections: number, durationS: number, onLatency?: (ms: number) => void, body = requestBody) {
  const instance = autocannon({
    url: `${url}/v1/chat/completions`, method: "POST", headers: requestHeaders, body, connections, duration: durationS, timeout: 10,
  });
  if (onLatency) {
    instance.on("response", (_client, status, _bytes, responseTime) => {
      if (status >= 200 && status < 300) onLatency(responseTime);
    });
  }
  return instance;
}

/** Warms `target` up, then measures it; `upstream` is sampled for CPU too. */
export async function measureLoad(target: Child, upstream: Child, s: LoadSettings): Promise<LoadRun> {
  if (s.warmupS > 0) await cannon(target.url, s.connections, s.warmupS, undefined, s.body);
  return measured(target, upstream, async () => {
    const latencies: number[] = [];
    const result = await cannon(target.url, s.connections, s.durationS, (v) => latencies.push(v), s.body);
    return { latencies, errors: result.errors, non2xx: result.non2xx };
  });
}

/** What a load generator counted: latencies of the 2xx answers (ms), failures apart. */
export interface Counted {
  readonly latencies: readonly number[];
  readonly errors: number;
  readonly non2xx: number;
}

/** Runs `load` with the CPU time of the target, the upstream and this process, and the
 * host's steal on the target's CPU, read around it. */
export async function measured(target: Child, upstream: Child, load: () => Promise<Counted>): Promise<LoadRun> {
  const [t0, u0] = await Promise.all([target.cpu(), upstream.cpu()]);
  const d0 = process.cpuUsage();
  const s0 = cpuTimes(target.cpuNumber);
  const started = performance.now();
  const counted = await load();
  const seconds = (performance.now() - started) / 1000;
  const d1 = process.cpuUsage(d0);
  const stolen = stolenShare(s0, cpuTimes(target.cpuNumber));
  const [t1, u1] = await Promise.all([target.cpu(), upstream.cpu()]);
  return {
    stolen,
    requests: counted.latencies.length,
    seconds,
    latencies: Float64Array.from(counted.latencies),
    errors: counted.errors,
    non2xx: counted.non2xx,
    targetCpuS: (t1.cpuUs - t0.cpuUs) / 1e6,
    upstreamCpuS: (u1.cpuUs - u0.cpuUs) / 1e6,
    driverCpuS: (d1.user + d1.system) / 1e6,
    targetRssBytes: t1.rssBytes,
  };
}
