// /metrics for a whole cluster: a scrape reaches one worker, which asks the primary; the
// primary collects every serving worker's registry as JSON and its own (config reloads
// are counted there), and merges them with prom-client's AggregatorRegistry (counters and
// histograms summed series by series, process metrics by their own aggregators).

import type { Worker } from "node:cluster";
import { AggregatorRegistry } from "prom-client";
import { log } from "../observability/log.js";
import { registry } from "../observability/metrics.js";
import type { MetricsJson, ToPrimary, ToWorker } from "./cluster-messages.js";

/** How long the primary waits for one worker's metrics before leaving it out of a scrape. */
const COLLECT_MS = 2000;
/** How long a worker waits for the primary's aggregated text. */
const ASK_MS = 5000;

/** The primary's side: answers a worker's metrics-ask with the group's metrics text. */
export class GroupMetrics {
  #next = 0;
  readonly #pending = new Map<number, (metrics: MetricsJson) => void>();

  /** `serving()` lists the workers to collect from (those whose server listens). */
  constructor(private readonly serving: () => Iterable<Worker>) {}

  /** Handles a worker's message; true when it was a metrics message. */
  handle(worker: Worker, message: ToPrimary): boolean {
    if (message.type === "gateway:metrics-json") {
      this.#pending.get(message.id)?.(message.metrics);
      return true;
    }
    if (message.type !== "gateway:metrics-ask") return false;
    void this.text().then(
      (text) => send(worker, { type: "gateway:metrics-text", id: message.id, text }),
      (err) => {
        log.error("cluster metrics failed", { error: String(err) });
        send(worker, { type: "gateway:metrics-text", id: message.id, text: null });
      },
    );
    return true;
  }

  /** The aggregated exposition of every serving worker and the primary. */
  async text(): Promise<string> {
    const parts = await Promise.all([registry.getMetricsAsJSON(), ...[...this.serving()].map((w) => this.#collect(w))]);
    return AggregatorRegistry.aggregate(parts.filter((p): p is MetricsJson => p !== undefined)).metrics();
  }

  #collect(worker: Worker): Promise<MetricsJson | undefined> {
    const id = this.#next++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        log.warn("a worker did not send its metrics in time; left out of this scrape", { pid: worker.process.pid });
        resolve(undefined);
      }, COLLECT_MS);
      this.#pending.set(id, (metrics) => {
        clearTimeout(timer);
        this.#pending.delete(id);
        resolve(metrics);
      });
      if (!send(worker, { type: "gateway:metrics-collect", id })) {
        clearTimeout(timer);
        this.#pending.delete(id);
        resolve(undefined);
      }
    });
  }
}

function send(worker: Worker, message: ToWorker): boolean {
  if (!worker.isConnected()) return false;
  worker.send(message);
  return true;
}

/** The worker's side: answers the primary's collects, and asks it for the group's text. */
export class WorkerMetrics {
  #next = 0;
  readonly #pending = new Map<number, (text: string | null) => void>();

  constructor(private readonly toPrimary: (message: ToPrimary) => void) {}

  /** Handles a message from the primary; true when it was a metrics message. */
  handle(message: ToWorker): boolean {
    if (message.type === "gateway:metrics-text") {
      this.#pending.get(message.id)?.(message.text);
      return true;
    }
    if (message.type !== "gateway:metrics-collect") return false;
    void registry.getMetricsAsJSON().then((metrics) => this.toPrimary({ type: "gateway:metrics-json", id: message.id, metrics }));
    return true;
  }

  /** The whole group's metrics text (what this worker's /metrics answers). */
  text(): Promise<string> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error("the cluster primary did not answer a metrics request"));
      }, ASK_MS);
      this.#pending.set(id, (text) => {
        clearTimeout(timer);
        this.#pending.delete(id);
        if (text === null) reject(new Error("the cluster primary could not aggregate metrics"));
        else resolve(text);
      });
      this.toPrimary({ type: "gateway:metrics-ask", id });
    });
  }
}
