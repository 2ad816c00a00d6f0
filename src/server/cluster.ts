// The cluster primary (server.workers > 1): forks the workers, which share the listening
// socket and each serve the gateway (cluster-group.ts); owns config reload (one watcher and
// SIGHUP here, compiled once, the text relayed to every worker); serves the group's metrics
// and health on metrics.listen; and drains every worker on SIGTERM.

import { createReloader } from "../config/reload.js";
import { log } from "../observability/log.js";
import { countConfigGeneration } from "../observability/metrics.js";
import { RuntimeBox } from "../runtime/box.js";
import type { Runtime } from "../runtime/types.js";
import { WorkerGroup, type ConfigMessage } from "./cluster-group.js";
import { startOpsServer, type OpsServer } from "./ops.js";

/** What the primary starts from. */
export interface PrimaryOptions {
  /** The config file (watched here only). */
  readonly path: string;
  /** Its text, compiled into `runtime`: what every worker starts from. */
  readonly source: string;
  readonly runtime: Runtime;
  readonly workers: number;
  /** The command line's settings, applied to each reloaded Runtime (see ReloaderOptions). */
  readonly override?: (runtime: Runtime) => Runtime;
}

/** The primary's reloads: the live Runtime, and how to stop reloading. */
interface Reloads {
  readonly box: RuntimeBox;
  close(): Promise<void>;
}

/** Runs the primary until a termination signal; resolves to the exit code. */
export async function runClusterPrimary(opts: PrimaryOptions): Promise<number> {
  const group = new WorkerGroup(opts.workers, configMessage(opts.source, opts.runtime));
  const reloads = relayReloads(opts, group);
  let ops: OpsServer | undefined;
  try {
    ops = await serveGroupOps(opts.runtime, group);
  } catch (err) {
    await reloads.close();
    process.stderr.write(`${opts.path}: metrics.listen: ${(err as Error).message}\n`);
    return 1;
  }
  const url = await group.start();
  if (url === undefined) {
    await shutDown(group, reloads, ops, "startup failure");
    return 1;
  }
  log.info("gateway listening", { url, config: opts.path, workers: opts.workers });
  await shutDown(group, reloads, ops, await terminationSignal());
  return 0;
}

function configMessage(source: string, runtime: Runtime): ConfigMessage {
  return { type: "gateway:config", source, generation: runtime.generation };
}

/** Reloads the config here, on a file change or SIGHUP, and relays each one applied to
 * every worker (which compiles the same text and swaps it in). */
function relayReloads(opts: PrimaryOptions, group: WorkerGroup): Reloads {
  const box = new RuntimeBox(opts.runtime);
  const reloader = createReloader({
    path: opts.path,
    box,
    override: opts.override,
    onApplied: (source, runtime) => group.relay(configMessage(source, runtime)),
  });
  const onHangup = () => void reloader.reload("signal");
  process.on("SIGHUP", onHangup);
  countConfigGeneration(() => box.current.generation);
  return {
    box,
    async close() {
      process.off("SIGHUP", onHangup);
      await reloader.close();
    },
  };
}

/** metrics.listen, served here once for the group (workers serve only the public port):
 * bound before any worker starts, so an address in use stops the start at once. */
async function serveGroupOps(runtime: Runtime, group: WorkerGroup): Promise<OpsServer | undefined> {
  if (!runtime.metricsListen) return undefined;
  return startOpsServer(runtime.metricsListen, {
    metricsPath: runtime.metricsPath, metricsText: () => group.metrics.text(), health: () => group.health.answer(),
  });
}

/** Stops the group: no more restarts or reloads, every worker drained, metrics.listen closed. */
async function shutDown(group: WorkerGroup, reloads: Reloads, ops: OpsServer | undefined, signal: string): Promise<void> {
  group.halt();
  const timeoutMs = reloads.box.current.server.drainTimeoutMs;
  log.info("draining", { signal, timeoutMs, workers: group.running });
  await reloads.close();
  await group.drain(timeoutMs);
  await ops?.close();
  log.info("stopped", { workers: group.size });
}

/** The first SIGTERM or SIGINT. */
function terminationSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
      resolve(signal);
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
}
