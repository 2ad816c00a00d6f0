// Asynchronous jobs (video) live on the channel that created them: this remembers which,
// and whose they are, so a later fetch goes to the same channel and only its owner's tokens
// may fetch it. Keyed by names, in an LRU with a TTL; it outlives config reloads.

import { LRUCache } from "lru-cache";

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

const jobs = new LRUCache<string, RememberedJob>({ max: 100_000, ttl: JOB_TTL_MS });

/** Remembers a job the upstream created. */
export function rememberJob(id: string, owner: JobOwner): void {
  jobs.set(id, { id, channel: owner.channel, user: owner.user, model: owner.model, requestId: owner.requestId, rememberedAt: Date.now() });
}

/** The job's channel and owner, or undefined when unknown (or expired). */
export function jobOwner(id: string): RememberedJob | undefined {
  return jobs.get(id);
}

/** Every job still remembered (not past its TTL), most recent first. */
export function rememberedJobs(): IterableIterator<RememberedJob> {
  return jobs.values();
}

/** Forgets every job (tests). */
export function clearJobs(): void {
  jobs.clear();
}
