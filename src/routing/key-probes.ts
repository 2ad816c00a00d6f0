// Confirms a key fault that a provider states only in message text (Anthropic's credit and
// disabled-organization answers, xAI's invalid key: their keyFaults) with one small
// request of the gateway's own on that key: its body is ours, so the text in the answer is
// the provider's word, not an echo of a client's field. At most one probe per key is in flight
// in this process (every request that meets the suspicion meanwhile waits for that one),
// and a key probed is not probed again for `intervalMs` whatever the outcome: a client
// that makes the provider echo the text over and over costs at most one probe per key per
// interval. A probe is bounded by `timeoutMs` (head and body), is no request of the
// pipeline (no usage entry, no tenant charged) and is never cancelled by a client.

import { log } from "../observability/log.js";
import { keyProbesTotal } from "../observability/metrics.js";
import { keyFaultsOf } from "../providers/index.js";
import { judgeKeyFault, type KeyFault, type KeyProbe } from "../providers/provider.js";
import type { Channel } from "../runtime/types.js";
import { readAll } from "../upstream/exchanges/exchange.js";
import { answered, preparedProbe } from "../upstream/kind-wire.js";
import { Cancellation, discard, send } from "../upstream/send.js";

/** What the gateway makes of a probe's answer. */
type ProbeOutcome = "confirmed" | "healthy" | "inconclusive";

/** One key's latest probe: when it started and what it found (pending while in flight). */
interface Probed {
  readonly at: number;
  readonly fault: Promise<KeyFault | undefined>;
}

/** The most of a probe's answer read (an error body is small; a 1-token answer too). */
const PROBE_BODY_LIMIT = 64 * 1024;
/** Entries kept before the old ones are swept (keys are bounded by the config anyway). */
const SWEEP_AT = 1024;

/** The suspected key: the channel, the key's index in it and its fingerprint, and the model to probe with. */
export interface Suspect {
  readonly channel: Channel;
  readonly index: number;
  readonly fingerprint: string;
  readonly upstreamModel: string;
  readonly fault: KeyFault;
}

export class KeyProbes {
  /** By channel name and key fingerprint (never the key). */
  readonly #byKey = new Map<string, Probed>();
  readonly #intervalMs: number;
  readonly #timeoutMs: number;

  /** @param intervalMs least time between two probes of one key; @param timeoutMs longest a probe may take */
  constructor({ intervalMs = 60_000, timeoutMs = 10_000 }: { readonly intervalMs?: number; readonly timeoutMs?: number } = {}) {
    this.#intervalMs = intervalMs;
    this.#timeoutMs = Math.min(timeoutMs, intervalMs);
  }

  /** The fault the provider shows on a probe of the suspected key; undefined when it does
   * not (the key answered, or the probe told nothing), or when the provider has no probe. */
  confirm(suspect: Suspect, now = Date.now()): Promise<KeyFault | undefined> {
    const probe = keyFaultsOf(suspect.channel).probe;
    if (!probe) return Promise.resolve(undefined);
    const id = `${suspect.channel.name}\n${suspect.fingerprint}`;
    const seen = this.#byKey.get(id);
    // In flight, or probed within the interval: that probe's finding stands.
    if (seen && now - seen.at < this.#intervalMs) return seen.fault;
    if (this.#byKey.size >= SWEEP_AT) this.#sweep(now);
    const fault = this.#probe(suspect, probe);
    this.#byKey.set(id, { at: now, fault });
    return fault;
  }

  async #probe(suspect: Suspect, probe: KeyProbe): Promise<KeyFault | undefined> {
    const { channel, index, upstreamModel } = suspect;
    const request = probe.request(upstreamModel);
    const body = Buffer.from(request.body);
    const cancel = new Cancellation();
    const deadline = setTimeout(() => cancel.cancel(), this.#timeoutMs);
    deadline.unref(); // a probe never holds a stopping process
    let outcome: ProbeOutcome = "inconclusive";
    let fault: KeyFault | undefined;
    try {
      const key = channel.keys[index];
      // As an attempt goes: the first-party request, made the channel kind's own.
      const wire = await preparedProbe(channel, key, { path: request.path, headers: request.headers, body, upstreamModel, stream: false });
      const upstream = answered(channel, await send({ url: wire.url, body: wire.body, headers: wire.headers, timeoutMs: this.#timeoutMs, cancel }), wire);
      if (upstream.status < 300) {
        discard(upstream.body, true);
        outcome = "healthy";
      } else {
        const text = (await readAll(upstream.body, PROBE_BODY_LIMIT)).toString("utf8");
        // A fault shown on our own body, stated in fields or in text, is the provider's word.
        fault = judgeKeyFault(keyFaultsOf(channel), upstream.status, text)?.fault;
        if (fault !== undefined) outcome = "confirmed";
      }
    } catch {
      // Unreachable or too slow: nothing shown, the key stays.
    } finally {
      clearTimeout(deadline);
    }
    keyProbesTotal.inc({ channel: channel.name, outcome });
    if (outcome !== "confirmed") {
      log.info("a key fault named only in an error message was not confirmed by the gateway's own probe; the key stays in rotation",
        { channel: channel.name, key: suspect.fingerprint, suspected: suspect.fault, outcome });
    }
    return fault;
  }

  #sweep(now: number): void {
    for (const [id, probed] of this.#byKey) if (now - probed.at >= this.#intervalMs) this.#byKey.delete(id);
  }
}
