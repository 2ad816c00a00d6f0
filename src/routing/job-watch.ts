// The gateway's own look at asynchronous jobs, for those nobody polls: each pending job is
// asked about upstream (with its channel's key, as a client's poll would be) on a backing-off
// schedule until it completes, fails or passes its TTL. Owned by the server: started in
// startGateway, stopped on drain; its timer never keeps the process alive.

import { log } from "../observability/log.js";
import { videoJobPath } from "../protocols/openai/video-status.js";
import { CredentialFailure } from "../providers/kind.js";
import type { RuntimeBox } from "../runtime/box.js";
import type { Channel } from "../runtime/types.js";
import { readAll } from "../upstream/exchanges/exchange.js";
import { answered, preparedGet } from "../upstream/kind-wire.js";
import { Cancellation, discard, send } from "../upstream/send.js";
import type { JobOutcomes } from "./job-outcomes.js";
import type { Jobs, RememberedJob } from "./jobs.js";
import type { KeyHealth } from "./key-health.js";
import { keyInRotation, noteCredentialFailure } from "./key-pick.js";
import type { KeyRotation } from "./keys.js";

/** When the background check looks at a job. */
export interface JobWatchTiming {
  /** From a job's creation to its first check, and the first gap between checks; the gap
   * then doubles. Default 30 s. */
  readonly firstCheckMs?: number;
  /** The longest gap between two checks of one job. Default 10 min. */
  readonly maxIntervalMs?: number;
}

export const DEFAULT_FIRST_CHECK_MS = 30_000;
export const DEFAULT_MAX_INTERVAL_MS = 10 * 60_000;
/** Checks in flight at once: a burst of due jobs must not become a burst upstream. */
const CONCURRENT_CHECKS = 4;
/** A status answer is a small JSON object; more than this is not one. */
const STATUS_BODY_LIMIT = 64 * 1024;
/** The longest delay a timer takes (a longer one would fire at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface JobWatchOptions {
  /** The live config: channels (and their keys) are looked up at each check. */
  readonly box: RuntimeBox;
  readonly outcomes: JobOutcomes;
  /** The jobs remembered (in the keyed store). */
  readonly jobs: Jobs;
  /** The server's key rotation: a check uses the channel's keys as a client's poll would. */
  readonly keys: KeyRotation;
  /** Keys out of rotation are skipped, as for a client's poll. */
  readonly keyHealth: KeyHealth;
  readonly timing?: JobWatchTiming;
}

/** When a job is next checked, and the gap after that. */
interface Schedule {
  due: number;
  gapMs: number;
}

export class JobWatch {
  readonly #box: RuntimeBox;
  readonly #outcomes: JobOutcomes;
  readonly #jobs: Jobs;
  readonly #keys: KeyRotation;
  readonly #keyHealth: KeyHealth;
  readonly #firstMs: number;
  readonly #maxMs: number;
  readonly #schedules = new Map<string, Schedule>();
  #timer: NodeJS.Timeout | undefined;
  #sweep: Promise<void> | undefined;
  /** One per check in flight, so stopping cancels only those (never a finished call). */
  readonly #inFlight = new Set<Cancellation>();
  #stopped = false;

  constructor(opts: JobWatchOptions) {
    this.#box = opts.box;
    this.#outcomes = opts.outcomes;
    this.#jobs = opts.jobs;
    this.#keys = opts.keys;
    this.#keyHealth = opts.keyHealth;
    this.#firstMs = Math.max(1, opts.timing?.firstCheckMs ?? DEFAULT_FIRST_CHECK_MS);
    this.#maxMs = Math.max(this.#firstMs, opts.timing?.maxIntervalMs ?? DEFAULT_MAX_INTERVAL_MS);
  }

