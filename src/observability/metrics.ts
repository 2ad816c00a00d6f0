// Every metric the gateway exposes is declared here, so names and labels stay one list.
// Labels are names from gateway.yaml (model, channel, group), never keys or token values.

import client from "prom-client";

export const registry = new client.Registry();

/** The key of a labelled series: its label values joined (names from config cannot hold NUL). */
function seriesKey(values: readonly string[]): string {
  let key = values[0];
  for (let i = 1; i < values.length; i++) key += "\u0000" + values[i];
  return key;
}

/**
 * Counter increments gathered in plain Maps on the hot path and handed to prom-client only
 * when /metrics is scraped (its label handling costs more than the rest of a counter).
 */
export class Tally {
  readonly #pending = new Map<string, { values: string[]; n: number }>();

  /** Adds `n` to the series named by the label values (in the counter's label order). */
  add(n: number, ...values: string[]): void {
    const key = seriesKey(values);
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

/** One labelled series of a Histogram: counts per bucket (not cumulative), sum, count. */
interface Series {
  readonly labels: Record<string, string>;
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A histogram whose observations cost a bucket increment: prom-client's own observe()
 * hashes and validates the labels on every call. It is registered with the registry as
 * a metric of its own and renders the same exposition (`_bucket{le}`, `_sum`, `_count`).
 * Series are created once per label set and never removed, so the Map that holds them
 * does not churn (see the note on long-lived Maps in server.ts).
 */
export class Histogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly #series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {
    registry.registerMetric(this as unknown as client.Metric<string>);
  }

  /** Records one value (seconds) for the series named by the label values, in label order. */
  observe(value: number, ...values: string[]): void {
    const key = seriesKey(values);
    let series = this.#series.get(key);
    if (!series) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]));
      series = { labels, counts: new Float64Array(this.buckets.length), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    const bounds = this.buckets;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    if (i < bounds.length) series.counts[i]++;
    series.sum += value;
    series.count++;
  }

  /** The exposition prom-client's registry renders. */
  async get(): Promise<{ name: string; help: string; type: string; values: client.MetricValueWithName<string>[]; aggregator: string }> {
    const values: client.MetricValueWithName<string>[] = [];
    for (const s of this.#series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i];
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: "+Inf" }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.#series.clear();
  }
}

const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export const requestDuration = new Histogram("gateway_request_duration_seconds",
  "Time from request arrival to the end of the response.", ["protocol", "model", "status"], durationBuckets);

export const upstreamDuration = new Histogram("gateway_upstream_duration_seconds",
  "Time from sending an upstream request to its response headers, per attempt.", ["channel", "model", "outcome"], durationBuckets);

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
