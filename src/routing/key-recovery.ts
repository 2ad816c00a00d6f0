// The periodic probe of channels[].probe: every period, each key of the channel that is out
// of rotation by its cooldown (the provider refused it or said it is out of credit) gets
// the small real request of `gateway channels test` (upstream/channel-probe.ts); one that
// answers 2xx is put back at once rather than at its cooldown's end. Keys an operator took
// out are left alone. One task per serving process; on a shared store one gateway probes a
// channel per period (period-claim.ts). A probe is no request of the pipeline: no usage
// entry, nobody charged (the operator's account pays a few tokens).

import { log } from "../observability/log.js";
import { keyRecoveryProbesTotal } from "../observability/metrics.js";
import type { Channel, Runtime } from "../runtime/types.js";
import type { KeyedStore } from "../state/interfaces.js";
import { upstreamAgent } from "../upstream/agents.js";
import { probeKey } from "../upstream/channel-probe.js";
import type { KeyHealth } from "./key-health.js";
import { claimPeriod } from "./period-claim.js";

/** The longest one probe may take (further bounded by the period and server.upstream_timeout). */
const PROBE_TIMEOUT_MS = 30_000;
/** The longest between two looks at the config (a reload may add a probe). */
const TICK_MS = 1_000;
/** The most a gateway on a shared store waits, at random, before claiming a period. */
const CLAIM_SPREAD_MS = 250;

export interface KeyRecoveryOptions {
  readonly keyed: KeyedStore;
  readonly keyHealth: KeyHealth;
  /** The config in force (read at every tick: a reload's channels are probed by theirs). */
  readonly runtime: () => Runtime;
  /** The keyed store is shared by several gateways: claim each period first. */
  readonly shared: boolean;
}

export class KeyRecovery {
  readonly #opts: KeyRecoveryOptions;
  /** By channel name: the last period probed (or passed to another gateway). */
  readonly #periods = new Map<string, number>();
  /** By channel name: the round in flight. */
  readonly #rounds = new Map<string, Promise<void>>();
  readonly #stop = new AbortController();
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: KeyRecoveryOptions) {
    this.#opts = opts;
  }

  start(): void {
    if (!this.#stop.signal.aborted && !this.#timer) this.#tick();
  }

  /** No further round; probes in flight are cut short and waited for. */
  async stop(): Promise<void> {
    this.#stop.abort();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await Promise.all(this.#rounds.values());
  }

  #tick(): void {
    const now = Date.now();
    let nextMs = TICK_MS;
    for (const channel of this.#opts.runtime().channels.values()) {
      if (!channel.probe || !channel.enabled) continue;
      const { everyMs } = channel.probe;
      const period = Math.floor(now / everyMs);
      nextMs = Math.min(nextMs, (period + 1) * everyMs - now);
      if (this.#periods.get(channel.name) === period || this.#rounds.has(channel.name)) continue;
      this.#periods.set(channel.name, period);
      const round = this.#round(channel, period).catch((err: unknown) => {
        log.warn("channel key probe round failed", { channel: channel.name, error: String(err) });
      }).finally(() => this.#rounds.delete(channel.name));
      this.#rounds.set(channel.name, round);
    }
    if (this.#stop.signal.aborted) return;
    this.#timer = setTimeout(() => this.#tick(), Math.max(10, nextMs));
    this.#timer.unref(); // never holds a stopping process
  }

  /** Probes the channel's keys out by their cooldown, this period. */
  async #round(channel: Channel, period: number): Promise<void> {
    const { keyed, keyHealth, shared } = this.#opts;
    const signal = this.#stop.signal;
    const probe = channel.probe!;
    if (shared) {
      const held = await claimPeriod({ keyed, name: `keyprobe:${channel.name}:${period}`, ttlMs: probe.everyMs, spreadMs: CLAIM_SPREAD_MS, signal });
      if (!held) return;
    }
    const states = await keyHealth.states(channel);
    const timeoutMs = Math.min(PROBE_TIMEOUT_MS, probe.everyMs, this.#opts.runtime().server.upstreamTimeoutMs || PROBE_TIMEOUT_MS);
    for (const [index, state] of states.entries()) {
      if (!state.out || state.manual || signal.aborted) continue;
      const result = await probeKey(
        { channel, key: channel.keys[index], upstreamModel: probe.upstreamModel, mode: "plain", signal }, upstreamAgent(), timeoutMs);
      if (signal.aborted) return; // cut short by the stop: says nothing of the key
      const outcome = result.ok ? "recovered" : result.status === undefined ? "no_answer" : "failed";
      keyRecoveryProbesTotal.inc({ channel: channel.name, result: outcome });
      if (result.ok) {
        await keyHealth.clear(channel, index);
        log.info("a channel key out of rotation answered its probe; it is back", { channel: channel.name, key: state.fingerprint, wasOut: state.out.reason });
      } else {
        log.info("a channel key out of rotation still fails its probe; it stays out",
          { channel: channel.name, key: state.fingerprint, status: result.status, error: result.errorClass });
      }
    }
  }
}
