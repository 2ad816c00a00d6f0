// Every metric the gateway exposes is declared here, so names and labels stay one list.
// Labels are names from gateway.yaml (model, channel, group), never keys or token values.

import client from "prom-client";

export const registry = new client.Registry();

/**
 * Counter increments gathered in plain Maps on the hot path and handed to prom-client only
 * when /metrics is scraped (its label handling costs more than the rest of a counter).
 */
export class Tally {
  readonly #pending = new Map<string, { values: string[]; n: number }>();

  /** Adds `n` to the series named by the label values (in the counter's label order). */
  add(n: number, ...values: string[]): void {
    let key = values[0];
    for (let i = 1; i < values.length; i++) key += "\u0000" + values[i];
    const entry = this.#pending.get(key);
    if (entry) entry.n += n;
    else this.#pending.set(key, { values, n });
  }

  /** Moves the gathered increments into the counter, times `scale`. */
  drainInto(counter: client.Counter<string>, scale = 1): void {
    for (const { values, n } of this.#pending.values()) counter.labels(...values).inc(n * scale);
    this.#pending.clear();
  }
}

export const requestTally = new Tally();
export const tokenTally = new Tally();
export const costTally = new Tally();
client.collectDefaultMetrics({ register: registry, prefix: "gateway_process_" });

export const requestsTotal = new client.Counter({
  name: "gateway_requests_total",
  help: "Requests answered, by inbound protocol, model, channel, group and HTTP status.",
  labelNames: ["protocol", "model", "channel", "group", "status"] as const,
  registers: [registry],
  collect() {
    requestTally.drainInto(this);
  },
});

export const requestDuration = new client.Histogram({
  name: "gateway_request_duration_seconds",
  help: "Time from request arrival to the end of the response.",
  labelNames: ["protocol", "model", "status"] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  registers: [registry],
});

export const upstreamDuration = new client.Histogram({
  name: "gateway_upstream_duration_seconds",
  help: "Time from sending an upstream request to its response headers, per attempt.",
  labelNames: ["channel", "model", "outcome"] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  registers: [registry],
});

export const tokensTotal = new client.Counter({
  name: "gateway_tokens_total",
  help: "Tokens used, by model and kind (input, cache_read, cache_write, output, reasoning).",
  labelNames: ["model", "kind"] as const,
  registers: [registry],
  collect() {
    tokenTally.drainInto(this);
  },
});

export const costTotal = new client.Counter({
  name: "gateway_cost_total",
  help: "Cost charged in the billing currency, by model and group.",
  labelNames: ["model", "group"] as const,
  registers: [registry],
  collect() {
    costTally.drainInto(this, 1e-9); // gathered in integer nano-units: no drift between scrapes
  },
});

/** Requests in flight, counted with plain integer arithmetic on the hot path; the gauge
 * reads it only when scraped. */
export const inflight = { count: 0 };

export const inflightRequests = new client.Gauge({
  name: "gateway_inflight_requests",
  help: "Requests currently being served.",
  registers: [registry],
  collect() {
    this.set(inflight.count);
  },
});

export const configReloadsTotal = new client.Counter({
  name: "gateway_config_reloads_total",
  help: "Config reload attempts by outcome: applied, unchanged or rejected.",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const upstreamRetriesTotal = new client.Counter({
  name: "gateway_upstream_retries_total",
  help: "Upstream attempts that failed over to another channel, by failed channel and reason.",
  labelNames: ["channel", "reason"] as const,
  registers: [registry],
});

/**
 * Memoises a metric's labelled children by a joined key, so the hot path skips
 * prom-client's per-call label hashing. Label values come from config names and status
 * codes (bounded); the cache is still capped in case a value space is larger than thought.
 */
export function childCache<T>(make: (values: string[]) => T, cap = 10_000): (...values: string[]) => T {
  const children = new Map<string, T>();
  return (...values) => {
    let key = values[0];
    for (let i = 1; i < values.length; i++) key += "\u0000" + values[i];
    let child = children.get(key);
    if (child === undefined) {
      if (children.size >= cap) children.clear();
      child = make(values);
      children.set(key, child);
    }
    return child;
  };
}
