// The charge of each response and transcription of a realtime session, as its own usage-log
// entry: the response's reservation settled with its cost and the entry appended
// (commitCharge, as the settle stage does for a request), both awaited, so the event that reports the usage is
// relayed to the client only once its charge is durable (it survives kill -9). Entries of a
// session are named after its request id: `<id>-r<n>` for responses, `<id>-t<n>` for
// input transcriptions.

import { encodeBreakdown } from "../billing/breakdown.js";
import { operatorCost, priceUsage } from "../billing/cost.js";
import type { Usage } from "../protocols/usage.js";
import type { ChannelCost, Price } from "../runtime/types.js";
import type { LimitHolds, Reservation } from "../state/interfaces.js";
import type { UsageEntry } from "../state/store.js";
import { commitCharge, type Ledger } from "./commit-charge.js";
import { billable } from "./realtime-meter.js";
import type { PriceFallbacks } from "./price-fallbacks.js";

/** What every entry of the session shares (whose, which model and channel). */
export type SessionEntryBase = Pick<UsageEntry,
  "token" | "user" | "group" | "model" | "upstreamModel" | "channel" | "key" | "inboundProtocol" | "upstreamProtocol">;

/** One response's or transcription's charge. */
export interface ChargePart {
  /** Its entry's request id. */
  readonly id: string;
  /** The response's admission, settled by this charge (none for a transcription). */
  readonly reservation?: Reservation;
  readonly holds?: LimitHolds;
  readonly usage: Usage;
  /** Seconds of duration-billed transcription audio. */
  readonly seconds: number;
  readonly estimated: boolean;
  /** Epoch ms the response started (or the transcription was reported). */
  readonly startedAt: number;
}

export interface RealtimeChargesOptions extends Ledger {
  readonly base: SessionEntryBase;
  readonly price: Price;
  readonly multiplierPpm: bigint;
  /** What the session's channel costs the operator (channels[].cost). */
  readonly channelCost?: ChannelCost;
  /** Warns once per model about components billed at a base price. */
  readonly priceFallbacks?: PriceFallbacks;
}

export class RealtimeCharges {
  readonly #o: RealtimeChargesOptions;

  constructor(opts: RealtimeChargesOptions) {
    this.#o = opts;
  }

  /**
   * Settles the part's reservation with its cost and appends its entry; resolves once both
   * are done, rejects with the state failure (a 503 naming the part) when either fails. The
   * session's per-request price is its own entry's: these are priced by usage alone.
   */
  async commit(part: ChargePart): Promise<UsageEntry> {
    const { base, price, multiplierPpm } = this.#o;
    const billed = billable(part.usage, part.seconds, price);
    const units = { ...billed.units, requests: 0 };
    const priced = priceUsage(billed.usage, price, multiplierPpm, units);
    const costNano = priced.costNano;
    if (priced.fallbacks) this.#o.priceFallbacks?.note(base.model, priced.fallbacks);
    const now = Date.now();
    const entry: UsageEntry = {
      ...base, requestId: part.id, time: part.startedAt, usage: billed.usage, costNano, status: 200,
      breakdown: encodeBreakdown(priced), channelCostNano: operatorCost(billed.usage, price, base.model, this.#o.channelCost, units, priced),
      durationMs: now - part.startedAt, estimated: part.estimated || billed.estimated,
    };
    await commitCharge(this.#o, part, entry, 1);
    return entry;
  }
}
