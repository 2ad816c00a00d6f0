// A cluster worker: serves the gateway on the socket the primary shares, from the config
// text the primary sends (it compiles and validates it first; workers never watch the
// file), and drains when the primary says so or on its own SIGTERM/SIGINT.

import { compileSource, formatIssue, ConfigError, sourceHashOf } from "../config/index.js";
import { keepStaticSettings } from "../config/reload.js";
import { applyLogLevel, errorText, log } from "../observability/log.js";
import { RuntimeBox } from "../runtime/box.js";
import { isGatewayMessage, type ToPrimary, type ToWorker } from "./cluster-messages.js";
import { WorkerMetrics } from "./cluster-metrics.js";

/** A gateway being served: what a worker needs of it. */
export interface Serving {
  /** Stops accepting, lets in-flight requests finish (server.drain_timeout), releases state. */
  stop(): Promise<{ forced: number }>;
  /** Shared servers this process cannot reach now (its /healthz `degraded`). */
  degraded(): readonly string[];
}

/** Opens the state and starts the gateway on `box`; throws with a message for the operator. */
export type StartServing = (box: RuntimeBox, metricsText: () => Promise<string>) => Promise<Serving>;

type ConfigMessage = Extract<ToWorker, { type: "gateway:config" }>;

/** Runs this process as a worker until it is told to stop, then exits (0 after a drain,
 * 1 when it could not start). */
export async function runClusterWorker(opts: { path: string; start: StartServing }): Promise<never> {
  const toPrimary = (message: ToPrimary) => {
    if (process.connected) process.send!(message);
  };
  const metrics = new WorkerMetrics(toPrimary);
  let box: RuntimeBox | undefined;
  let serving: Serving | undefined;
  // Before the config came there is nothing to drain; while the gateway starts, a stop
  // request is remembered and honoured once it serves.
  let stopAsked = false;
  let onStop: () => void = () => {
    if (!box) process.exit(0);
    stopAsked = true;
  };
  let firstConfig: (message: ConfigMessage) => void = () => {};
  const configured = new Promise<ConfigMessage>((resolve) => (firstConfig = resolve));

  process.on("message", (message: unknown) => {
    if (!isGatewayMessage<ToWorker>(message) || metrics.handle(message)) return;
    if (message.type === "gateway:health-collect") toPrimary({ type: "gateway:health-json", id: message.id, degraded: serving?.degraded() ?? [] });
    else if (message.type === "gateway:drain") onStop();
    else if (message.type === "gateway:config") {
      if (box) apply(box, message, opts.path);
      else firstConfig(message);
    }
  });
  // The primary reloads on SIGHUP; a terminal hangup reaching the whole group must not end
  // the workers.
  process.on("SIGHUP", () => {});
  process.once("SIGTERM", () => onStop());
  process.once("SIGINT", () => onStop());
  // A worker whose primary is gone (killed) is ended by node:cluster itself: no orphans.
  toPrimary({ type: "gateway:hello" });

  const first = await configured;
  try {
    box = new RuntimeBox(compileSource(first.source, { path: opts.path, generation: first.generation }).runtime);
    applyLogLevel(box.current.logLevel);
    serving = await opts.start(box, () => metrics.text());
  } catch (err) {
    process.stderr.write(`${opts.path}: ${err instanceof ConfigError ? err.message : (err as Error).message}\n`);
    // Exit now: a half-opened store (a client retrying its connection) could keep this
    // process alive, and the primary waits for the exit to report the failure.
    process.exit(1);
  }

  const started = serving;
  const stopped = new Promise<void>((resolve) => {
    let stopping = false;
    onStop = () => {
      if (stopping) return;
      stopping = true;
      void started.stop().then(({ forced }) => {
        log.info("worker stopped", { pid: process.pid, forced });
        resolve();
      });
    };
  });
  if (stopAsked) onStop();
  await stopped;
  // Drained and closed: nothing is left to finish, and the primary waits for this exit.
  process.exit(0);
}

/** Swaps in the config the primary applied (it compiled this text already). */
function apply(box: RuntimeBox, message: ConfigMessage, path: string): void {
  const running = box.current;
  if (sourceHashOf(message.source) === running.sourceHash) return;
  try {
    const { runtime } = compileSource(message.source, { path, generation: message.generation });
    box.swap(keepStaticSettings(runtime, running));
    if (runtime.logLevel !== running.logLevel) applyLogLevel(runtime.logLevel);
    log.info("worker applied config", { pid: process.pid, generation: message.generation });
  } catch (err) {
    // The primary compiled this same text; failing here means the environment differs.
    const issues = err instanceof ConfigError ? err.issues.map(formatIssue) : [errorText(err)];
    log.error("worker could not apply the primary's config; keeping its own", { pid: process.pid, issues });
  }
}
