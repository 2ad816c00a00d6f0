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
}

/** How long a created job can be fetched through the gateway. */
const JOB_TTL_MS = 48 * 3600_000;

const jobs = new LRUCache<string, JobOwner>({ max: 100_000, ttl: JOB_TTL_MS });

/** Remembers a job the upstream created. */
export function rememberJob(id: string, owner: JobOwner): void {
  jobs.set(id, owner);
}

/** The job's channel and owner, or undefined when unknown (or expired). */
export function jobOwner(id: string): JobOwner | undefined {
  return jobs.get(id);
}

/** Forgets every job (tests). */
export function clearJobs(): void {
  jobs.clear();
}
