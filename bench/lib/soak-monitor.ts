// Samples the gateway process over the soak: RSS from /proc/<pid>/status (VmRSS), heap in
// use and requests in flight from /metrics, and the client's completed-request count, so
// memory can be read against load; and judges whether RSS stayed flat after warm-up.

import { readFile } from "node:fs/promises";
import { metricSum, scrape } from "./soak-metrics.js";

export interface Sample {
  /** Seconds since the soak's traffic started. */
  readonly t: number;
  readonly rssBytes: number;
  readonly heapUsedBytes?: number;
  readonly inflight?: number;
  /** Client requests finished so far. */
  readonly requests: number;
}

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (!kb) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb[1]) * 1024;
}

export interface Monitor {
  readonly samples: Sample[];
  stop(): void;
}

export function startMonitor(o: { pid: number; base: URL; everyMs: number; requests: () => number }): Monitor {
  const samples: Sample[] = [];
  const started = performance.now();
  const sample = async () => {
    const t = (performance.now() - started) / 1000;
    const requests = o.requests();
    const rssBytes = await rssOf(o.pid).catch(() => NaN);
    const text = await scrape(o.base).catch(() => "");
    samples.push({
      t, rssBytes, requests,
      heapUsedBytes: metricSum(text, "gateway_process_nodejs_heap_size_used_bytes"),
      inflight: metricSum(text, "gateway_inflight_requests"),
    });
  };
  void sample();
  const timer = setInterval(() => void sample(), o.everyMs);
  return { samples, stop: () => clearInterval(timer) };
}

export interface Flatness {
  readonly warmupEndS: number;
  readonly middleMaxBytes: number;
  readonly lastMaxBytes: number;
  /** Growth of the last third's max over the middle third's, as a fraction. */
  readonly growth: number;
  /** Lowest heap in use in the middle and last thirds: a leak raises the floor GCs return to. */
  readonly middleHeapFloorBytes?: number;
  readonly lastHeapFloorBytes?: number;
  /** Least-squares slope over the last two thirds, bytes per minute. */
  readonly slopeBytesPerMin: number;
  readonly flat: boolean;
}

/** The first third is warm-up; flat when the last third's max RSS is within `tolerance` of
 * the middle third's. */
export function judgeFlatness(samples: readonly Sample[], tolerance = 0.1): Flatness | undefined {
  const valid = samples.filter((s) => Number.isFinite(s.rssBytes));
  if (valid.length < 6) return undefined;
  const end = valid[valid.length - 1].t;
  const middle = valid.filter((s) => s.t >= end / 3 && s.t < (2 * end) / 3);
  const last = valid.filter((s) => s.t >= (2 * end) / 3);
  const max = (xs: readonly Sample[]) => Math.max(...xs.map((s) => s.rssBytes));
  const middleMaxBytes = max(middle);
  const lastMaxBytes = max(last);
  const growth = (lastMaxBytes - middleMaxBytes) / middleMaxBytes;
  const heapFloor = (xs: readonly Sample[]) => {
    const heaps = xs.map((s) => s.heapUsedBytes).filter((h): h is number => h !== undefined);
    return heaps.length ? Math.min(...heaps) : undefined;
  };
  const fit = [...middle, ...last];
  const mt = fit.reduce((a, s) => a + s.t, 0) / fit.length;
  const mr = fit.reduce((a, s) => a + s.rssBytes, 0) / fit.length;
  const cov = fit.reduce((a, s) => a + (s.t - mt) * (s.rssBytes - mr), 0);
  const varT = fit.reduce((a, s) => a + (s.t - mt) ** 2, 0);
  return {
    warmupEndS: end / 3, middleMaxBytes, lastMaxBytes, growth,
    middleHeapFloorBytes: heapFloor(middle), lastHeapFloorBytes: heapFloor(last),
    slopeBytesPerMin: varT > 0 ? (cov / varT) * 60 : 0,
    flat: growth <= tolerance,
  };
}
