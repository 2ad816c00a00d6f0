// What the gateway does when it learns how an asynchronous job ended, whoever looked (a
// client's poll through the gateway or the background check): a failed job's charge is
// refunded, exactly once (the usage log marks it, then the accounts follow); a completed
// job is final. How each job ended is kept in the keyed store (`jobend:` keys).

import { log } from "../observability/log.js";
import { videoJobStatus } from "../protocols/openai/video-status.js";
import type { Accounts, KeyedStore, UsageLog } from "../state/interfaces.js";
import { JOB_TTL_MS, type JobStatus, type RememberedJob } from "./jobs.js";

/** Who saw the status (for the log). */
export type JobLook = "client" | "background";

/** How a settled job ended. */
type Ending = "completed" | "refunded";

const PREFIX = "jobend:";

export interface JobOutcomesDeps {
  readonly accounts: Accounts;
  readonly usageLog: UsageLog;
  readonly keyed: KeyedStore;
}

export class JobOutcomes {
  readonly #deps: JobOutcomesDeps;

  constructor(deps: JobOutcomesDeps) {
    this.#deps = deps;
  }

  /** Whether the job's end is known (the background check leaves it alone). */
  async isSettled(id: string): Promise<boolean> {
    return (await this.#deps.keyed.get(PREFIX + id)) !== undefined;
  }

  #settle(id: string, ending: Ending): Promise<void> {
    return this.#deps.keyed.set(PREFIX + id, ending, JOB_TTL_MS);
  }

  /** Acts on a job's status answer (OpenAI's Video object); one that says nothing clear is
   * ignored. */
  async observeAnswer(job: RememberedJob, body: Buffer, seenBy: JobLook): Promise<void> {
    const status = videoJobStatus(body, job.id);
    if (status) await this.observe(job, status, seenBy);
  }

  /**
   * Acts on a status seen for a job. A completed job keeps its charge for good (a later
   * "failed" does not undo a delivered video); a failed one is refunded. Never rejects: a
   * refund that cannot be done now (entry not visible yet, store error) is logged and
   * tried again at the job's next look.
   */
  async observe(job: RememberedJob, status: JobStatus, seenBy: JobLook): Promise<void> {
    const fields = { job: job.id, requestId: job.requestId, channel: job.channel, seenBy };
    try {
      if (status === "pending" || (await this.isSettled(job.id))) return;
      if (status === "completed") {
        await this.#settle(job.id, "completed");
        return;
      }
      const result = await this.#deps.usageLog.refund(job.requestId, Date.now());
      if (result.kind === "not-recorded") {
        log.warn("failed job's charge not found to refund; will look again", fields);
        return;
      }
      if (result.kind === "refunded") {
        await this.#deps.accounts.refund({ requestId: job.requestId, token: result.token, user: result.user, costNano: result.costNano });
        log.info("refunded a failed job", { ...fields, costNano: result.costNano, user: result.user });
      }
      await this.#settle(job.id, "refunded");
    } catch (err) {
      log.error("could not refund a failed job; will look again", { ...fields, error: String(err) });
    }
  }
}
