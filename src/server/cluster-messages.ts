// What a cluster primary and its workers say to each other over the IPC channel
// (node:cluster), as one tagged union each way, so both sides agree on the shapes.

import type { Registry } from "prom-client";

/** One registry's metrics as prom-client's getMetricsAsJSON() gives them. */
export type MetricsJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

/** Primary → worker. */
export type ToWorker =
  /** The config to serve: sent once at start, then after each reload the primary applied. */
  | { readonly type: "gateway:config"; readonly source: string; readonly generation: number }
  /** Stop accepting, finish in-flight requests (server.drain_timeout), exit. */
  | { readonly type: "gateway:drain" }
  /** Send this worker's own metrics (for an aggregated scrape). */
  | { readonly type: "gateway:metrics-collect"; readonly id: number }
  /** The group's aggregated metrics text a worker asked for (null: aggregation failed). */
  | { readonly type: "gateway:metrics-text"; readonly id: number; readonly text: string | null }
  /** Say which shared servers this worker cannot reach (for the primary's /healthz). */
  | { readonly type: "gateway:health-collect"; readonly id: number };

/** Worker → primary. */
export type ToPrimary =
  /** The worker listens for messages: send it the config. */
  | { readonly type: "gateway:hello" }
  /** A scrape reached this worker: answer with the whole group's metrics. */
  | { readonly type: "gateway:metrics-ask"; readonly id: number }
  /** This worker's own metrics, answering a metrics-collect. */
  | { readonly type: "gateway:metrics-json"; readonly id: number; readonly metrics: MetricsJson }
  /** This worker's degraded parts (e.g. redis, postgres), answering a health-collect. */
  | { readonly type: "gateway:health-json"; readonly id: number; readonly degraded: readonly string[] };

/** Whether an IPC message is one of ours (the channel also carries node's own). */
export function isGatewayMessage<T extends { type: string }>(message: unknown): message is T {
  return typeof message === "object" && message !== null && String((message as { type?: unknown }).type).startsWith("gateway:");
}
