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
export const channelCostTally = new Tally();
export const upstreamErrorTally = new Tally();

/** The model label: a model declared in gateway.yaml by its name, anything else (a name a
 * reload removed, a name no config knows) as "other", none as "": the label set stays
 * bounded by the config whatever clients send. */
export function modelLabel(models: ReadonlyMap<string, unknown>, name: string | undefined): string {
  if (name === undefined || name === "") return "";
  return models.has(name) ? name : "other";
}

/** The class of an upstream attempt's outcome (a status, or a transport failure kind) for
 * gateway_upstream_errors_total; undefined when it is no error (2xx, 1xx, the client left). */
export function upstreamErrorClass(outcome: string): string | undefined {
  switch (outcome) {
    case "connect":
    case "reset":
      return "connect";
    case "timeout":
      return "timeout";
    case "aborted":
      return undefined;
    case "broken_answer":
      return "broken_answer";
  }
  const status = Number(outcome);
  if (status === 429) return "rate_limited";
  if (status === 401 || status === 403) return "auth";
  if (status >= 500) return "server";
  if (status >= 400) return "client";
  return undefined;
}
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

export const timeToFirstToken = new Histogram("gateway_time_to_first_token_seconds",
  "Time from request arrival to the first byte of the answer's body reaching the client (the first chunk of a stream), for answers an upstream served.",
  ["model", "channel"], durationBuckets);

