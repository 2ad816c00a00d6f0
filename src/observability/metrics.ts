// Every metric the gateway exposes is declared here, so names and labels stay one list.
// Labels are names from gateway.yaml (model, channel, group), never keys or token values.

import client from "prom-client";

export const registry = new client.Registry();

/**
 * The series of one metric, found by their label values one Map level per label: a lookup
 * builds no key string. Series are made on first use and kept (their number is bounded by
 * the names in gateway.yaml), so the Maps do not churn (see the note on long-lived Maps in
 * server.ts).
 */
class SeriesIndex<T> {
  readonly #root = new Map<string, unknown>();
  readonly #all: T[] = [];

  constructor(private readonly make: (values: readonly string[]) => T) {}

  /** The series for these label values (in the metric's label order). */
  get(values: readonly string[]): T {
    let level = this.#root;
    const last = values.length - 1;
    for (let i = 0; i < last; i++) {
      let next = level.get(values[i]) as Map<string, unknown> | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(values[i], next);
      }
      level = next;
    }
    let series = level.get(values[last]) as T | undefined;
    if (series === undefined) {
      series = this.make([...values]);
      level.set(values[last], series);
      this.#all.push(series);
    }
    return series;
  }

  all(): readonly T[] {
    return this.#all;
  }

  clear(): void {
    this.#root.clear();
    this.#all.length = 0;
  }
}

/**
 * Counter increments gathered on the hot path and handed to prom-client only when
 * /metrics is scraped (its label handling costs more than the rest of a counter).
 */
export class Tally {
  readonly #series = new SeriesIndex((values) => ({ values, n: 0 }));

  /** Adds `n` to the series named by the label values (in the counter's label order). */
  add(n: number, ...values: string[]): void {
    this.#series.get(values).n += n;
  }

  /** Moves the gathered increments into the counter, times `scale`. */
  drainInto(counter: client.Counter<string>, scale = 1): void {
    for (const series of this.#series.all()) {
      if (series.n === 0) continue;
      counter.labels(...series.values).inc(series.n * scale);
      series.n = 0;
    }
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
 */
export class Histogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly #series: SeriesIndex<Series>;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {
    this.#series = new SeriesIndex((values) => {
      const labels: Record<string, string> = {};
      labelNames.forEach((name, i) => (labels[name] = values[i]));
      return { labels, counts: new Float64Array(buckets.length), sum: 0, count: 0 };
    });
    registry.registerMetric(this as unknown as client.Metric<string>);
  }

  /** Records one value (seconds) for the series named by the label values, in label order. */
  observe(value: number, ...values: string[]): void {
    const series = this.#series.get(values);
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
    for (const s of this.#series.all()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i];
        values.push({ metricName: `${this.name}_bucket`, labels: withLabel(s.labels, le), value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: withLabel(s.labels, "+Inf"), value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.#series.clear();
  }
}

/** A series' labels plus `le`. Not `{ ...labels, le }`: on Node 20 a property added after an
 * object spread builds a new hidden class each time (~200 B that only a full GC frees). */
function withLabel(labels: Record<string, string>, le: number | string): Record<string, string | number> {
  return Object.assign({}, labels, { le });
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

/** Where reservations in flight are counted: each gateway server adds its accounts. */
const reservationSources = new Set<() => number>();

/** Counts an Accounts' reservations in gateway_reservations_held; returns the undo. */
export function countReservations(source: () => number): () => void {
  reservationSources.add(source);
  return () => reservationSources.delete(source);
}

export const reservationsHeld = new client.Gauge({
  name: "gateway_reservations_held",
  help: "Pre-deductions held by requests in flight (settled or released when each ends; 0 when idle).",
  registers: [registry],
  collect() {
    let held = 0;
    for (const source of reservationSources) held += source();
    this.set(held);
  },
});

export const configReloadsTotal = new client.Counter({
  name: "gateway_config_reloads_total",
  help: "Config reload attempts by outcome: applied, unchanged or rejected.",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const tokenCountEstimates = new client.Counter({
  name: "gateway_token_count_estimates_total",
  help: "Token-count requests answered by the gateway's local estimate (no channel of the route's protocol could count), by route.",
  labelNames: ["protocol"] as const,
  registers: [registry],
});

export const upstreamRetriesTotal = new client.Counter({
  name: "gateway_upstream_retries_total",
  help: "Upstream attempts that failed over to another channel, by failed channel and reason.",
  labelNames: ["channel", "reason"] as const,
  registers: [registry],
});
