// Latency at a fixed offered rate: an open-loop load generator. Requests leave on a fixed
// schedule (one every 1/rate s) over a pool of keep-alive connections, whether or not
// earlier ones have answered, and each latency is measured from the moment its request was
// due, so time spent waiting for a free connection counts too (no coordinated omission).
//
// Why not autocannon's own rate option: it lets each connection send its per-second quota
// back to back at the start of every second and then idle, so its "fixed rate" is bursts at
// full speed and its tails measure queueing in the burst, not the time a proxy adds.

import { Pool } from "undici";
import type { Child } from "./ipc.js";
import { measured, requestBody, requestHeaders, type Counted, type LoadRun } from "./load.js";

export interface PacedSettings {
  readonly connections: number;
  /** Requests per second, offered on schedule. */
  readonly rate: number;
  readonly durationS: number;
  readonly warmupS: number;
}

/** Offers `rate` req/s to `target` for warmupS (not recorded), then durationS (recorded). */
export async function measurePaced(target: Child, upstream: Child, s: PacedSettings): Promise<LoadRun> {
  const pool = new Pool(target.url, { connections: s.connections, pipelining: 1 });
  try {
    if (s.warmupS > 0) await offer(pool, s.rate, s.warmupS);
    return await measured(target, upstream, () => offer(pool, s.rate, s.durationS));
  } finally {
    await pool.destroy();
  }
}

/** Sends requests on schedule for `seconds`; resolves once every one of them has ended. */
function offer(pool: Pool, rate: number, seconds: number): Promise<Counted> {
  const out = { latencies: [] as number[], errors: 0, non2xx: 0 };
  const gapMs = 1000 / rate;
  const start = performance.now();
  const end = start + seconds * 1000;
  let due = start;
  let pending = 0;
  let scheduling = true;
  return new Promise((resolve) => {
    const settle = () => {
      if (--pending === 0 && !scheduling) resolve(out);
    };
    const send = (dueAt: number) => {
      pending++;
      pool.request({ path: "/v1/chat/completions", method: "POST", headers: requestHeaders, body: requestBody }).then(
        async (res) => {
          await res.body.dump();
          if (res.statusCode >= 200 && res.statusCode < 300) out.latencies.push(performance.now() - dueAt);
          else out.non2xx++;
        },
        () => { out.errors++; },
      ).finally(settle);
    };
    // A 1 ms tick sends every request that has come due since the last one; a request is
    // timed from when it was due, not from when the tick got to it.
    const timer = setInterval(() => {
      const now = performance.now();
      for (; due <= now && due < end; due += gapMs) send(due);
      if (due >= end) {
        clearInterval(timer);
        scheduling = false;
        if (pending === 0) resolve(out);
      }
    }, 1);
  });
}
