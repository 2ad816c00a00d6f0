// Scaling a bar chart of exact amounts: lengths are worked out on BigInt nano-units, so a bar
// is never drawn from a float reading of money, and the labels stay the server's decimals.
import { parseNano } from "../../money.js";

/** The largest of `amounts` (exact decimals), "0" when there are none. */
export function largest(amounts: readonly string[]): string {
  let best = "0";
  let bestNano = 0n;
  for (const a of amounts) {
    const nano = parseNano(a);
    if (nano > bestNano) [best, bestNano] = [a, nano];
  }
  return best;
}

/** Each amount's bar length in whole units out of `full`: the largest gets `full`, the others
 * their share rounded to the nearest unit; a positive amount gets at least 1 unit, so spend
 * too small to draw is still seen. Zero and negative amounts get 0. */
export function barLengths(amounts: readonly string[], full: number): number[] {
  if (!Number.isInteger(full) || full < 1) throw new Error(`full must be a whole number of units, not ${full}`);
  const nanos = amounts.map(parseNano);
  const max = nanos.reduce((m, n) => (n > m ? n : m), 0n);
  if (max === 0n) return nanos.map(() => 0);
  const units = BigInt(full);
  return nanos.map((n) => {
    if (n <= 0n) return 0;
    const scaled = Number((n * units * 2n + max) / (max * 2n)); // rounded half up
    return Math.max(1, scaled);
  });
}
