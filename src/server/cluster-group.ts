// The cluster primary's workers as one group: forks them, gives each the config to serve,
// replaces one that dies (with a backoff), hands their reports to the group's metrics and
// health, and drains them all at the end.

import cluster, { type Worker } from "node:cluster";
import { log } from "../observability/log.js";
import { GroupHealth, type GroupPhase } from "./cluster-health.js";
import { isGatewayMessage, type ToPrimary, type ToWorker } from "./cluster-messages.js";
import { GroupMetrics } from "./cluster-metrics.js";
import { RestartBackoff } from "./cluster-policy.js";

/** The config a worker serves, as the primary sends it. */
export type ConfigMessage = Extract<ToWorker, { type: "gateway:config" }>;

/** How much longer than server.drain_timeout a worker may take to exit before it is killed. */
const EXIT_GRACE_MS = 5000;

/** The workers of one cluster primary, and the phase the group is in. */
export class WorkerGroup implements GroupPhase {
  #phase: GroupPhase["phase"] = "starting";
  readonly #serving = new Set<Worker>();
  readonly #live = new Set<Worker>();
  readonly #bornAt = new Map<Worker, number>();
  readonly #restarts = new Set<NodeJS.Timeout>();
  readonly #backoff = new RestartBackoff();
  #config: ConfigMessage;
  /** The group's /metrics: every serving worker's and the primary's, aggregated. */
  readonly metrics = new GroupMetrics(() => this.#serving);
  /** The group's /healthz. */
  readonly health = new GroupHealth(() => this);

  /** `size` workers, each given `config` first. */
  constructor(readonly size: number, config: ConfigMessage) {
    this.#config = config;
  }

  /** Starting until every worker listens, then serving, then stopping. */
  get phase(): GroupPhase["phase"] {
    return this.#phase;
  }

  /** The workers whose server listens. */
  get serving(): ReadonlySet<Worker> {
    return this.#serving;
  }

  /** Workers running, serving or not. */
  get running(): number {
    return this.#live.size;
  }

  /** Forks the workers; resolves to the address they listen on once all of them do, or to
   * undefined when one fails to start. Later deaths are replaced. */
  start(): Promise<string | undefined> {
    const started = new Promise<string | undefined>((resolve) => {
      cluster.on("listening", (worker, address) => {
        this.#serving.add(worker);
        if (this.#phase === "starting" && this.#serving.size === this.size) {
          this.#phase = "serving";
          const host = address.address.includes(":") ? `[${address.address}]` : address.address;
          resolve(`http://${host}:${address.port}`);
        }
      });
      cluster.on("exit", (worker, code, signal) => {
        if (this.#exited(worker, code, signal)) resolve(undefined);
      });
    });
    for (let i = 0; i < this.size; i++) this.#fork();
    return started;
  }

  /** Sends every worker the config to serve now; workers forked later are sent it too. */
  relay(config: ConfigMessage): void {
    this.#config = config;
    for (const worker of this.#live) send(worker, config);
  }

  /** Stops replacing workers: the group is stopping. */
  halt(): void {
    this.#phase = "stopping";
    for (const timer of this.#restarts) clearTimeout(timer);
  }

  /** Tells every worker to drain and resolves once all have exited; one still running
   * `timeoutMs` (server.drain_timeout) and a grace later is killed. */
  async drain(timeoutMs: number): Promise<void> {
    const live = this.#live;
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
  }

  #fork(): Worker {
    const worker = cluster.fork();
    this.#live.add(worker);
    this.#bornAt.set(worker, Date.now());
    log.info("worker started", { worker: worker.id, pid: worker.process.pid });
    worker.on("message", (message: unknown) => {
      if (!isGatewayMessage<ToPrimary>(message)) return;
      if (message.type === "gateway:hello") send(worker, this.#config);
      else if (!this.health.handle(message)) this.metrics.handle(worker, message);
    });
    return worker;
  }

  /** Forgets a worker that exited and replaces it after a backoff; true when it failed to
   * start (the group then gives up). */
  #exited(worker: Worker, code: number, signal: string): boolean {
    this.#live.delete(worker);
    this.#serving.delete(worker);
    const lived = Date.now() - (this.#bornAt.get(worker) ?? Date.now());
    this.#bornAt.delete(worker);
    if (this.#phase === "stopping") return false;
    if (this.#phase === "starting") {
      // A worker that cannot start (its store unreachable, the port taken) would fail the
      // same way again: give up, with its own message already on stderr.
      log.error("a worker failed to start; stopping", { pid: worker.process.pid, code, signal });
      return true;
    }
    const delayMs = this.#backoff.delayAfter(lived);
    log.error("worker died; starting another", { pid: worker.process.pid, code, signal, livedMs: lived, restartInMs: delayMs });
    const timer = setTimeout(() => {
      this.#restarts.delete(timer);
      if (this.#phase !== "stopping") this.#fork();
    }, delayMs);
    this.#restarts.add(timer);
    return false;
  }
}

function send(worker: Worker, message: ToWorker): void {
  if (worker.isConnected()) worker.send(message);
}
