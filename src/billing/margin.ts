// The margin of a spend row: revenue (what was charged), cost to the operator, margin and
// margin %, exact in nano-units; unknown (never 0) while some charged request of the row
// recorded no cost to the operator.

/** The money of a spend row (state/store.ts SpendRow has it). */
export interface SpendMoney {
  /** What was charged and not refunded. */
  readonly costNano: bigint;
  readonly channelCostNano: bigint;
  /** Charged requests that recorded no cost to the operator. */
  readonly channelCostUnknown: number;
}

/** A row's money: revenue (what was charged), its cost to the operator and the margin, each
 * undefined while some charged request recorded no cost (then it is unknown, not 0). */
export interface Margin {
  readonly revenueNano: bigint;
  readonly costNano?: bigint;
  readonly marginNano?: bigint;
  /** The margin as a percentage of revenue, rounded half away from zero to 2 decimals, as
   * hundredths; undefined also when there was no revenue. */
  readonly marginHundredths?: bigint;
}

export function marginOf(row: SpendMoney): Margin {
  const revenueNano = row.costNano;
  if (row.channelCostUnknown > 0) return { revenueNano };
  const marginNano = revenueNano - row.channelCostNano;
  if (revenueNano === 0n) return { revenueNano, costNano: row.channelCostNano, marginNano };
  const scaled = marginNano * 10_000n;
  const half = revenueNano / 2n;
  const marginHundredths = (scaled >= 0n ? scaled + half : scaled - half) / revenueNano;
  return { revenueNano, costNano: row.channelCostNano, marginNano, marginHundredths };
}

/** Hundredths as a fixed two-decimal text: 3333n → "33.33", -5n → "-0.05". */
export function percentText(hundredths: bigint): string {
  const abs = hundredths < 0n ? -hundredths : hundredths;
  return `${hundredths < 0n ? "-" : ""}${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`;
}
