// Asynchronous jobs (video) live on the channel that created them: this remembers which,
// and whose they are, so a later fetch goes to the same channel and only its owner's tokens
// may fetch it. Kept in the keyed store (`job:` keys) with a TTL, so it outlives config
// reloads and, on a shared store, any gateway can serve a poll.

import type { KeyedStore } from "../state/interfaces.js";

export interface JobOwner {
  readonly channel: string;
  /** The user whose token created the job; any of that user's tokens may fetch it. */
  readonly user: string;
  /** The model as the client named it. */
  readonly model: string;
  /** The submission's request id (X-Gateway-Request-Id): its usage entry holds the charge
   * a failed job refunds. */
  readonly requestId: string;
}

/** A remembered job: its owner, and when the gateway learned of it. */
export interface RememberedJob extends JobOwner {
  readonly id: string;
  /** Epoch ms when the upstream's answer created it. */
  readonly rememberedAt: number;
}

/** How a job stands, as far as billing cares: its charge holds once completed, is refunded
 * once failed, and waits while pending. */
export type { JobStatus } from "../protocols/openai/video-status.js";

/** How long a created job can be fetched through the gateway (and is watched). */
export const JOB_TTL_MS = 48 * 3600_000;

const PREFIX = "job:";

export class Jobs {
  readonly #keyed: KeyedStore;

  constructor(keyed: KeyedStore) {
    this.#keyed = keyed;
  }

  /** Remembers a job the upstream created. */
  remember(id: string, owner: JobOwner, now = Date.now()): Promise<void> {
    const job: RememberedJob = { id, channel: owner.channel, user: owner.user, model: owner.model, requestId: owner.requestId, rememberedAt: now };
    return this.#keyed.set(PREFIX + id, JSON.stringify(job), JOB_TTL_MS);
  }

  /** The job's channel and owner, or undefined when unknown (or expired). */
  async owner(id: string): Promise<RememberedJob | undefined> {
    const value = await this.#keyed.get(PREFIX + id);
    return value === undefined ? undefined : (JSON.parse(value) as RememberedJob);
  }

  /** Every job still remembered (not past its TTL). */
  async *remembered(): AsyncIterable<RememberedJob> {
    for await (const [, value] of this.#keyed.entries(PREFIX)) yield JSON.parse(value) as RememberedJob;
  }
}
