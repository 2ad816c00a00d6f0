// The cluster primary (server.workers > 1): forks the workers, which share the listening
// socket and each serve the gateway; restarts a worker that dies (with a backoff); owns
// config reload (one watcher and SIGHUP here, compiled once, the text sent to every
// worker); drains every worker on SIGTERM; and aggregates /metrics for the group.

import cluster, { type Worker } from "node:cluster";
import { createReloader } from "../config/index.js";
import { log } from "../observability/log.js";
import { countConfigGeneration } from "../observability/metrics.js";
import { RuntimeBox } from "../runtime/box.js";
import type { Runtime } from "../runtime/types.js";
import { isGatewayMessage, type ToPrimary, type ToWorker } from "./cluster-messages.js";
import { GroupMetrics } from "./cluster-metrics.js";
import { RestartBackoff } from "./cluster-policy.js";
import { GroupHealth } from "./cluster-health.js";
import { startOpsServer, type OpsServer } from "./ops.js";

/** What the primary starts from. */
export interface PrimaryOptions {
  /** The config file (watched here only). */
  readonly path: string;
  /** Its text, compiled into `runtime`: what every worker starts from. */
  readonly source: string;
  readonly runtime: Runtime;
  readonly workers: number;
}

/** How much longer than server.drain_timeout a worker may take to exit before it is killed. */
const EXIT_GRACE_MS = 5000;

/** Runs the primary until a termination signal; resolves to the exit code. */
export async function runClusterPrimary(opts: PrimaryOptions): Promise<number> {
  const box = new RuntimeBox(opts.runtime);
  let config: ToWorker = { type: "gateway:config", source: opts.source, generation: opts.runtime.generation };
  const live = new Set<Worker>();
  const serving = new Set<Worker>();
  const bornAt = new Map<Worker, number>();
  const metrics = new GroupMetrics(() => serving);
  const health = new GroupHealth(() => ({ phase, serving }));
  const backoff = new RestartBackoff();
  const restarts = new Set<NodeJS.Timeout>();
  let phase: "starting" | "serving" | "stopping" = "starting";

  const send = (worker: Worker, message: ToWorker) => {
    if (worker.isConnected()) worker.send(message);
  };
  const fork = (): Worker => {
    const worker = cluster.fork();
    live.add(worker);
    bornAt.set(worker, Date.now());
    log.info("worker started", { worker: worker.id, pid: worker.process.pid });
    worker.on("message", (message: unknown) => {
      if (!isGatewayMessage<ToPrimary>(message)) return;
      if (message.type === "gateway:hello") send(worker, config);
      else if (!health.handle(message)) metrics.handle(worker, message);
    });
    return worker;
  };

  const reloader = createReloader({
    path: opts.path,
    box,
    onApplied: (source, runtime) => {
      config = { type: "gateway:config", source, generation: runtime.generation };
      for (const worker of live) send(worker, config);
    },
  });
  const onHangup = () => void reloader.reload("signal");
  process.on("SIGHUP", onHangup);
  countConfigGeneration(() => box.current.generation);

  // metrics.listen is served here, once for the group (workers serve only the public port):
  // bound before any worker starts, so an address in use stops the start at once.
  let ops: OpsServer | undefined;
  const metricsListen = opts.runtime.metricsListen;
  if (metricsListen) {
    try {
      ops = await startOpsServer(metricsListen, {
        metricsPath: opts.runtime.metricsPath, metricsText: () => metrics.text(), health: () => health.answer(),
      });
    } catch (err) {
      process.off("SIGHUP", onHangup);
      await reloader.close();
      process.stderr.write(`${opts.path}: metrics.listen: ${(err as Error).message}\n`);
      return 1;
    }
  }

  const started = new Promise<boolean>((resolve) => {
    cluster.on("listening", (worker, address) => {
      serving.add(worker);
      if (phase === "starting" && serving.size === opts.workers) {
        phase = "serving";
        const host = address.address.includes(":") ? `[${address.address}]` : address.address;
        log.info("gateway listening", { url: `http://${host}:${address.port}`, config: opts.path, workers: opts.workers });
        resolve(true);
      }
    });
    cluster.on("exit", (worker, code, signal) => {
      live.delete(worker);
      serving.delete(worker);
      const lived = Date.now() - (bornAt.get(worker) ?? Date.now());
      bornAt.delete(worker);
      if (phase === "stopping") return;
      if (phase === "starting") {
        // A worker that cannot start (its store unreachable, the port taken) would fail the
        // same way again: give up, with its own message already on stderr.
        log.error("a worker failed to start; stopping", { pid: worker.process.pid, code, signal });
        resolve(false);
        return;
      }
      const delayMs = backoff.delayAfter(lived);
      log.error("worker died; starting another", { pid: worker.process.pid, code, signal, livedMs: lived, restartInMs: delayMs });
      const timer = setTimeout(() => {
        restarts.delete(timer);
        if (phase !== "stopping") fork();
      }, delayMs);
      restarts.add(timer);
    });
  });

  for (let i = 0; i < opts.workers; i++) fork();
  const ok = await started;

  const stop = async (signal: string): Promise<void> => {
    phase = "stopping";
    for (const timer of restarts) clearTimeout(timer);
    process.off("SIGHUP", onHangup);
    const timeoutMs = box.current.server.drainTimeoutMs;
    log.info("draining", { signal, timeoutMs, workers: live.size });
    await reloader.close();
    const exited = [...live].map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once("exit", () => resolve()))));
    for (const worker of live) send(worker, { type: "gateway:drain" });
    const killer = setTimeout(() => {
      for (const worker of live) {
        log.warn("worker did not exit after draining; killing it", { pid: worker.process.pid });
        worker.process.kill("SIGKILL");
      }
    }, timeoutMs + EXIT_GRACE_MS);
    await Promise.all(exited);
    clearTimeout(killer);
    await ops?.close();
    log.info("stopped", { workers: opts.workers });
  };

  if (!ok) {
    await stop("startup failure");
    return 1;
  }
  return new Promise<number>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
      void stop(signal).then(() => resolve(0));
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
}
