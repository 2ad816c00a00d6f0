// /healthz for a whole cluster, served by the primary on metrics.listen: it asks every
// serving worker which shared servers (Redis, PostgreSQL) it cannot reach, and answers
// with the union. Workers share those servers, so one worker's view is the group's.

import type { Worker } from "node:cluster";
import type { ToPrimary, ToWorker } from "./cluster-messages.js";
import type { HealthAnswer } from "./ops.js";

/** How long the primary waits for one worker's answer before leaving it out. */
const COLLECT_MS = 2000;

/** What the primary's cluster loop knows of itself. */
export interface GroupPhase {
  readonly phase: "starting" | "serving" | "stopping";
  readonly serving: ReadonlySet<Worker>;
}

export class GroupHealth {
  #next = 0;
  readonly #pending = new Map<number, (degraded: readonly string[]) => void>();

  constructor(private readonly group: () => GroupPhase) {}

  /** Handles a worker's message; true when it was a health message. */
  handle(message: ToPrimary): boolean {
    if (message.type !== "gateway:health-json") return false;
    this.#pending.get(message.id)?.(message.degraded);
    return true;
  }

  /** 200 while workers serve ("degraded" naming what they cannot reach); 503 while starting,
   * stopping or with no worker serving. */
  async answer(): Promise<HealthAnswer> {
    const { phase, serving } = this.group();
    const workers = serving.size;
    if (phase !== "serving" || workers === 0) {
      const status = phase === "stopping" ? "draining" : phase === "starting" ? "starting" : "no worker serving";
      return { status: 503, body: JSON.stringify({ status, workers, degraded: [] }) };
    }
    const answers = await Promise.all([...serving].map((w) => this.#collect(w)));
    const degraded = [...new Set(answers.flat())].sort();
    return { status: 200, body: JSON.stringify({ status: degraded.length > 0 ? "degraded" : "ok", workers, degraded }) };
  }

  #collect(worker: Worker): Promise<readonly string[]> {
    const id = this.#next++;
    return new Promise((resolve) => {
      const done = (degraded: readonly string[]) => {
        clearTimeout(timer);
        this.#pending.delete(id);
        resolve(degraded);
      };
      const timer = setTimeout(() => done([]), COLLECT_MS);
      this.#pending.set(id, done);
      if (!worker.isConnected()) return done([]);
      worker.send({ type: "gateway:health-collect", id } satisfies ToWorker);
    });
  }
}