  /** Starts looking; a sweep runs every first-check interval. */
  start(): void {
    if (this.#stopped || this.#timer) return;
    this.#arm();
  }

  /** Stops looking: no further sweep, checks in flight cancelled and waited for. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const cancel of this.#inFlight) cancel.cancel();
    await this.#sweep;
  }

  #arm(): void {
    this.#timer = setTimeout(() => {
      this.#sweep = this.#sweepOnce().finally(() => {
        this.#sweep = undefined;
        if (!this.#stopped) this.#arm();
      });
    }, Math.min(this.#firstMs, MAX_TIMER_MS));
    this.#timer.unref();
  }

  /** Checks every job that is due. Never rejects. */
  async #sweepOnce(): Promise<void> {
    try {
      const due = await this.#dueJobs(Date.now());
      let next = 0;
      const worker = async () => {
        while (next < due.length && !this.#stopped) await this.#check(due[next++]);
      };
      await Promise.all(Array.from({ length: Math.min(CONCURRENT_CHECKS, due.length) }, worker));
    } catch (err) {
      log.error("background job check failed", { error: String(err) });
    }
  }

  /** The pending jobs whose check is due; forgets the schedules of jobs gone or settled. */
  async #dueJobs(now: number): Promise<RememberedJob[]> {
    const due: RememberedJob[] = [];
    const pending = new Set<string>();
    for await (const job of this.#jobs.remembered()) {
      if (await this.#outcomes.isSettled(job.id)) continue;
      pending.add(job.id);
      let schedule = this.#schedules.get(job.id);
      if (!schedule) {
        schedule = { due: job.rememberedAt + this.#firstMs, gapMs: this.#firstMs };
        this.#schedules.set(job.id, schedule);
      }
      if (schedule.due <= now) due.push(job);
    }
    for (const id of this.#schedules.keys()) if (!pending.has(id)) this.#schedules.delete(id);
    return due;
  }

  /** Asks the upstream about one job and acts on the answer; failures wait for the next look. */
  async #check(job: RememberedJob): Promise<void> {
    const schedule = this.#schedules.get(job.id);
    if (schedule) {
      schedule.gapMs = Math.min(schedule.gapMs * 2, this.#maxMs);
      schedule.due = Date.now() + schedule.gapMs;
    }
    const runtime = this.#box.current;
    const channel = runtime.channels.get(job.channel);
    if (!channel || !channel.enabled) return; // maybe back after a reload: keep the schedule
    const cancel = new Cancellation();
    this.#inFlight.add(cancel);
    let key: string | undefined;
    try {
      key = await keyInRotation(this.#keys, this.#keyHealth, channel);
      const answer = await askUpstream(channel, key, job, runtime.server.upstreamTimeoutMs, cancel);
      if (answer) await this.#outcomes.observeAnswer(job, answer, "background");
    } catch (err) {
      if (err instanceof CredentialFailure && key !== undefined) await noteCredentialFailure(this.#keyHealth, channel, key, err);
      if (!cancel.aborted) log.warn("background job check failed", { job: job.id, channel: channel.name, error: String(err) });
    } finally {
      this.#inFlight.delete(cancel);
    }
  }
}

/** The job's status answer from its channel, through the channel's kind (its URL and
 * credentials), up to a size that fits one; undefined for an error status or a 404, which
 * say nothing of the job's fate. Rejects on transport failures, and with CredentialFailure
 * when the kind cannot make the key's credentials. */
async function askUpstream(channel: Channel, key: string, job: RememberedJob, timeoutMs: number, cancel: Cancellation): Promise<Buffer | undefined> {
  if (channel.protocol !== "openai") return undefined; // video jobs live on OpenAI-protocol channels
  const request = await preparedGet(channel, key, {
    path: videoJobPath(job.id), upstreamModel: channel.modelMap.get(job.model) ?? job.model,
    headers: { accept: "application/json", "accept-encoding": "identity" },
  });
  const upstream = answered(channel, await send({ method: "GET", url: request.url, headers: request.headers, timeoutMs, cancel }), request);
  if (upstream.status !== 200) {
    discard(upstream.body, true);
    return undefined;
  }
  return readAll(upstream.body, STATUS_BODY_LIMIT);
}