export const upstreamErrorsTotal = new client.Counter({
  name: "gateway_upstream_errors_total",
  help: "Failed upstream attempts by channel and class: connect, timeout, rate_limited (429), auth (a key the provider refused: 401/403 whose fields blame the key), quota (a key out of credit), server (5xx), client (other 4xx), broken_answer.",
  labelNames: ["channel", "class"] as const,
  registers: [registry],
  collect() {
    upstreamErrorTally.drainInto(this);
  },
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

export const channelCostTotal = new client.Counter({
  name: "gateway_channel_cost_total",
  help: "What served requests cost the operator in the billing currency, by channel (channels[].cost, else the list price); with gateway_cost_total, the margin.",
  labelNames: ["channel"] as const,
  registers: [registry],
  collect() {
    channelCostTally.drainInto(this, 1e-9);
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

/** Where the running config's generation is read: each gateway server (or cluster primary) adds its RuntimeBox. */
const generationSources = new Set<() => number>();

/** Reports a config holder's generation in gateway_config_generation; returns the undo. */
export function countConfigGeneration(source: () => number): () => void {
  generationSources.add(source);
  return () => generationSources.delete(source);
}

// The gauges below are aggregated across cluster workers by their greatest value: every
// process runs the same generation, and only the primary (or a lone process) reloads, so
// the workers' zeros never hide its values.
export const configGeneration = new client.Gauge({
  name: "gateway_config_generation",
  help: "Generation of the running config: 1 at start, one more for each reload applied.",
  aggregator: "max",
  registers: [registry],
  collect() {
    let generation = 0;
    for (const source of generationSources) generation = Math.max(generation, source());
    this.set(generation);
  },
});

export const configLastReloadSuccessful = new client.Gauge({
  name: "gateway_config_last_reload_successful",
  help: "1 when the last config load or reload attempt succeeded (applied or unchanged), 0 when it was rejected and the previous config kept serving.",
  aggregator: "max",
  registers: [registry],
});

export const configLastReloadTime = new client.Gauge({
  name: "gateway_config_last_reload_timestamp_seconds",
  help: "Unix time of the last config load or reload attempt, whatever its outcome.",
  aggregator: "max",
  registers: [registry],
});

export const tokenCountEstimates = new client.Counter({
  name: "gateway_token_count_estimates_total",
  help: "Token-count requests answered by the gateway's local estimate (no channel of the route's protocol could count), by route.",
  labelNames: ["protocol"] as const,
  registers: [registry],
});

export const billingFaults = new client.Counter({
  name: "gateway_billing_faults_total",
  help: "Answers billed at their reservation because they completed without the usage their provider always sends (a token-priced model's whole answer), by channel and reason.",
  labelNames: ["channel", "reason"] as const,
  registers: [registry],
});

export const upstreamRetriesTotal = new client.Counter({
  name: "gateway_upstream_retries_total",
  help: "Upstream attempts that failed over to another channel, by failed channel and reason.",
  labelNames: ["channel", "reason"] as const,
  registers: [registry],
});

export const keyProbesTotal = new client.Counter({
  name: "gateway_key_probes_total",
  help: "Probes the gateway sent on a channel key to confirm a fault the provider named only in an error message (routing/key-probes.ts), by channel and outcome: confirmed (the key is taken out), healthy or inconclusive (it stays).",
  labelNames: ["channel", "outcome"] as const,
  registers: [registry],
});

export const keyRecoveryProbesTotal = new client.Counter({
  name: "gateway_channel_key_recovery_probes_total",
  help: "Periodic probes (channels[].probe) of channel keys out of rotation by their cooldown (routing/key-recovery.ts), by channel and result: recovered (it answered 2xx and is back in rotation), failed (it answered otherwise and stays out), no_answer (no answer in time; it stays out).",
  labelNames: ["channel", "result"] as const,
  registers: [registry],
});

// Channel keys, labelled by fingerprint (routing/key-health.ts: the first and last 4 hex
// digits of the key's sha256), never by the key; bounded by the keys configured.

export const keyFailureTally = new Tally();

export const channelKeyFailuresTotal = new client.Counter({
  name: "gateway_channel_key_failures_total",
  help: "Failed upstream attempts per channel key (by fingerprint) and class: auth (refused, by the provider's status and error fields) and quota (out of credit or quota) take the key out of rotation; rate_limited, server, client, connect, broken_answer do not.",
  labelNames: ["channel", "key", "class"] as const,
  registers: [registry],
  collect() {
    keyFailureTally.drainInto(this);
  },
});

/** A channel key's rotation state. */
export interface KeyStateReport {
  readonly channel: string;
  readonly key: string;
  /** none: in rotation; auth or quota: out by its cooldown; manual: an operator took it out
   * (whatever its cooldown). */
  readonly reason: "none" | "auth" | "quota" | "manual";
  /** While out by its cooldown: when it comes back (epoch ms). */
  readonly until?: number;
  /** While an operator has it out: who, why and when (epoch ms). */
  readonly manual?: { readonly actor: string; readonly reason: string; readonly at: number };
}

/** A channel key's attempts over the last few minutes, as one process saw them. */
export interface KeyRecentReport {
  readonly channel: string;
  readonly key: string;
  readonly attempts: number;
  readonly failures: number;
  readonly seconds: number;
}

/** What a gateway server reports of its channel keys. */
export interface KeyReportSource {
  states(): Promise<readonly KeyStateReport[]>;
  recent(): readonly KeyRecentReport[];
}

const keySources = new Set<KeyReportSource>();

/** Reports a server's channel keys in the gateway_channel_key_* gauges; returns the undo. */
export function reportKeys(source: KeyReportSource): () => void {
  keySources.add(source);
  return () => keySources.delete(source);
}

export const channelKeyUp = new client.Gauge({
  name: "gateway_channel_key_up",
  help: "1 while a channel key (by fingerprint) is in rotation, 0 while it is out of rotation for its reason (auth: refused; quota: out of credit or quota) until channels[].key_cooldown passes, or (manual) until an operator puts it back.",
  labelNames: ["channel", "key", "reason"] as const,
  // Cluster workers read the same shared records: a key any of them sees out is out.
  aggregator: "min",
  registers: [registry],
  async collect() {
    this.reset();
    for (const source of keySources) {
      for (const r of await source.states()) this.labels(r.channel, r.key, r.reason).set(r.reason === "none" ? 1 : 0);
    }
  },
});

export const channelKeyBackAt = new client.Gauge({
  name: "gateway_channel_key_back_timestamp_seconds",
  help: "For a channel key out of rotation (by fingerprint): the Unix time its cooldown ends and it is tried again.",
  labelNames: ["channel", "key"] as const,
  aggregator: "max",
  registers: [registry],
  async collect() {
    this.reset();
    for (const source of keySources) {
      for (const r of await source.states()) if (r.until !== undefined) this.labels(r.channel, r.key).set(r.until / 1000);
    }
  },
});

export const channelKeyTakenOutAt = new client.Gauge({
  name: "gateway_channel_key_taken_out_timestamp_seconds",
  help: "For a channel key an operator took out of rotation (by fingerprint; `gateway channels key out`): the Unix time it was taken out, labelled with who did it and why (at most 200 characters, as they gave it). It stays out until put back.",
  labelNames: ["channel", "key", "actor", "reason"] as const,
  aggregator: "max",
  registers: [registry],
  async collect() {
    this.reset();
    for (const source of keySources) {
      for (const r of await source.states()) if (r.manual) this.labels(r.channel, r.key, r.manual.actor, r.manual.reason).set(r.manual.at / 1000);
    }
  },
});

/** A gauge of one field of the recent key reports, summed over the servers of this process. */
function recentGauge(name: string, help: string, field: "attempts" | "failures" | "seconds"): client.Gauge<"channel" | "key"> {
  return new client.Gauge({
    name, help, labelNames: ["channel", "key"] as const, registers: [registry],
    collect() {
      this.reset();
      for (const source of keySources) for (const r of source.recent()) this.labels(r.channel, r.key).inc(r[field]);
    },
  });
}

export const channelKeyRecentAttempts = recentGauge("gateway_channel_key_recent_attempts",
  "Upstream attempts per channel key (by fingerprint) over the last 5 minutes.", "attempts");
export const channelKeyRecentFailures = recentGauge("gateway_channel_key_recent_failures",
  "Failed upstream attempts per channel key (by fingerprint) over the last 5 minutes (see gateway_channel_key_failures_total for their classes).", "failures");
export const channelKeyRecentSeconds = recentGauge("gateway_channel_key_recent_seconds",
  "Sum of upstream attempt durations (to response headers) per channel key over the last 5 minutes; divided by gateway_channel_key_recent_attempts, the mean latency.", "seconds");
