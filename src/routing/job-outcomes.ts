// What the gateway does when it learns how an asynchronous job ended, whoever looked (a
// client's poll through the gateway or the background check): a failed job's charge is
// refunded, exactly once; a completed job is final. Owned by the server, like its ledger.

import { LRUCache } from "lru-cache";
import type { Ledger } from "../billing/ledger.js";
import { log } from "../observability/log.js";
import { videoJobStatus } from "../protocols/openai/video-status.js";
import { JOB_TTL_MS, type JobStatus, type RememberedJob } from "./jobs.js";

/** Who saw the status (for the log). */
export type JobLook = "client" | "background";

/** How a settled job ended. */
type Ending = "completed" | "refunded";

export class JobOutcomes {
  readonly #ledger: Ledger;
  /** Jobs whose end is known and acted on: nothing more to watch or refund. */
  readonly #settled = new LRUCache<string, Ending>({ max: 100_000, ttl: JOB_TTL_MS });

  constructor(ledger: Ledger) {
    this.#ledger = ledger;
  }

  /** Whether the job's end is known here (the background check leaves it alone). */
  isSettled(id: string): boolean {
    return this.#settled.has(id);
  }

  /** Acts on a job's status answer (OpenAI's Video object); one that says nothing clear is
   * ignored. */
  observeAnswer(job: RememberedJob, body: Buffer, seenBy: JobLook): void {
    const status = videoJobStatus(body, job.id);
    if (status) this.observe(job, status, seenBy);
  }

  /**
   * Acts on a status seen for a job. A completed job keeps its charge for good (a later
   * "failed" does not undo a delivered video); a failed one is refunded. Never throws: a
   * refund the store cannot do now (entry not visible yet, store error) is logged and
   * tried again at the job's next look.
   */
  observe(job: RememberedJob, status: JobStatus, seenBy: JobLook): void {
    if (status === "pending" || this.#settled.has(job.id)) return;
    if (status === "completed") {
      this.#settled.set(job.id, "completed");
      return;
    }
    const fields = { job: job.id, requestId: job.requestId, channel: job.channel, seenBy };
    try {
      const result = this.#ledger.refund(job.requestId);
      if (result.kind === "not-recorded") {
        log.warn("failed job's charge not found to refund; will look again", fields);
        return;
      }
      this.#settled.set(job.id, "refunded");
      if (result.kind === "refunded") log.info("refunded a failed job", { ...fields, costNano: result.costNano, user: result.user });
    } catch (err) {
      log.error("could not refund a failed job; will look again", { ...fields, error: String(err) });
    }
  }
}
